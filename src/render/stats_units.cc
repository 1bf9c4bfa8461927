#include "render/stats_units.h"

#include <array>
#include <cctype>
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
      return "s";
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
  std::string_view s = cell;
  std::string sign;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    if (s[0] == '-') sign = "-";
    s.remove_prefix(1);
  }
  size_t dot = s.find('.');
  std::string_view int_part = s.substr(0, dot);
  std::string_view frac_part = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  // Only plain decimals move; anything else ("nan", "inf", "1e+16", "") is kept as printed.
  if (int_part.empty() && frac_part.empty()) return std::string(cell);
  for (std::string_view part : {int_part, frac_part}) {
    for (char c : part) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::string(cell);
    }
  }
  std::string digits_all = std::string(int_part) + std::string(frac_part);
  long point = static_cast<long>(int_part.size()) - digits;  // the new position of the point
  std::string ip, fp;
  if (point <= 0) {
    ip = "0";
    fp = std::string(static_cast<size_t>(-point), '0') + digits_all;
  } else {
    ip = digits_all.substr(0, static_cast<size_t>(point));
    fp = digits_all.substr(static_cast<size_t>(point));
  }
  size_t nz = ip.find_first_not_of('0');
  ip = nz == std::string::npos ? "0" : ip.substr(nz);
  while (fp.size() > 1 && fp.back() == '0') fp.pop_back();
  if (fp.empty()) fp = "0";
  return sign + ip + "." + fp;
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
