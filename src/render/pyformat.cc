// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/pyformat.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace cpprof::render {

std::string PyRepr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  // Shortest round-trip digits, as d.ddddde[+-]XX.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string_view s(buf, static_cast<size_t>(res.ptr - buf));
  bool neg = s.front() == '-';
  if (neg) s.remove_prefix(1);
  size_t e = s.find('e');
  std::string digits;
  for (char c : s.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exp10 = std::atoi(std::string(s.substr(e + 1)).c_str());
  int decpt = exp10 + 1;  // digits d1d2... with the point after decpt digits
  std::string out = neg ? "-" : "";
  // Python's 'r' format: fixed notation when -4 < decpt <= 16, else exponent.
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
    } else if (static_cast<size_t>(decpt) >= digits.size()) {
      out += digits + std::string(static_cast<size_t>(decpt) - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(static_cast<size_t>(decpt));
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exp10 < 0 ? '-' : '+', std::abs(exp10));
  }
  return out;
}

std::string PyRound1(double x) {
  if (!std::isfinite(x) || std::fabs(x) >= 1e15) return PyRepr(x);
  // x * 10 is exact in long double (64-bit significand) for |x| < 1e15, so ties are seen exactly.
  long double scaled = static_cast<long double>(x) * 10.0L;
  long double r = scaled < 0 ? -std::floor(-scaled + 0.5L) : std::floor(scaled + 0.5L);
  auto n = static_cast<long long>(r);
  if (n == 0) return std::signbit(x) ? "-0.0" : "0.0";
  bool neg = n < 0;
  unsigned long long a = neg ? static_cast<unsigned long long>(-n) : static_cast<unsigned long long>(n);
  // The decimal string is what SQLite hands back (as the nearest double) and what repr() prints
  // for a value of at most 16 significant digits.
  return fmt::format("{}{}.{}", neg ? "-" : "", a / 10, a % 10);
}

std::string MegabytesFixed3(double bytes) { return fmt::format("{:.3f}", bytes / 1e6); }

}  // namespace cpprof::render
