// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// nvtx_gpu_proj_sum's totals per group of ranges (besides its projections), kept small: a 10 GB
// export has six million groups.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>

#include "base/saturating.h"

namespace cpprof::pipeline {

// Per sweep group, besides its (seq, projection) values.
struct GroupTotals {
  int64_t range_time = 0, launches = 0, level_sum = 0, children = 0, levels = 0;
  GroupTotals& operator+=(const GroupTotals& o) {
    SatAdd(range_time, o.range_time);
    launches += o.launches, level_sum += o.level_sum, children += o.children, levels += o.levels;
    return *this;
  }
};

// The totals of each projected group in 24 bytes (six million groups at 10 GB): the counts in 32
// bits, and a group whose count would pass that (four billion launches: no export of today's
// sizes) moved whole to a side table.
class GroupTotalsList {
 public:
  uint32_t New() {
    narrow_.emplace_back();
    return static_cast<uint32_t>(narrow_.size() - 1);
  }
  size_t size() const { return narrow_.size(); }
  void Add(uint32_t d, const GroupTotals& t) {
    Narrow& n = narrow_[d];
    if (n.levels != kWide && Fits(n.launches, t.launches) && Fits(n.level_sum, t.level_sum) &&
        Fits(n.children, t.children) && Fits(n.levels, t.levels)) {
      SatAdd(n.range_time, t.range_time);
      n.launches += static_cast<uint32_t>(t.launches), n.level_sum += static_cast<uint32_t>(t.level_sum);
      n.children += static_cast<uint32_t>(t.children), n.levels += static_cast<uint32_t>(t.levels);
      return;
    }
    if (n.levels != kWide) wide_[d] = Get(d), n.levels = kWide;
    wide_[d] += t;
  }
  GroupTotals Get(uint32_t d) const {
    const Narrow& n = narrow_[d];
    if (n.levels == kWide) return wide_.at(d);
    return {n.range_time, n.launches, n.level_sum, n.children, n.levels};
  }

 private:
  static constexpr uint32_t kWide = UINT32_MAX;  // in `levels`: the group is in wide_
  static bool Fits(uint32_t have, int64_t add) {
    return add >= 0 && static_cast<uint64_t>(have) + static_cast<uint64_t>(add) < kWide;
  }
  struct Narrow {
    int64_t range_time = 0;
    uint32_t launches = 0, level_sum = 0, children = 0, levels = 0;
  };
  std::deque<Narrow> narrow_;
  std::unordered_map<uint32_t, GroupTotals> wide_;
};

}  // namespace cpprof::pipeline
