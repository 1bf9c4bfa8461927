// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/comm_match.h"

#include <algorithm>
#include <limits>

#include "base/saturating.h"

namespace cpprof::analysis {

namespace {

constexpr uint32_t kOutside = UINT32_MAX;

struct Pooled {
  int64_t start, end;    // the whole op (matched over it)
  int64_t cstart, cend;  // its part in the window (the whole op when the window did not cut it)
  uint32_t rank, index;  // index into the rank's comm_ops of the kind; kOutside: outside the window
  bool outside() const { return index == kOutside; }
};

using Splits = std::vector<std::vector<CommOpSplit>>;  // per rank, per op of the kind

// Rank r's edge ops of kind c into the pool: those the window cut replace their cut part's
// extent (found by it) with the whole op's; those outside it join as kOutside.
void PoolEdgeOps(int c, uint32_t r, const RankModuleTimes& sweep, size_t first, std::vector<Pooled>& pool) {
  const auto& ops = sweep.comm_ops[c];
  for (const model::EdgeCommOp& e : sweep.edge_comm_ops) {
    if (static_cast<int>(e.cls) != c) continue;
    if (!e.inside) {
      pool.push_back({e.whole.start, e.whole.end, e.whole.start, e.whole.start, r, kOutside});
      continue;
    }
    const int64_t cs = std::max(e.whole.start, sweep.window_start), ce = std::min(e.whole.end, sweep.window_end);
    auto it = std::lower_bound(ops.begin(), ops.end(), cs, [](const CommOp& op, int64_t v) { return op.start < v; });
    for (; it != ops.end() && it->start == cs; ++it) {
      Pooled& p = pool[first + static_cast<size_t>(it - ops.begin())];
      if (it->end != ce || p.start != p.cstart || p.end != p.cend) continue;
      p.start = e.whole.start, p.end = e.whole.end;
      break;
    }
  }
}

// Every rank's ops of kind c in one pool sorted by end (then rank, index), with the ops outside
// the window near its edges; counts the window's ops per rank into s and sizes splits.
std::vector<Pooled> PoolOps(int c, const std::vector<const RankModuleTimes*>& per_rank, model::CollectiveStats& s,
                            Splits& splits) {
  std::vector<Pooled> pool;
  for (size_t r = 0; r < per_rank.size(); ++r) {
    const auto& ops = per_rank[r]->comm_ops[c];
    s.per_rank_count.push_back(static_cast<int64_t>(ops.size()));
    splits[r].resize(ops.size());
    const size_t first = pool.size();
    for (size_t i = 0; i < ops.size(); ++i) {
      pool.push_back(
          {ops[i].start, ops[i].end, ops[i].start, ops[i].end, static_cast<uint32_t>(r), static_cast<uint32_t>(i)});
      auto& k = s.per_rank[r];
      ++k.ops;
      SatAdd(k.time_ns, ops[i].end - ops[i].start);
    }
    PoolEdgeOps(c, static_cast<uint32_t>(r), *per_rank[r], first, pool);
  }
  std::sort(pool.begin(), pool.end(), [](const Pooled& a, const Pooled& b) {
    if (a.end != b.end) return a.end < b.end;
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.index != b.index) return a.index < b.index;
    return a.start < b.start;
  });
  return pool;
}

// An op no other rank's op matched: counted as unmatched, no waiting.
void Unmatched(const Pooled& seed, model::CollectiveStats& s, Splits& splits) {
  if (seed.outside()) return;
  auto& k = s.per_rank[seed.rank];
  ++k.unmatched_ops;
  SatAdd(k.unmatched_ns, seed.cend - seed.cstart);
  splits[seed.rank][seed.index] = CommOpSplit{0, seed.cstart, false, false, 0};
}

// An instance's waiting (`caused`: its members' waiting in the window, all for `last_rank`) added
// to the group of its ranks (members outside the window included).
void AddToGroup(const std::vector<Pooled>& pool, const std::vector<size_t>& member, uint32_t last_rank, int64_t caused,
                model::CollectiveStats& s) {
  std::vector<int> ranks;
  for (size_t j : member) ranks.push_back(static_cast<int>(pool[j].rank));
  std::sort(ranks.begin(), ranks.end());
  auto g = std::find_if(s.groups.begin(), s.groups.end(), [&](const auto& x) { return x.ranks == ranks; });
  if (g == s.groups.end()) {
    g = s.groups.insert(s.groups.end(), model::CollectiveStats::Group{ranks, 0, 0, {}});
    g->waited_for_ns.assign(s.per_rank.size(), 0);
  }
  ++g->instances;
  SatAdd(g->wait_ns, caused);
  SatAdd(g->waited_for_ns[last_rank], caused);
}

// One instance (member: pool indices, one per rank): the last rank to arrive, each member's
// waiting until then and transfer after it, and the waiting the last one caused. The split is
// made over the whole ops, then clipped to the window; ops outside it only say who came last.
void SettleInstance(const std::vector<Pooled>& pool, const std::vector<size_t>& member, model::CollectiveStats& s,
                    Splits& splits) {
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  uint32_t last_rank = 0;
  bool inside = false, cut = false;
  for (size_t j : member) {
    const Pooled& p = pool[j];
    first = std::min(first, p.start);
    if (p.start > last || (p.start == last && p.rank < last_rank)) last = p.start, last_rank = p.rank;
    inside = inside || !p.outside();
    cut = cut || p.outside() || p.start != p.cstart || p.end != p.cend;
  }
  if (!inside) return;  // wholly outside the window
  ++s.instances;
  if (cut) ++s.edge_instances;
  s.start_spread_sum_ns += last - first;
  s.start_spread_max_ns = std::max(s.start_spread_max_ns, last - first);
  int64_t caused = 0;
  for (size_t j : member) {
    const Pooled& p = pool[j];
    if (p.outside()) continue;
    // last < every member's end (see MatchKind): the waiting is [start, last) cut to the window.
    const int64_t transfer_start = std::clamp(last, p.cstart, p.cend);
    const int64_t wait = transfer_start - p.cstart;
    auto& k = s.per_rank[p.rank];
    SatAdd(k.wait_ns, wait);
    if (wait > 0) {
      if (k.waited_for_ns.empty()) k.waited_for_ns.assign(s.per_rank.size(), 0);
      SatAdd(k.waited_for_ns[last_rank], wait);
    }
    SatAdd(k.transfer_ns, (p.cend - p.cstart) - wait);
    caused += wait;
    splits[p.rank][p.index] = CommOpSplit{wait, transfer_start, true, p.rank == last_rank, 0, s.instances - 1};
  }
  AddToGroup(pool, member, last_rank, caused, s);
  auto& l = s.per_rank[last_rank];
  ++l.last_arrivals;
  SatAdd(l.caused_wait_ns, caused);
  for (size_t j : member) {
    if (pool[j].rank == last_rank && !pool[j].outside()) splits[last_rank][pool[j].index].caused_wait_ns = caused;
  }
}

// The ops of kind c matched across ranks into instances (m.kinds, m.splits[c]): each untaken op
// in end order seeds one, joined by each other rank's earliest-ending untaken op that started
// before the seed ended.
void MatchKind(int c, const std::vector<const RankModuleTimes*>& per_rank, CommMatch& m) {
  const size_t ranks = per_rank.size();
  model::CollectiveStats s;
  s.kind = static_cast<model::OpClass>(c);
  s.per_rank.assign(ranks, {});
  auto& splits = m.splits[c];
  splits.assign(ranks, {});
  const std::vector<Pooled> pool = PoolOps(c, per_rank, s, splits);
  if (pool.empty()) return;
  std::vector<char> taken(pool.size(), 0);
  std::vector<size_t> member;  // pool indices of the instance being built
  std::vector<char> has_rank(ranks, 0);
  for (size_t i = 0; i < pool.size(); ++i) {
    if (taken[i]) continue;
    const Pooled& seed = pool[i];
    const int64_t tolerance = std::max<int64_t>(
        kEndToleranceNs, static_cast<int64_t>(kEndToleranceShare * static_cast<double>(seed.end - seed.start)));
    const int64_t limit = seed.end > std::numeric_limits<int64_t>::max() - tolerance
                              ? std::numeric_limits<int64_t>::max()
                              : seed.end + tolerance;
    member.assign(1, i);
    has_rank[seed.rank] = 1;
    // Other ranks: the earliest-ending untaken op that started before the seed ended.
    for (size_t j = i + 1; j < pool.size() && pool[j].end <= limit; ++j) {
      const Pooled& p = pool[j];
      if (taken[j] || has_rank[p.rank] || p.start >= seed.end) continue;
      has_rank[p.rank] = 1;
      member.push_back(j);
    }
    for (size_t j : member) taken[j] = 1, has_rank[pool[j].rank] = 0;
    if (member.size() < 2) {
      Unmatched(seed, s, splits);
    } else {
      SettleInstance(pool, member, s, splits);
    }
  }
  m.kinds.push_back(std::move(s));
}

}  // namespace

