#include "analysis/module_sweep.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>

#include "analysis/op_sweep.h"
#include "base/saturating.h"

namespace cpprof::analysis {

using model::OpClass;

namespace {

constexpr int kCommClasses = static_cast<int>(OpClass::kPeerCopy) + 1;
constexpr uint32_t kCommMask = (1u << kCommClasses) - 1;  // classes 0 .. kPeerCopy communicate

// A set of small ids with counts, listing the ids whose count is positive (O(1) add/remove).
class ActiveSet {
 public:
  explicit ActiveSet(size_t n) : count_(n, 0), pos_(n, -1) {}
  // Returns true when the id became active.
  bool Inc(size_t id) {
    if (count_[id]++ == 0) {
      pos_[id] = static_cast<int32_t>(list_.size());
      list_.push_back(static_cast<uint32_t>(id));
      return true;
    }
    return false;
  }
  void Dec(size_t id) {
    if (--count_[id] == 0) {
      uint32_t last = list_.back();
      list_[pos_[id]] = last;
      pos_[last] = pos_[id];
      list_.pop_back();
      pos_[id] = -1;
    }
  }
  const std::vector<uint32_t>& list() const { return list_; }
  int32_t count(size_t id) const { return count_[id]; }

 private:
  std::vector<int32_t> count_;
  std::vector<int32_t> pos_;
  std::vector<uint32_t> list_;
};

struct Ending {
  int64_t end;
  OpClass cls;
  uint8_t phase;
  uint16_t node;
  bool operator>(const Ending& o) const { return end > o.end; }
};

}  // namespace

std::vector<int64_t> RoundShares(const std::vector<double>& shares, int64_t total) {
  std::vector<int64_t> out(shares.size());
  std::vector<std::pair<double, size_t>> rem;
  int64_t sum = 0;
  for (size_t i = 0; i < shares.size(); ++i) {
    double f = std::floor(shares[i]);
    out[i] = static_cast<int64_t>(f);
    sum += out[i];
    rem.push_back({shares[i] - f, i});
  }
  std::stable_sort(rem.begin(), rem.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  int64_t left = total - sum;
  // Floating error can leave |left| a little above the number of shares; spread it round-robin.
  for (size_t k = 0; left != 0 && !rem.empty(); k = (k + 1) % rem.size()) {
    size_t i = rem[k].second;
    if (left > 0) {
      ++out[i], --left;
    } else if (out[i] > 0) {
      --out[i], ++left;
    } else if (std::all_of(out.begin(), out.end(), [](int64_t v) { return v <= 0; })) {
      break;
    }
  }
  return out;
}

RankModuleTimes StartSweep(const model::ProcessGpuWork& work, size_t nodes, bool collect_comm_ops) {
  RankModuleTimes out;
  out.nodes.assign(nodes, {});
  out.collect_comm_ops = collect_comm_ops;
  if (collect_comm_ops) {
    // Exact sizes: doubling vectors would hold up to twice the memory at the peak.
    std::array<size_t, model::kNumOpClasses> count{};
    for (size_t c = 0; c < work.ops.num_chunks(); ++c) {
      for (const auto& op : work.ops.chunk(c)) ++count[static_cast<int>(op.cls)];
    }
    for (const auto& op : work.long_ops) ++count[static_cast<int>(op.cls)];
    for (int c = 0; c < model::kNumOpClasses; ++c) {
      if (model::IsComm(static_cast<OpClass>(c))) out.comm_ops[c].reserve(count[c]);
    }
  }
  return out;
}

RankModuleTimes SweepModules(model::ProcessGpuWork& work, const std::vector<int>& parent, bool collect_comm_ops) {
  RankModuleTimes out = StartSweep(work, parent.size(), collect_comm_ops);
  SweepModules(work, parent, out);
  return out;
}

void SweepModules(model::ProcessGpuWork& work, const std::vector<int>& parent, RankModuleTimes& out) {
  const size_t n = parent.size();
  const bool collect_comm_ops = out.collect_comm_ops;
  std::vector<double> own_share(n, 0.0);
  // The backward part of each node's share: a node running forward and backward work at once
  // gives half of its share to each.
  std::vector<double> backward_share(n, 0.0);
  std::vector<int32_t> backward_active(n, 0);  // running backward ops per node
  std::array<double, model::kNumPhases> phase_share{};

  ActiveSet own(n);         // nodes with a running op attributed to them
  ActiveSet comm_nodes(n);  // nodes with running communication in their subtree
  std::vector<std::array<int32_t, kCommClasses>> kind_active(n, std::array<int32_t, kCommClasses>{});
  std::array<int32_t, model::kNumPhases> phase_active{};
  std::array<int32_t, model::kNumOpClasses> class_active{};
  int64_t active = 0, compute_active = 0;
  uint32_t class_mask = 0;  // classes with a running op
  static_assert(model::kNumOpClasses <= 32);
  int64_t first = INT64_MAX, last = INT64_MIN;
  const bool windowed = out.window_end > out.window_start;
  int64_t now = windowed ? out.window_start : INT64_MIN;
  auto gap = [&](int64_t until, uint16_t node) {
    if (active != 0 || now == INT64_MIN || until <= now) return;
    int64_t len = until - now;
    out.nodes[node].host_idle_ns += len;
    (len < model::kLaunchGapNs ? out.launch_gap_ns : out.host_stall_ns) += len;
  };

  auto segment = [&](int64_t until) {
    if (until <= now) return;
    const int64_t from = now;  // INT64_MIN before the first op of an unwindowed sweep: nothing runs then
    now = until;
    if (active == 0) return;
    const int64_t len = until - from;
    out.busy_ns += len;
    for (uint32_t m = class_mask; m; m &= m - 1) out.class_union_ns[__builtin_ctz(m)] += len;
    if (compute_active > 0) out.compute_union_ns += len;
    if (compute_active < active) out.comm_union_ns += len;
    const auto& owners = own.list();
    double share = static_cast<double>(len) / static_cast<double>(owners.size());
    for (uint32_t id : owners) {
      own_share[id] += share;
      if (backward_active[id] > 0) backward_share[id] += backward_active[id] == own.count(id) ? share : share / 2;
    }
    int phases = 0;
    for (int p = 0; p < model::kNumPhases; ++p) phases += phase_active[p] > 0;
    for (int p = 0; p < model::kNumPhases; ++p) {
      if (phase_active[p] > 0) phase_share[p] += static_cast<double>(len) / phases;
    }
    bool hidden = compute_active > 0;
    const uint32_t comm_mask = class_mask & kCommMask;  // communication classes running now
    if (hidden) {
      for (uint32_t m = comm_mask; m; m &= m - 1) out.hidden_ns[__builtin_ctz(m)] += len;
      if (comm_mask && collect_comm_ops) {
        auto& seg = out.hidden_segments;
        if (!seg.empty() && seg.back().end == until - len) {
          seg.back().end = until;
        } else {
          seg.push_back({until - len, until});
        }
      }
    }
    for (uint32_t id : comm_nodes.list()) {
      auto& t = out.nodes[id];
      t.comm_ns += len;
      if (hidden) t.hidden_ns += len;
      for (uint32_t m = comm_mask; m; m &= m - 1) {
        int c = __builtin_ctz(m);
        if (kind_active[id][c] > 0) t.comm_kind_ns[c] += len;
      }
    }
  };
  auto change = [&](OpClass cls, uint8_t phase, uint16_t node, int d) {
    int c = static_cast<int>(cls);
    active += d;
    class_active[c] += d;
    if (class_active[c] > 0) {
      class_mask |= 1u << c;
    } else {
      class_mask &= ~(1u << c);
    }
    phase_active[phase] += d;
    bool comm = model::IsComm(cls);
    if (!comm) compute_active += d;
    if (phase == static_cast<uint8_t>(model::Phase::kBackward)) backward_active[node] += d;
    if (d > 0) {
      own.Inc(node);
    } else {
      own.Dec(node);
    }
    if (comm) {
      for (int id = node; id >= 0; id = parent[id]) {
        kind_active[id][c] += d;
        if (d > 0) {
          comm_nodes.Inc(id);
        } else {
          comm_nodes.Dec(id);
        }
      }
    }
  };

  std::priority_queue<Ending, std::vector<Ending>, std::greater<Ending>> ending;
  ForEachOpByStart(work, [&](const SweptOp& op) {
    while (!ending.empty() && ending.top().end <= op.start) {
      Ending e = ending.top();
      ending.pop();
      segment(e.end);
      change(e.cls, e.phase, e.node, -1);
    }
    uint16_t node = op.node < n ? op.node : 0;
    gap(op.start, node);
    segment(op.start);
    uint8_t phase = op.phase < model::kNumPhases ? op.phase : 0;
    ++out.nodes[node].ops;
    ++out.ops;
    int c = static_cast<int>(op.cls);
    SatAdd(out.class_sum_ns[c], op.end - op.start);
    ++out.class_instances[c];
    first = std::min(first, op.start);
    last = std::max(last, op.end);
    if (op.end <= op.start) return;  // zero-length ops add no time
    change(op.cls, phase, node, +1);
    ending.push({op.end, op.cls, phase, node});
    if (phase == static_cast<uint8_t>(model::Phase::kBackward)) out.has_backward = true;
    if (collect_comm_ops && model::IsComm(op.cls))
      out.comm_ops[static_cast<int>(op.cls)].push_back({op.start, op.end, node});
  });
  while (!ending.empty()) {
    Ending e = ending.top();
    ending.pop();
    segment(e.end);
    change(e.cls, e.phase, e.node, -1);
  }
  if (windowed) gap(out.window_end, 0);

  if (out.ops) out.first_start = first, out.last_end = last;
  std::vector<int64_t> own_ns = RoundShares(own_share, out.busy_ns);
  std::vector<double> ps(phase_share.begin(), phase_share.end());
  std::vector<int64_t> phase_ns = RoundShares(ps, out.busy_ns);
  for (int p = 0; p < model::kNumPhases; ++p) out.phase_busy_ns[p] = phase_ns[p];
  double backward_total = 0;
  for (double b : backward_share) backward_total += b;
  std::vector<int64_t> backward_ns = RoundShares(backward_share, std::llround(backward_total));
  for (size_t i = 0; i < n; ++i) {
    out.nodes[i].own_ns = own_ns[i];
    out.nodes[i].busy_ns += own_ns[i];
    out.nodes[i].backward_ns += std::min(backward_ns[i], own_ns[i]);  // rounded apart: keep it a part
  }
  // Children before parents: a child's id is always larger than its parent's (interned after).
  for (size_t i = n; i-- > 0;) {
    if (parent[i] >= 0) {
      out.nodes[parent[i]].busy_ns += out.nodes[i].busy_ns;
      out.nodes[parent[i]].backward_ns += out.nodes[i].backward_ns;
      out.nodes[parent[i]].ops += out.nodes[i].ops;
      out.nodes[parent[i]].host_idle_ns += out.nodes[i].host_idle_ns;
    }
  }
}

}  // namespace cpprof::analysis
