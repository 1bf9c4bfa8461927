// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/clock_align.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace cpprof::analysis {

namespace {

using model::OpClass;

int64_t Median(std::vector<int64_t> v) {
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

int64_t MedianDistance(const std::vector<int64_t>& v, int64_t center) {
  std::vector<int64_t> d;
  d.reserve(v.size());
  for (int64_t x : v) d.push_back(x > center ? x - center : center - x);
  return Median(std::move(d));
}

// Per process and collective kind: the ends in start order.
using Ends = std::map<std::pair<int64_t, OpClass>, std::vector<int64_t>>;

Ends CollectiveEnds(const std::vector<model::CommOpTime>& comm, int64_t shift) {
  std::map<std::pair<int64_t, OpClass>, std::vector<std::pair<int64_t, int64_t>>> by;
  for (const auto& op : comm) {
    if (IsCollective(op.cls)) by[{op.global_pid, op.cls}].emplace_back(op.start, op.end);
  }
  Ends out;
  for (auto& [key, ops] : by) {
    std::sort(ops.begin(), ops.end());
    auto& ends = out[key];
    for (const auto& o : ops) ends.push_back(o.second + shift);
  }
  return out;
}

// End differences a[i] - b[i + s] for the shift s that pairs the two sequences best: the
// smallest spread of the differences, s = 0 unless another is clearly better.
std::vector<int64_t> PairEnds(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const int64_t na = static_cast<int64_t>(a.size()), nb = static_cast<int64_t>(b.size());
  const int64_t need = std::max<int64_t>(2, std::min(na, nb) / 2);
  struct Candidate {
    int s;
    int64_t spread;
    std::vector<int64_t> diffs;
  };
  std::vector<Candidate> tried;
  for (int s = -kMaxIndexShift; s <= kMaxIndexShift; ++s) {
    std::vector<int64_t> d;
    for (int64_t i = std::max<int64_t>(0, -s); i < na && i + s < nb; ++i) d.push_back(a[i] - b[i + s]);
    if (static_cast<int64_t>(d.size()) < need) continue;
    int64_t med = Median(d);
    tried.push_back({s, MedianDistance(d, med), std::move(d)});
  }
  if (tried.empty()) return {};
  const Candidate* best = &tried.front();
  const Candidate* zero = nullptr;
  for (const auto& c : tried) {
    if (c.spread < best->spread) best = &c;
    if (c.s == 0) zero = &c;
  }
  // Periodic collectives pair well at several shifts: the recorded starts already put the
  // clocks close, so the unshifted pairing wins unless another is much tighter.
  if (zero && zero->spread <= std::max(2 * best->spread, best->spread + 20'000)) best = zero;
  return best->diffs;
}

}  // namespace

bool IsCollective(model::OpClass c) {
  return c == OpClass::kAllGather || c == OpClass::kReduceScatter || c == OpClass::kAllReduce ||
         c == OpClass::kBroadcast || c == OpClass::kReduce || c == OpClass::kAllToAll;
}

std::vector<ClockAlignment> AlignClocks(const std::vector<ClockInput>& exports) {
  std::vector<ClockAlignment> out(exports.size());
  if (exports.empty()) return out;
  out[0].method = "reference (the run's clock is its session clock)";
  const bool have_utc = std::all_of(exports.begin(), exports.end(), [](const auto& e) { return e.utc_start_ns > 0; });
  const Ends reference = CollectiveEnds(exports[0].comm, 0);
  for (size_t e = 1; e < exports.size(); ++e) {
    ClockAlignment& a = out[e];
    const int64_t coarse = have_utc ? exports[e].utc_start_ns - exports[0].utc_start_ns : 0;
    const Ends mine = CollectiveEnds(exports[e].comm, coarse);
    std::vector<int64_t> pool;
    for (const auto& [rkey, rends] : reference) {
      for (const auto& [mkey, mends] : mine) {
        if (rkey.second != mkey.second) continue;
        std::vector<int64_t> d = PairEnds(rends, mends);
        pool.insert(pool.end(), d.begin(), d.end());
      }
    }
    if (!pool.empty()) {
      a.refine_ns = Median(pool);
      a.residual_ns = MedianDistance(pool, a.refine_ns);
      a.matched_ops = static_cast<int64_t>(pool.size());
    }
    a.offset_ns = coarse + a.refine_ns;
    if (have_utc) {
      a.method = pool.empty() ? "session start (UTC) only: no collective to refine it with"
                              : fmt::format("session start (UTC), refined by {} collective ends", pool.size());
    } else {
      a.method = pool.empty() ? "none: no session start recorded and no collective matched"
                              : fmt::format("collective ends only ({}; no session start recorded)", pool.size());
    }
  }
  return out;
}

}  // namespace cpprof::analysis
