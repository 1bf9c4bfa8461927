#include "analysis/collectives.h"

#include <algorithm>
#include <limits>

namespace cpprof::analysis {

std::vector<model::CollectiveStats> MatchCollectives(const std::vector<const RankModuleTimes*>& per_rank) {
  std::vector<model::CollectiveStats> out;
  const size_t ranks = per_rank.size();
  for (int c = 0; c < model::kNumOpClasses; ++c) {
    auto cls = static_cast<model::OpClass>(c);
    if (!model::IsComm(cls)) continue;
    model::CollectiveStats s;
    s.kind = cls;
    bool any = false;
    for (const auto* r : per_rank) {
      s.per_rank_count.push_back(static_cast<int64_t>(r->comm_ops[c].size()));
      any = any || !r->comm_ops[c].empty();
    }
    if (!any) continue;
    s.wait_ns.assign(ranks, 0);
    s.last_arrivals.assign(ranks, 0);
    s.matched = ranks >= 2 && std::all_of(s.per_rank_count.begin(), s.per_rank_count.end(),
                                          [&](int64_t n) { return n == s.per_rank_count[0]; });
    if (s.matched) {
      s.instances = s.per_rank_count[0];
      for (int64_t i = 0; i < s.instances; ++i) {
        int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
        int64_t shortest = std::numeric_limits<int64_t>::max();
        size_t last_rank = 0;
        for (size_t r = 0; r < ranks; ++r) {
          const CommOp& op = per_rank[r]->comm_ops[c][i];
          first = std::min(first, op.start);
          if (op.start > last) last = op.start, last_rank = r;
          shortest = std::min(shortest, op.end - op.start);
        }
        int64_t spread = last - first;
        s.start_spread_sum_ns += spread;
        s.start_spread_max_ns = std::max(s.start_spread_max_ns, spread);
        s.transfer_ns += shortest;
        ++s.last_arrivals[last_rank];
        for (size_t r = 0; r < ranks; ++r) {
          const CommOp& op = per_rank[r]->comm_ops[c][i];
          s.wait_ns[r] += (op.end - op.start) - shortest;
        }
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace cpprof::analysis
