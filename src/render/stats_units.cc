#include "render/stats_units.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

namespace cpprof::render {

std::optional<TimeUnit> ParseTimeUnit(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, TimeUnit>, 7> kNames = {{
      {"nsec", TimeUnit::kNsec},
      {"nanoseconds", TimeUnit::kNsec},
      {"usec", TimeUnit::kUsec},
      {"microseconds", TimeUnit::kUsec},
      {"msec", TimeUnit::kMsec},
      {"milliseconds", TimeUnit::kMsec},
      {"seconds", TimeUnit::kSec},
  }};
  if (text.empty()) return std::nullopt;
  std::optional<TimeUnit> found;
  for (const auto& [name, unit] : kNames) {
    if (name.substr(0, text.size()) != text) continue;
    if (found && *found != unit) return std::nullopt;  // "m": msec or microseconds
    found = unit;
  }
  return found;
}

const char* TimeUnitSuffix(TimeUnit u) {
  switch (u) {
    case TimeUnit::kNsec:
      return "ns";
    case TimeUnit::kUsec:
      return "us";
    case TimeUnit::kMsec:
      return "ms";
    case TimeUnit::kSec:
      return "sec";
  }
  return "ns";
}

int TimeUnitDigits(TimeUnit u) {
  switch (u) {
    case TimeUnit::kNsec:
      return 0;
    case TimeUnit::kUsec:
      return 3;
    case TimeUnit::kMsec:
      return 6;
    case TimeUnit::kSec:
      return 9;
  }
  return 0;
}

std::string ShiftDecimal(std::string_view cell, int digits, bool exact) {
  if (digits == 0) return std::string(cell);
  // Only plain decimals move; anything else ("nan", "inf", "1e+16", "") is kept as printed.
  std::string_view s = cell;
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  size_t dot = s.find('.');
  std::string_view int_part = s.substr(0, dot);
  std::string_view frac_part = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  if (int_part.empty() && frac_part.empty()) return std::string(cell);
  for (std::string_view part : {int_part, frac_part}) {
    for (char c : part) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::string(cell);
    }
  }
  // nsys prints converted times with a fixed number of decimals: 3 in us, 4 in ms and s
  // (measured on nsys 2025.3.1: tests/data/real/*/*-usec_*.csv).
  const int decimals = digits == 3 ? 3 : 4;
  if (!exact) {
    // A mean or deviation the report already rounded: from the value as a double, as nsys's own
    // (unrounded) value would mostly give.
    const double value = std::strtod(std::string(cell).c_str(), nullptr) / std::pow(10.0, digits);
    return fmt::format("{:.{}f}", value, decimals);
  }
  // An exact value (a sum, minimum, maximum or median of integers): the decimal point moved,
  // then rounded half up to the decimals, in decimal digits.
  std::string all = std::string(int_part) + std::string(frac_part);
  long point = static_cast<long>(int_part.size()) - digits;  // digits before the new point
  if (point < 1) {
    all.insert(0, static_cast<size_t>(1 - point), '0');
    point = 1;
  }
  const size_t keep = static_cast<size_t>(point) + static_cast<size_t>(decimals);
  if (all.size() < keep) all.append(keep - all.size(), '0');
  bool up = all.size() > keep && all[keep] >= '5';
  all.resize(keep);
  if (up) {
    size_t i = all.size();
    while (i > 0 && all[i - 1] == '9') all[--i] = '0';
    if (i == 0) {
      all.insert(0, "1");
      ++point;
    } else {
      ++all[i - 1];
    }
  }
  std::string ip = all.substr(0, static_cast<size_t>(point)), fp = all.substr(static_cast<size_t>(point));
  size_t nz = ip.find_first_not_of('0');
  ip = nz == std::string::npos ? "0" : ip.substr(nz);
  return (negative ? "-" : "") + ip + "." + fp;
}

void ApplyTimeUnit(model::StatsTable& t, TimeUnit u) {
  const int digits = TimeUnitDigits(u);
  if (digits == 0) return;
  std::vector<size_t> time_cols;
  std::vector<bool> exact;  // per time column: not a mean or a deviation (which the report rounded)
  const std::string from = " (ns)", to = std::string(" (") + TimeUnitSuffix(u) + ")";
  for (size_t c = 0; c < t.columns.size(); ++c) {
    std::string& h = t.columns[c].header;
    if (t.columns[c].numeric && h.size() >= from.size() && h.compare(h.size() - from.size(), from.size(), from) == 0) {
      exact.push_back(h.rfind("Avg", 0) != 0 && h.rfind("StdDev", 0) != 0);
      h.replace(h.size() - from.size(), from.size(), to);
      time_cols.push_back(c);
    }
  }
  if (time_cols.empty()) return;
  for (auto& row : t.rows) {
    for (size_t k = 0; k < time_cols.size(); ++k) {
      if (time_cols[k] < row.size()) row[time_cols[k]] = ShiftDecimal(row[time_cols[k]], digits, exact[k]);
    }
  }
  if (t.lazy_row) {
    t.lazy_row = [inner = std::move(t.lazy_row), time_cols, exact, digits](size_t i, std::vector<std::string>& cells) {
      inner(i, cells);
      for (size_t k = 0; k < time_cols.size(); ++k) {
        if (time_cols[k] < cells.size()) cells[time_cols[k]] = ShiftDecimal(cells[time_cols[k]], digits, exact[k]);
      }
    };
  }
}

}  // namespace cpprof::render
