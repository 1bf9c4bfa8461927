// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
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

// `cell` (a number as the report printed it in ns: "31123908", "160432.5", "nan") in the unit
// 10^digits ns, printed as nsys prints it: the value as a double times 1e-3, 1e-6 or 1e-9, with 3
// decimals in us ("31123.908", "160.433") and 4 in ms and s ("31.1239", "0.0311"); anything that
// is not a plain decimal ("nan", "") is kept.
std::string ShiftDecimal(std::string_view cell, int digits);

// Renames and converts `t`'s "(ns)" columns to `u` (rows, and lazy rows as they are made).
// kNsec leaves the table as it is.
void ApplyTimeUnit(model::StatsTable& t, TimeUnit u);

}  // namespace cpprof::render
