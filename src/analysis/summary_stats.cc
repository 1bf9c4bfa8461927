// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/summary_stats.h"

#include <algorithm>
#include <cmath>

namespace cpprof::analysis {

namespace {

// Running totals and Welford's variance, fed in table order.
class Accumulator {
 public:
  void Add(int64_t v) {
    if (s_.count == 0) s_.min = s_.max = v;
    // Saturates rather than wrapping (a damaged export's 2^62 ns kernels must not sum to a small number).
    if (__builtin_add_overflow(s_.total, v, &s_.total)) s_.total = v > 0 ? INT64_MAX : INT64_MIN;
    s_.min = std::min(s_.min, v);
    s_.max = std::max(s_.max, v);
    ++s_.count;
    double x = static_cast<double>(v);
    double delta = x - mean_;
    mean_ += delta / static_cast<double>(s_.count);
    m2_ += delta * (x - mean_);
  }
  // `v` taken `times` times: one by one up to kExactRepeats, else merged in one step.
  void AddRepeated(int64_t v, int64_t times) {
    if (times <= kExactRepeats) {
      for (int64_t i = 0; i < times; ++i) Add(v);
      return;
    }
    if (s_.count == 0) s_.min = s_.max = v;
    __extension__ __int128 sum = static_cast<__int128>(v) * times + s_.total;  // GCC's, exact
    s_.total = sum > INT64_MAX ? INT64_MAX : sum < INT64_MIN ? INT64_MIN : static_cast<int64_t>(sum);
    s_.min = std::min(s_.min, v);
    s_.max = std::max(s_.max, v);
    const double n_a = static_cast<double>(s_.count), n_b = static_cast<double>(times);
    const double delta = static_cast<double>(v) - mean_;
    s_.count += times;
    const double n = static_cast<double>(s_.count);
    mean_ += delta * n_b / n;
    m2_ += delta * delta * n_a * n_b / n;
  }
  Summary Finish() const {
    Summary s = s_;
    if (s.count == 0) return s;
    s.mean = static_cast<double>(s.total) / static_cast<double>(s.count);
    s.stdev = s.count > 1 ? std::sqrt(m2_ / static_cast<double>(s.count - 1)) : 0.0;
    return s;
  }

 private:
  Summary s_;
  double mean_ = 0, m2_ = 0;
};

}  // namespace

Summary Summarize(std::vector<int64_t>& values) {
  Accumulator acc;
  for (int64_t v : values) acc.Add(v);
  Summary s = acc.Finish();
  if (!values.empty()) s.median = MedianInPlace(values);
  return s;
}

Summary SummarizeRepeated(std::vector<std::pair<int64_t, int64_t>>& value_times) {
  Accumulator acc;
  int64_t n = 0;
  for (const auto& [v, times] : value_times) {
    acc.AddRepeated(v, times);
    n += times;
  }
  Summary s = acc.Finish();
  if (n == 0) return s;
  // The median of the expanded list: its middle value(s) by value.
  std::sort(value_times.begin(), value_times.end());
  auto at = [&](int64_t i) {  // the i-th smallest of the expanded list
    for (const auto& [v, times] : value_times) {
      if (i < times) return v;
      i -= times;
    }
    return value_times.back().first;
  };
  const double hi = static_cast<double>(at(n / 2));
  s.median = n % 2 == 1 ? hi : (static_cast<double>(at(n / 2 - 1)) + hi) / 2.0;
  return s;
}

Summary Summarize(const model::ChunkedVector<int64_t>& values, std::vector<int64_t>& scratch) {
  Accumulator acc;
  scratch.clear();
  for (size_t c = 0; c < values.num_chunks(); ++c) {
    for (int64_t v : values.chunk(c)) {
      acc.Add(v);
      scratch.push_back(v);
    }
  }
  Summary s = acc.Finish();
  if (!scratch.empty()) s.median = MedianInPlace(scratch);
  return s;
}

}  // namespace cpprof::analysis