CommMatch MatchComm(const std::vector<const RankModuleTimes*>& per_rank) {
  CommMatch m;
  for (int c = 0; c < model::kNumOpClasses; ++c) {
    if (!model::IsComm(static_cast<model::OpClass>(c))) continue;
    bool any = false;
    for (const auto* r : per_rank) any = any || !r->comm_ops[c].empty();
    if (any) MatchKind(c, per_rank, m);
  }
  return m;
}

void KeepNearEdges(std::vector<model::ProcessGpuWork>& procs, const model::Interval& window) {
  int64_t reach = -1;
  for (const auto& p : procs) {
    for (const auto& e : p.edge_comm_ops) {
      if (e.inside) reach = std::max(reach, e.whole.length());
    }
  }
  for (auto& p : procs) {
    std::erase_if(p.edge_comm_ops, [&](const model::EdgeCommOp& e) {
      return !e.inside && (reach < 0 || e.whole.end < window.start - reach || e.whole.start > window.end + reach);
    });
    p.edge_comm_ops.shrink_to_fit();
  }
}

std::vector<int64_t> Overlap(const std::vector<model::Interval>& segments, const std::vector<model::Interval>& sorted) {
  std::vector<int64_t> out(sorted.size(), 0);
  // Intervals that may overlap the current segment: started before its end and not ended
  // before its start. Few at a time (NCCL ops of one rank rarely overlap one another).
  std::vector<size_t> active;
  size_t next = 0;
  for (const auto& seg : segments) {
    std::erase_if(active, [&](size_t i) { return sorted[i].end <= seg.start; });
    for (; next < sorted.size() && sorted[next].start < seg.end; ++next) {
      if (sorted[next].end > seg.start) active.push_back(next);
    }
    for (size_t i : active) {
      int64_t x = std::max(seg.start, sorted[i].start), y = std::min(seg.end, sorted[i].end);
      if (y > x) out[i] += y - x;
    }
  }
  return out;
}

