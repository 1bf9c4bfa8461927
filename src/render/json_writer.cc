// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/json_writer.h"

#include <fmt/format.h>

namespace cpprof::render {

JsonWriter::JsonWriter(std::string& out)
    : out_(out),
      serializer_(std::make_unique<nlohmann::detail::serializer<Json>>(
          nlohmann::detail::output_adapter<char, std::string>(scratch_), ' ',
          nlohmann::json::error_handler_t::replace)) {}

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  if (!first_.back()) out_ += ',';
  first_.back() = false;
}

void JsonWriter::Open(char bracket) {
  Separate();
  out_ += bracket;
  first_.push_back(true);
}

void JsonWriter::Close(char bracket) {
  out_ += bracket;
  first_.pop_back();
}

void JsonWriter::Key(std::string_view key) {
  Separate();
  out_ += '"';
  out_ += key;
  out_ += "\":";
  after_key_ = true;
}

namespace {

// Whether nlohmann writes `v` unchanged between quotes: printable ASCII without '"' and '\\'
// (it escapes only those, control characters, and bytes of multi-byte or invalid UTF-8).
bool PlainAscii(std::string_view v) {
  bool plain = true;
  for (unsigned char c : v) plain &= c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
  return plain;
}

}  // namespace

void JsonWriter::AppendString(std::string_view v, std::string& out) {
  if (PlainAscii(v)) {
    out += '"';
    out += v;
    out += '"';
    return;
  }
  scratch_.clear();
  serializer_->dump(Json(std::string(v)), false, false, 0);
  out += scratch_;
}

std::string JsonWriter::EscapedString(std::string_view v) {
  std::string s;
  AppendString(v, s);
  return s;
}

void JsonWriter::String(std::string_view v) {
  Separate();
  AppendString(v, out_);
}

void JsonWriter::RawString(std::string_view escaped) {
  Separate();
  out_ += escaped;
}

void JsonWriter::Int(int64_t v) {
  Separate();
  fmt::format_int f(v);
  out_.append(f.data(), f.size());
}

void JsonWriter::UInt(uint64_t v) {
  Separate();
  fmt::format_int f(v);
  out_.append(f.data(), f.size());
}

void JsonWriter::Double(double v) {
  Separate();
  scratch_.clear();
  serializer_->dump(Json(v), false, false, 0);
  out_ += scratch_;
}

void JsonWriter::Thousandths(int64_t n) {
  // n / 1000 has at most 15 significant digits below 10^15, so its shortest round-trip form (what
  // nlohmann prints) is the decimal itself, trailing zeros trimmed, in fixed notation.
  if (n < 0 || n >= 1'000'000'000'000'000) return Double(static_cast<double>(n) / 1000.0);
  Separate();
  int64_t whole = n / 1000, frac = n % 1000;
  fmt::format_int f(whole);
  out_.append(f.data(), f.size());
  if (frac == 0) {
    out_ += ".0";
    return;
  }
  char digits[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                    static_cast<char>('0' + frac % 10)};
  size_t len = 4;
  while (digits[len - 1] == '0') --len;
  out_.append(digits, len);
}

void JsonWriter::Bool(bool v) {
  Separate();
  out_ += v ? "true" : "false";
}

void JsonWriter::Value(const Json& v) {
  Separate();
  scratch_.clear();
  serializer_->dump(v, false, false, 0);
  out_ += scratch_;
}

}  // namespace cpprof::render
