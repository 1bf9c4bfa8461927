// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A half-open time interval [start, end) in nanoseconds.
#pragma once

#include <cstdint>
#include <vector>

namespace cpprof::model {

struct Interval {
  int64_t start = 0;
  int64_t end = 0;
  int64_t length() const { return end > start ? end - start : 0; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

// Sorted, disjoint, non-touching intervals.
using Segments = std::vector<Interval>;

}  // namespace cpprof::model
