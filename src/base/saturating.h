// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Sums of durations that saturate instead of wrapping. Each kept time is below 2^62 ns (see
// nsys::kMaxTimestampNs), so one difference fits int64, but the sum of many durations of a damaged
// export does not: it stops at INT64_MAX (or INT64_MIN), which the outputs show as a huge number
// rather than a small wrong one.
#pragma once

#include <cstdint>
#include <limits>

namespace cpprof {

inline void SatAdd(int64_t& acc, int64_t v) {
  if (__builtin_add_overflow(acc, v, &acc)) {
    acc = v > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
}

// a + b, saturated as SatAdd.
inline int64_t SatSum(int64_t a, int64_t b) {
  SatAdd(a, b);
  return a;
}

}  // namespace cpprof
