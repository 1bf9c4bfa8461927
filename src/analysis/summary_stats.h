// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The statistics nsys's summary reports print per group: total, count, mean, median, min, max,
// sample standard deviation. Computed the way nsys's SQLite functions compute them so that the
// rounded values match (mean = double(sum)/count; median = middle value or the mean of the two
// middle values; stdev = Welford's running variance over the rows in table order, 0 for one row).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "model/gpu_work.h"

namespace cpprof::analysis {

struct Summary {
  int64_t total = 0;
  int64_t count = 0;
  int64_t min = 0;
  int64_t max = 0;
  double mean = 0;
  double median = 0;
  double stdev = 0;
};

// `values` in table order; reordered (partially sorted) on return.
Summary Summarize(std::vector<int64_t>& values);

// The middle value, or the mean of the two middle values (as nsys computes it); `values` (not
// empty) is partially sorted on return.
template <typename T>
double MedianInPlace(std::vector<T>& values) {
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  const double hi = static_cast<double>(*mid);
  if (values.size() % 2 == 1) return hi;
  return (static_cast<double>(*std::max_element(values.begin(), mid)) + hi) / 2.0;
}

// The same over values each taken `times` times in a row ((value, times) pairs in table order,
// times >= 1): the summary of the expanded list, without expanding it. A run of up to
// kExactRepeats equal values is fed one by one as Summarize feeds it (the same rounding); a longer
// run is added in one step (Chan's combination: equal to within the last bits of the variance).
inline constexpr int64_t kExactRepeats = 64;
Summary SummarizeRepeated(std::vector<std::pair<int64_t, int64_t>>& value_times);

// The same over chunked values; `scratch` is reused between calls for the median.
Summary Summarize(const model::ChunkedVector<int64_t>& values, std::vector<int64_t>& scratch);

}  // namespace cpprof::analysis
