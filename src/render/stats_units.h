// `cpprof stats --timeunit`: nsys's time-unit option. A report's time columns are the ones whose
// header ends in "(ns)"; another unit renames them ("Total Time (ns)" -> "Total Time (us)") and
// shifts their values by powers of ten, printed with nsys's fixed decimals, as `nsys stats
// --timeunit` does.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/stats_table.h"

namespace cpprof::render {

enum class TimeUnit { kNsec, kUsec, kMsec, kSec };

// nsys's longest-prefix matching over "nsec nanoseconds usec microseconds msec milliseconds
// seconds": "us", "usec", "micro", "ms", "milli", "s", "sec", "seconds", "n", "nsec". Ambiguous
// ("m", "mi") or unknown text: nullopt.
std::optional<TimeUnit> ParseTimeUnit(std::string_view text);
const char* TimeUnitSuffix(TimeUnit u);  // "ns", "us", "ms", "sec" (as nsys's headers)
int TimeUnitDigits(TimeUnit u);          // 0, 3, 6, 9: how many decimal places ns values move

// `cell` (a number as the report printed it: "31123908", "160432.5", "nan") divided by
// 10^digits and printed as nsys does: 3 decimals in us ("31123.908", "160.433"), 4 in ms and s
// ("31.1239", "0.0311"); anything that is not a plain decimal ("nan", "") is kept.
// `exact`: the cell is exact (a sum, min, max or median of integer ns): rounded half up in
// decimal; else (a mean or deviation the report rounded) through a double.
std::string ShiftDecimal(std::string_view cell, int digits, bool exact = true);

// Renames and converts `t`'s "(ns)" columns to `u` (rows, and lazy rows as they are made).
// kNsec leaves the table as it is.
void ApplyTimeUnit(model::StatsTable& t, TimeUnit u);

}  // namespace cpprof::render
