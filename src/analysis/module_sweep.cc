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
    out.edge_comm_ops = work.edge_comm_ops;
  }
  return out;
}

RankModuleTimes SweepModules(model::ProcessGpuWork& work, const std::vector<int>& parent, bool collect_comm_ops) {
  RankModuleTimes out = StartSweep(work, parent.size(), collect_comm_ops);
  SweepModules(work, parent, out);
  return out;
}

namespace {

// One rank's sweep in time order: what runs now (per node, class and phase), and each node's and
// phase's share of the busy time so far. Every step is inline: the sweep runs once per GPU op.
class Sweeper {
 public:
  Sweeper(const std::vector<int>& parent, RankModuleTimes& out)
      : parent_(parent),
        out_(out),
        n_(parent.size()),
        collect_comm_ops_(out.collect_comm_ops),
        own_share_(n_, 0.0),
        backward_share_(n_, 0.0),
        backward_active_(n_, 0),
        own_(n_),
        comm_nodes_(n_),
        kind_active_(n_, std::array<int32_t, kCommClasses>{}),
        windowed_(out.window_end > out.window_start),
        now_(windowed_ ? out.window_start : INT64_MIN) {}

  // One op in start order: the ops that ended by its start end, its gap and segment are counted,
  // then it starts.
  void Op(const SweptOp& op) {
    while (!ending_.empty() && ending_.top().end <= op.start) EndFirst();
    uint16_t node = op.node < n_ ? op.node : 0;
    Gap(op.start, node);
    Segment(op.start);
    uint8_t phase = op.phase < model::kNumPhases ? op.phase : 0;
    Count(op, node);
    if (op.end <= op.start) return;  // zero-length ops add no time
    Change(op.cls, phase, node, +1);
    ending_.push({op.end, op.cls, phase, node});
    if (phase == static_cast<uint8_t>(model::Phase::kBackward)) out_.has_backward = true;
    if (collect_comm_ops_ && model::IsComm(op.cls))
      out_.comm_ops[static_cast<int>(op.cls)].push_back({op.start, op.end, node});
  }

  // After the last op: the ops still running end, and a window's trailing gap goes to node 0.
  void Finish() {
    while (!ending_.empty()) EndFirst();
    if (windowed_) Gap(out_.window_end, 0);
    if (out_.ops) out_.first_start = first_, out_.last_end = last_;
  }

  // The shares rounded to nanoseconds that add up: each node's own and backward time, each
  // phase's busy time.
  void Attribute() {
    std::vector<int64_t> own_ns = RoundShares(own_share_, out_.busy_ns);
    std::vector<double> ps(phase_share_.begin(), phase_share_.end());
    std::vector<int64_t> phase_ns = RoundShares(ps, out_.busy_ns);
    for (int p = 0; p < model::kNumPhases; ++p) out_.phase_busy_ns[p] = phase_ns[p];
    double backward_total = 0;
    for (double b : backward_share_) backward_total += b;
    std::vector<int64_t> backward_ns = RoundShares(backward_share_, std::llround(backward_total));
    for (size_t i = 0; i < n_; ++i) {
      out_.nodes[i].own_ns = own_ns[i];
      out_.nodes[i].busy_ns += own_ns[i];
      out_.nodes[i].backward_ns += std::min(backward_ns[i], own_ns[i]);  // rounded apart: keep it a part
    }
  }

 private:
  // The op that ends first ends: the segment up to its end is counted, then it stops running.
  void EndFirst() {
    Ending e = ending_.top();
    ending_.pop();
    Segment(e.end);
    Change(e.cls, e.phase, e.node, -1);
  }

  // The op's counts: per node and class, its duration, the first start and last end.
  void Count(const SweptOp& op, uint16_t node) {
    ++out_.nodes[node].ops;
    ++out_.ops;
    int c = static_cast<int>(op.cls);
    SatAdd(out_.class_sum_ns[c], op.end - op.start);
    ++out_.class_instances[c];
    first_ = std::min(first_, op.start);
    last_ = std::max(last_, op.end);
  }

  // Idle from now until `until` (nothing running) goes to `node`: a launch gap or a host stall.
  void Gap(int64_t until, uint16_t node) {
    if (active_ != 0 || now_ == INT64_MIN || until <= now_) return;
    int64_t len = until - now_;
    out_.nodes[node].host_idle_ns += len;
    (len < model::kLaunchGapNs ? out_.launch_gap_ns : out_.host_stall_ns) += len;
  }

  // The time from now until `until`, during which the same ops run, counted; now moves there.
  void Segment(int64_t until) {
    if (until <= now_) return;
    const int64_t from = now_;  // INT64_MIN before the first op of an unwindowed sweep: nothing runs then
    now_ = until;
    if (active_ == 0) return;
    const int64_t len = until - from;
    out_.busy_ns += len;
    for (uint32_t m = class_mask_; m; m &= m - 1) out_.class_union_ns[__builtin_ctz(m)] += len;
    if (compute_active_ > 0) out_.compute_union_ns += len;
    if (compute_active_ < active_) out_.comm_union_ns += len;
    ShareOwners(len);
    SharePhases(len);
    const bool hidden = compute_active_ > 0;
    const uint32_t comm_mask = class_mask_ & kCommMask;  // communication classes running now
    if (hidden) Hide(until, len, comm_mask);
    CountCommNodes(len, hidden, comm_mask);
  }

