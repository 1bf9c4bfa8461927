// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/stats_units.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
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

std::string ShiftDecimal(std::string_view cell, int digits) {
  if (digits == 0) return std::string(cell);
  // Only plain decimals move; anything else ("nan", "inf", "1e+16", "") is kept as printed.
  std::string_view s = cell;
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
  // What nsys 2025.3.1 does, measured on every cell of 30 reports (tools/device/
  // stats_options_golden.sh; tests/data/real/*/*-{usec,msec,sec}_*.csv): the value it prints in
  // ns (a mean or deviation already rounded to 0.1 ns) as a double, times the unit's factor as a
  // double (1e-3, not a division by 1000: the two differ in the last bit), printed correctly
  // rounded with 3 decimals in us and 4 in ms and s. So 1610403350 ns is "1610.4033" ms (the
  // double is just below the half) and a mean of 3882.5 ns is "3.883" us.
  const double factor = digits == 3 ? 1e-3 : digits == 6 ? 1e-6 : 1e-9;
  const int decimals = digits == 3 ? 3 : 4;
  const double value = std::strtod(std::string(cell).c_str(), nullptr) * factor;
  return fmt::format("{:.{}f}", value, decimals);
}

void ApplyTimeUnit(model::StatsTable& t, TimeUnit u) {
  const int digits = TimeUnitDigits(u);
  if (digits == 0) return;
  std::vector<size_t> time_cols;
  const std::string from = " (ns)", to = std::string(" (") + TimeUnitSuffix(u) + ")";
  for (size_t c = 0; c < t.columns.size(); ++c) {
    std::string& h = t.columns[c].header;
    if (t.columns[c].numeric && h.size() >= from.size() && h.compare(h.size() - from.size(), from.size(), from) == 0) {
      h.replace(h.size() - from.size(), from.size(), to);
      time_cols.push_back(c);
    }
  }
  if (time_cols.empty()) return;
  for (auto& row : t.rows) {
    for (size_t c : time_cols) {
      if (c < row.size()) row[c] = ShiftDecimal(row[c], digits);
    }
  }
  if (t.lazy_row) {
    t.lazy_row = [inner = std::move(t.lazy_row), time_cols, digits](size_t i, std::vector<std::string>& cells) {
      inner(i, cells);
      for (size_t c : time_cols) {
        if (c < cells.size()) cells[c] = ShiftDecimal(cells[c], digits);
      }
    };
  }
}

}  // namespace cpprof::render