void SplitRankComm(const RankModuleTimes& sweep, size_t rank, const std::vector<int>& parent, CommMatch& match,
                   std::vector<model::ModuleRankTime>& nodes) {
  struct Ref {
    int c;
    size_t i;
  };
  std::vector<model::Interval> transfers;
  std::vector<Ref> refs;
  for (int c = 0; c < model::kNumOpClasses; ++c) {
    const auto& ops = sweep.comm_ops[c];
    if (ops.empty() || match.splits[c].size() <= rank) continue;
    for (size_t i = 0; i < ops.size(); ++i) {
      transfers.push_back({match.splits[c][rank][i].transfer_start, ops[i].end});
      refs.push_back({c, i});
    }
  }
  if (transfers.empty()) return;
  std::vector<size_t> order(transfers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return transfers[a].start != transfers[b].start ? transfers[a].start < transfers[b].start : a < b;
  });
  std::vector<model::Interval> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) sorted.push_back(transfers[i]);
  std::vector<int64_t> hidden = Overlap(sweep.hidden_segments, sorted);
  for (size_t k = 0; k < order.size(); ++k) {
    const Ref& ref = refs[order[k]];
    const CommOp& op = sweep.comm_ops[ref.c][ref.i];
    const CommOpSplit& split = match.splits[ref.c][rank][ref.i];
    int64_t exposed = sorted[k].length() - hidden[k];
    for (auto& kind : match.kinds) {
      if (static_cast<int>(kind.kind) == ref.c) kind.per_rank[rank].exposed_transfer_ns += exposed;
    }
    for (int id = op.node < nodes.size() ? op.node : 0; id >= 0; id = parent[id]) {
      auto& t = nodes[id];
      t.exposed_transfer_ns += exposed;
      if (split.matched) {
        SatAdd(t.wait_ns, split.wait_ns);
        SatAdd(t.transfer_ns, (op.end - op.start) - split.wait_ns);
      }
      if (split.last_arrival) {
        ++t.last_arrivals;
        SatAdd(t.caused_wait_ns, split.caused_wait_ns);
      }
    }
  }
}

}  // namespace cpprof::analysis