  // The segment split equally among the nodes with a running op (and into their backward part).
  void ShareOwners(int64_t len) {
    const auto& owners = own_.list();
    double share = static_cast<double>(len) / static_cast<double>(owners.size());
    for (uint32_t id : owners) {
      own_share_[id] += share;
      if (backward_active_[id] > 0) backward_share_[id] += backward_active_[id] == own_.count(id) ? share : share / 2;
    }
  }

  // The segment split equally among the phases with a running op.
  void SharePhases(int64_t len) {
    int phases = 0;
    for (int p = 0; p < model::kNumPhases; ++p) phases += phase_active_[p] > 0;
    for (int p = 0; p < model::kNumPhases; ++p) {
      if (phase_active_[p] > 0) phase_share_[p] += static_cast<double>(len) / phases;
    }
  }

  // A segment with compute running: hidden for each communication class running, and (when
  // collecting) a stretch that can hide a transfer, joined to the last when they touch.
  void Hide(int64_t until, int64_t len, uint32_t comm_mask) {
    for (uint32_t m = comm_mask; m; m &= m - 1) out_.hidden_ns[__builtin_ctz(m)] += len;
    if (comm_mask && collect_comm_ops_) {
      auto& seg = out_.hidden_segments;
      if (!seg.empty() && seg.back().end == until - len) {
        seg.back().end = until;
      } else {
        seg.push_back({until - len, until});
      }
    }
  }

  // The segment to each node with communication running in its subtree: comm, hidden, per kind.
  void CountCommNodes(int64_t len, bool hidden, uint32_t comm_mask) {
    for (uint32_t id : comm_nodes_.list()) {
      auto& t = out_.nodes[id];
      t.comm_ns += len;
      if (hidden) t.hidden_ns += len;
      for (uint32_t m = comm_mask; m; m &= m - 1) {
        int c = __builtin_ctz(m);
        if (kind_active_[id][c] > 0) t.comm_kind_ns[c] += len;
      }
    }
  }

  // An op of class cls and phase on node starts (d = +1) or ends (d = -1).
  void Change(OpClass cls, uint8_t phase, uint16_t node, int d) {
    int c = static_cast<int>(cls);
    active_ += d;
    class_active_[c] += d;
    if (class_active_[c] > 0) {
      class_mask_ |= 1u << c;
    } else {
      class_mask_ &= ~(1u << c);
    }
    phase_active_[phase] += d;
    bool comm = model::IsComm(cls);
    if (!comm) compute_active_ += d;
    if (phase == static_cast<uint8_t>(model::Phase::kBackward)) backward_active_[node] += d;
    if (d > 0) {
      own_.Inc(node);
    } else {
      own_.Dec(node);
    }
    if (comm) ChangeComm(c, node, d);
  }

  // Communication of class c on node starts or ends: counted on the node and its ancestors.
  void ChangeComm(int c, uint16_t node, int d) {
    for (int id = node; id >= 0; id = parent_[id]) {
      kind_active_[id][c] += d;
      if (d > 0) {
        comm_nodes_.Inc(id);
      } else {
        comm_nodes_.Dec(id);
      }
    }
  }

  const std::vector<int>& parent_;
  RankModuleTimes& out_;
  const size_t n_;
  const bool collect_comm_ops_;
  std::vector<double> own_share_;
  // The backward part of each node's share: a node running forward and backward work at once
  // gives half of its share to each.
  std::vector<double> backward_share_;
  std::vector<int32_t> backward_active_;  // running backward ops per node
  std::array<double, model::kNumPhases> phase_share_{};
  ActiveSet own_;         // nodes with a running op attributed to them
  ActiveSet comm_nodes_;  // nodes with running communication in their subtree
  std::vector<std::array<int32_t, kCommClasses>> kind_active_;
  std::array<int32_t, model::kNumPhases> phase_active_{};
  std::array<int32_t, model::kNumOpClasses> class_active_{};
  int64_t active_ = 0, compute_active_ = 0;
  uint32_t class_mask_ = 0;  // classes with a running op
  int64_t first_ = INT64_MAX, last_ = INT64_MIN;
  const bool windowed_;
  int64_t now_;
  std::priority_queue<Ending, std::vector<Ending>, std::greater<Ending>> ending_;
  static_assert(model::kNumOpClasses <= 32);
};

// Children before parents: a child's id is always larger than its parent's (interned after).
void AddChildren(const std::vector<int>& parent, RankModuleTimes& out) {
  for (size_t i = parent.size(); i-- > 0;) {
    if (parent[i] >= 0) {
      out.nodes[parent[i]].busy_ns += out.nodes[i].busy_ns;
      out.nodes[parent[i]].backward_ns += out.nodes[i].backward_ns;
      out.nodes[parent[i]].ops += out.nodes[i].ops;
      out.nodes[parent[i]].host_idle_ns += out.nodes[i].host_idle_ns;
    }
  }
}

}  // namespace

void SweepModules(model::ProcessGpuWork& work, const std::vector<int>& parent, RankModuleTimes& out) {
  Sweeper sweep(parent, out);
  ForEachOpByStart(work, [&](const SweptOp& op) { sweep.Op(op); });
  sweep.Finish();
  sweep.Attribute();
  AddChildren(parent, out);
}

}  // namespace cpprof::analysis
