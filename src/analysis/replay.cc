// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>

#include "analysis/comm_match.h"
#include "base/parallel.h"

namespace cpprof::analysis {

namespace {

using model::GpuOp;
using model::OpClass;

// One GPU op of the graph (see replay.h).
struct DepOp {
  int64_t start = 0, end = 0;  // measured
  int64_t gap = 0;        // start - the latest measured end of the rank's ops ended by then (or the window's start)
  int64_t lag = -1;       // start - the previous op's start, when it started while another ran; else -1
  int64_t transfer = 0;   // a matched NCCL op: end - its instance's last arrival; else end - start
  int32_t done = 0;       // how many of the rank's ops (in end order) had ended by its start
  int32_t instance = -1;  // into Graph::instances
  uint16_t node = 0;
  OpClass cls = OpClass::kComputeOther;
  int64_t launch = model::kNoLaunch;  // the launching CUDA call's start (measured)
  int64_t latency = 0;                // bound: start - launch; else min(that, the rank's least latency of a bound op)
  int32_t thread = -1;                // the launch's host thread (into Graph::host[rank]); -1: no launch found
  int32_t event = -1;                 // the launch's place among its thread's host events
  int64_t host_before = 0;            // the thread's time before the call: since its previous call (or sync's return)
  bool after_sync = false;            // the thread's first call after a sync (or its first in the window)
  bool bound = false;                 // launch-bound: the GPU idle until this op's launch (see replay.h)
};

// A blocking call (model::HostSync) tied to the op it waited for: the last of the rank's ops to
// end before it returned, if that op ended while it waited, at most kSyncReturnNs before.
struct DepSync {
  int64_t start = 0, end = 0;
  int32_t tied = -1;  // the op; -1: untied (the GPU was done before the call, or the op is outside the window)
  int64_t ret = 0;    // end - the tied op's end
};
inline constexpr int64_t kSyncReturnNs = 100'000;
// The self-check and the edits run at once on at most this many threads, and only as many as keep
// their timings (about kTimingBytesPerOp each) within kTimingBudget: a 1 GB export's steady window
// (380 k ops, ~27 MB a timing) re-times two at once, a 10 GB one's one at a time.
inline constexpr size_t kReplayThreads = 4;
inline constexpr int64_t kTimingBytesPerOp = 70, kTimingBudget = int64_t{64} << 20;

// One event on a host thread: an op's launch (op >= 0) or a sync (sync >= 0), by measured start.
struct HostEvent {
  int64_t t = 0;
  int32_t op = -1, sync = -1;
};

struct Graph {
  std::vector<std::vector<DepOp>> ranks;                            // by start
  std::vector<std::vector<DepSync>> syncs;                          // per rank, by start
  std::vector<std::vector<std::vector<HostEvent>>> host;            // [rank][thread]: launches and syncs in time order
  std::vector<std::vector<int32_t>> by_end;                         // per rank: op indices by end, then index
  std::vector<std::vector<std::pair<int32_t, int32_t>>> instances;  // (rank, op)
  int64_t window_start = 0;
  // Per rank: the least GPU gap before an op that was queued (launched before the GPU went idle):
  // how soon the GPU starts an op after the last ended, when it need not wait for the host.
  std::vector<int64_t> queued_gap;
  model::DepGraphCounts counts;
};

// A rank's ops by start (`launches`, when not empty, parallel to `ops`), with their measured
// gaps, launch distances and end order.
void AddRank(const std::vector<GpuOp>& in_ops, const std::vector<model::HostLaunch>& launches, Graph& g) {
  std::vector<uint32_t> order(in_ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const GpuOp &x = in_ops[a], &y = in_ops[b];
    return x.start != y.start ? x.start < y.start : x.end() != y.end() ? x.end() < y.end() : a < b;
  });
  std::vector<DepOp> out(order.size());
  std::vector<int32_t> by_end(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const GpuOp& op = in_ops[order[i]];
    out[i].start = op.start, out[i].end = op.end(), out[i].transfer = op.duration;
    out[i].node = op.node, out[i].cls = op.cls;
    if (!launches.empty() && launches[order[i]].start != model::kNoLaunch) {
      out[i].launch = launches[order[i]].start;
      out[i].thread = static_cast<int32_t>(launches[order[i]].thread);  // the process's; AddHost renumbers
    }
    by_end[i] = static_cast<int32_t>(i);
  }
  std::sort(by_end.begin(), by_end.end(),
            [&](int32_t a, int32_t b) { return out[a].end != out[b].end ? out[a].end < out[b].end : a < b; });
  size_t p = 0;
  int64_t done_max = g.window_start, prev_max = INT64_MIN, queued = INT64_MAX;
  for (size_t i = 0; i < out.size(); ++i) {
    DepOp& op = out[i];
    while (p < by_end.size() &&
           (out[by_end[p]].end < op.start || (out[by_end[p]].end == op.start && by_end[p] < static_cast<int32_t>(i)))) {
      done_max = std::max(done_max, out[by_end[p++]].end);
    }
    op.done = static_cast<int32_t>(p);
    op.gap = std::max<int64_t>(0, op.start - done_max);
    if (i > 0 && prev_max > op.start) {
      op.lag = op.start - out[i - 1].start;
      ++g.counts.after_start;
    } else {
      ++g.counts.after_end;
    }
    // Launch-bound: the GPU went idle, then the host called the launch, then the op started.
    // Queued: the call came before the GPU went idle (its gap is the GPU's own).
    const bool idle_before = op.launch != model::kNoLaunch && op.lag < 0 && op.gap > 0;
    op.bound = idle_before && op.launch >= done_max && op.start >= op.launch;
    if (idle_before && op.launch < done_max) queued = std::min(queued, op.gap);
    prev_max = std::max(prev_max, op.end);
  }
  g.queued_gap.push_back(queued == INT64_MAX ? 0 : queued);
  g.counts.ops += static_cast<int64_t>(out.size());
  g.ranks.push_back(std::move(out));
  g.by_end.push_back(std::move(by_end));
}

// Each op's launch latency (see DepOp), and the host threads' events: the launches, and the
// rank's blocking calls (`syncs`, by start) each tied to the op it waited for.
void AddHost(size_t r, bool known, const std::vector<model::HostSync>& syncs, Graph& g) {
  std::vector<DepOp>& ops = g.ranks[r];
  auto& threads = g.host.emplace_back();
  auto& deps = g.syncs.emplace_back();
  if (!known) {
    g.counts.launches_untied += static_cast<int64_t>(ops.size());
    return;
  }
  int64_t least = INT64_MAX, least_any = INT64_MAX;
  for (const DepOp& op : ops) {
    if (op.launch == model::kNoLaunch || op.start < op.launch) continue;
    least_any = std::min(least_any, op.start - op.launch);
    if (op.bound) least = std::min(least, op.start - op.launch);
  }
  if (least == INT64_MAX) least = least_any == INT64_MAX ? 0 : least_any;
  std::vector<int32_t> dense;  // the process's thread index (small: one per thread) -> the rank's
  auto thread = [&](uint32_t own) {
    if (own >= dense.size()) dense.resize(own + 1, -1);
    if (dense[own] < 0) dense[own] = static_cast<int32_t>(threads.size()), threads.emplace_back();
    return dense[own];
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    DepOp& op = ops[i];
    if (op.launch == model::kNoLaunch) {
      ++g.counts.launches_untied;
      continue;
    }
    ++g.counts.launches_tied;
    if (op.bound) ++g.counts.launch_bound;
    op.latency = op.bound ? op.start - op.launch : std::min(op.start - op.launch, least);
    op.thread = thread(static_cast<uint32_t>(op.thread));
    threads[op.thread].push_back({op.launch, static_cast<int32_t>(i), -1});
  }
  // A sync ties to the last op that ended before it returned, if that op ended while it waited.
  const auto& by_end = g.by_end[r];
  const int64_t last_end = ops.empty() ? INT64_MIN : ops[by_end.back()].end;
  for (const model::HostSync& s : syncs) {
    if (s.end < g.window_start || s.start > last_end) continue;
    DepSync d{s.start, s.end, -1, 0};
    const size_t k =
        std::upper_bound(by_end.begin(), by_end.end(), s.end, [&](int64_t v, int32_t i) { return v < ops[i].end; }) -
        by_end.begin();
    if (k > 0) {
      const int32_t j = by_end[k - 1];
      if (ops[j].end >= s.start && s.end - ops[j].end <= kSyncReturnNs) d.tied = j, d.ret = s.end - ops[j].end;
    }
    ++(d.tied >= 0 ? g.counts.syncs_tied : g.counts.syncs_untied);
    threads[thread(s.thread)].push_back({s.start, -1, static_cast<int32_t>(deps.size())});
    deps.push_back(d);
  }
  for (auto& events : threads) {
    std::stable_sort(events.begin(), events.end(), [](const HostEvent& a, const HostEvent& b) { return a.t < b.t; });
    for (size_t e = 0; e < events.size(); ++e) {
      if (events[e].op < 0) continue;
      DepOp& op = ops[events[e].op];
      op.event = static_cast<int32_t>(e);
      op.after_sync = e == 0 || events[e - 1].op < 0;
      if (e == 0) continue;
      const HostEvent& prev = events[e - 1];
      op.host_before = std::max<int64_t>(0, op.launch - (prev.op >= 0 ? ops[prev.op].launch : deps[prev.sync].end));
    }
  }
}

// The NCCL instances (analysis/comm_match.h's matching), each op's transfer after the last arrival.
void TieInstances(Graph& g) {
  const size_t ranks = g.ranks.size();
  std::vector<RankModuleTimes> sweeps(ranks);
  std::vector<std::array<std::vector<int32_t>, model::kNumOpClasses>> index(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    for (size_t i = 0; i < g.ranks[r].size(); ++i) {
      const DepOp& op = g.ranks[r][i];
      if (!model::IsComm(op.cls)) continue;
      const int c = static_cast<int>(op.cls);
      sweeps[r].comm_ops[c].push_back({op.start, op.end, op.node});
      index[r][c].push_back(static_cast<int32_t>(i));
    }
  }
  std::vector<const RankModuleTimes*> ptrs;
  for (const auto& s : sweeps) ptrs.push_back(&s);
  const CommMatch match = MatchComm(ptrs);
  std::map<std::pair<int, int64_t>, int32_t> instance_of;  // (kind, instance) -> Graph::instances
  for (int c = 0; c < model::kNumOpClasses; ++c) {
    for (size_t r = 0; r < match.splits[c].size(); ++r) {
      for (size_t k = 0; k < match.splits[c][r].size(); ++k) {
        const CommOpSplit& s = match.splits[c][r][k];
        if (!s.matched) {
          ++g.counts.nccl_untied_ops;
          continue;
        }
        auto [it, added] = instance_of.try_emplace({c, s.instance}, static_cast<int32_t>(g.instances.size()));
        if (added) g.instances.emplace_back();
        g.instances[it->second].push_back({static_cast<int32_t>(r), index[r][c][k]});
        ++g.counts.nccl_tied_ops;
      }
    }
  }
  for (size_t n = 0; n < g.instances.size(); ++n) {
    int64_t last = INT64_MIN;
    for (auto [r, i] : g.instances[n]) last = std::max(last, g.ranks[r][i].start);
    for (auto [r, i] : g.instances[n]) {
      DepOp& op = g.ranks[r][i];
      op.instance = static_cast<int32_t>(n);
      op.transfer = op.end - last;
    }
  }
  g.counts.nccl_instances = static_cast<int64_t>(g.instances.size());
}

Graph BuildGraph(const ReplayInput& in) {
  Graph g;
  g.window_start = in.window_start;
  static const std::vector<model::HostLaunch> no_launches;
  static const std::vector<model::HostSync> no_syncs;
  for (size_t r = 0; r < in.ranks.size(); ++r) {
    const bool known = r < in.launches.size() && in.launches[r].size() == in.ranks[r].size() && !in.ranks[r].empty();
    AddRank(in.ranks[r], known ? in.launches[r] : no_launches, g);
    AddHost(r, known, known && r < in.syncs.size() ? in.syncs[r] : no_syncs, g);
  }
  TieInstances(g);
  return g;
}

// The graph's durations and gaps under a set of edits.
struct Timing {
  std::vector<std::vector<int64_t>> dur;  // compute: duration; NCCL: its transfer when matched, else its duration
  std::vector<std::vector<int64_t>> gap, lag;
  std::vector<std::vector<char>> hidden;  // NCCL ops whose transfer runs alongside the compute after them
  // By op: the host's time before its launch call changed by this much (an edit that gives the
  // host time back: HostDeltas, time*K); the thread's later calls move with it, up to a tied sync.
  std::vector<std::vector<int64_t>> host;
  // Per rank: the GPU gap a launch-bound op keeps after the ops before it once its call comes
  // early enough (0 as measured: its call, not a gap, held it; launch-gaps:0 sets the GPU's own).
  std::vector<int64_t> bound_gap;
  int64_t edited = 0;
};

Timing Measured(const Graph& g) {
  Timing t;
  t.bound_gap.assign(g.ranks.size(), 0);
  for (const auto& ops : g.ranks) {
    auto &dur = t.dur.emplace_back(), &gap = t.gap.emplace_back(), &lag = t.lag.emplace_back();
    t.hidden.emplace_back(ops.size(), 0);
    t.host.emplace_back(ops.size(), 0);
    for (const DepOp& op : ops) {
      dur.push_back(op.instance >= 0 ? op.transfer : op.end - op.start);
      gap.push_back(op.gap);
      lag.push_back(op.lag);
    }
  }
  return t;
}

// After an edit of gaps: a launch-bound op's start waits for its launch, so a change of its gap is
// a change of the host's time before that launch.
void HostDeltas(const Graph& g, Timing& t) {
  for (size_t r = 0; r < g.ranks.size(); ++r) {
    for (size_t i = 0; i < g.ranks[r].size(); ++i) {
      if (g.ranks[r][i].bound) t.host[r][i] = t.gap[r][i] - g.ranks[r][i].gap;
    }
  }
}

// What set an op's replayed start: the window's start, the ops done before it (plus its gap), the
// op launched before it on another stream (its launch distance), or its own launch call.
enum class Bind : uint8_t { kWindow, kDone, kLaunch, kHost };

// The graph re-timed: each op's start and end under a Timing (see replay.h).
class Replayer {
 public:
  Replayer(const Graph& g, const Timing& t) : g_(g), t_(t) {
    const size_t n = g.ranks.size();
    state_.resize(n), start_.resize(n), end_.resize(n), bind_.resize(n), arg_.resize(n);
    launch_.resize(n), anchor_.resize(n), cursor_.resize(n), sync_called_.resize(n), sync_waited_.resize(n);
    next_.assign(n, 0), done_ptr_.assign(n, 0), all_.assign(n, {0, -1}), vis_.assign(n, {0, -1});
    for (size_t r = 0; r < n; ++r) {
      const size_t m = g.ranks[r].size();
      state_[r].assign(m, 0), start_[r].assign(m, 0), end_[r].assign(m, INT64_MIN);
      bind_[r].assign(m, Bind::kWindow), arg_[r].assign(m, -1);
      launch_[r].assign(m, INT64_MIN), anchor_[r].assign(m, -1);
      cursor_[r].resize(g.host[r].size());
      sync_called_[r].assign(g.syncs[r].size(), 0), sync_waited_[r].assign(g.syncs[r].size(), -1);
    }
    for (size_t r = 0; r < n; ++r) {
      if (!g.ranks[r].empty()) ProcessUpTo(r, g.ranks[r].size() - 1);
    }
    for (size_t r = 0; r < n; ++r) {
      for (size_t i = 0; i < g.ranks[r].size(); ++i) End(r, i);
    }
    BuildPrefixes();
  }

  int64_t Start(size_t r, size_t i) {
    if (state_[r][i] == 2) return start_[r][i];
    if (state_[r][i] == 1) {  // a tie the order could not settle: its measured start
      ++cycles_;
      return g_.ranks[r][i].start;
    }
    ProcessUpTo(r, i);
    return state_[r][i] == 2 ? start_[r][i] : g_.ranks[r][i].start;
  }

  int64_t End(size_t r, size_t i) {
    if (end_[r][i] != INT64_MIN) return end_[r][i];
    const DepOp& op = g_.ranks[r][i];
    int64_t from = Start(r, i);
    if (op.instance >= 0) {
      for (auto [q, p] : g_.instances[op.instance]) from = std::max(from, Start(q, p));
    }
    return end_[r][i] = from + t_.dur[r][i];
  }

  // Where a boundary at measured time `t` lands on rank r: after the last op the rank finished
  // by then, plus the measured host time since. `arg`: that op (-1: none, `t` unmoved).
  int64_t Boundary(size_t r, int64_t t, int32_t& arg) const {
    const auto& by_end = g_.by_end[r];
    const auto& ops = g_.ranks[r];
    size_t k = std::upper_bound(by_end.begin(), by_end.end(), t, [&](int64_t v, int32_t i) { return v < ops[i].end; }) -
               by_end.begin();
    if (k == 0) {
      arg = -1;
      return t;
    }
    arg = prefix_arg_[r][k - 1];
    return prefix_max_[r][k - 1] + (t - ops[by_end[k - 1]].end);
  }

  int64_t cycles() const { return cycles_; }
  Bind bind(size_t r, size_t i) const { return bind_[r][i]; }
  int32_t arg(size_t r, size_t i) const { return arg_[r][i]; }
  // kHost: the op whose end the host thread last waited for (a tied sync) before this launch; -1:
  // none in the window (the host's own pace since the window's start).
  int32_t anchor(size_t r, size_t i) const { return anchor_[r][i]; }
  int64_t launch(size_t r, size_t i) const { return launch_[r][i]; }
  // A sync of the host events timed so far: when it was called, and the op whose replayed end it
  // returned after (-1: it returned after its own call, or is untied).
  int64_t sync_called(size_t r, size_t s) const { return sync_called_[r][s]; }
  int32_t sync_waited(size_t r, size_t s) const { return sync_waited_[r][s]; }
  int64_t start(size_t r, size_t i) const { return start_[r][i]; }
  int64_t end(size_t r, size_t i) const { return end_[r][i]; }

 private:
  struct Max {
    int64_t val;
    int32_t arg;
  };
  // A host thread replayed up to one of its events: how far its calls moved, and the op it last
  // waited for.
  struct Cursor {
    size_t next = 0;
    int64_t delta = 0;
    int32_t anchor = -1;
    bool busy = false;
  };

  // Op i's launch call, replayed: its thread's events up to it, each launch moved by the host's
  // shift so far (plus its own edit), each tied sync returning after its op's replayed end.
  int64_t LaunchAt(size_t r, size_t i) {
    if (launch_[r][i] != INT64_MIN) return launch_[r][i];
    const DepOp& op = g_.ranks[r][i];
    Cursor& c = cursor_[r][op.thread];
    if (c.busy) {  // the measured order would have to run backwards: as measured, shifted
      ++cycles_;
      return op.launch + c.delta;
    }
    c.busy = true;
    const auto& events = g_.host[r][op.thread];
    while (c.next <= static_cast<size_t>(op.event)) {
      const HostEvent& e = events[c.next++];
      if (e.op >= 0) {
        c.delta += t_.host[r][e.op];
        launch_[r][e.op] = g_.ranks[r][e.op].launch + c.delta;
        anchor_[r][e.op] = c.anchor;
        continue;
      }
      const DepSync& s = g_.syncs[r][e.sync];
      const int64_t called = s.start + c.delta;
      sync_called_[r][e.sync] = called;
      if (s.tied < 0) continue;
      const int64_t done = End(r, s.tied);
      if (done >= called) c.anchor = s.tied, sync_waited_[r][e.sync] = s.tied;  // the GPU set the host's pace
      c.delta = std::max(called, done) + s.ret - s.end;
    }
    c.busy = false;
    return launch_[r][i];
  }

  void ProcessUpTo(size_t r, size_t i) {
    while (next_[r] <= i) ProcessOne(r, next_[r]++);
  }

  void ProcessOne(size_t r, size_t i) {
    state_[r][i] = 1;
    const DepOp& op = g_.ranks[r][i];
    while (done_ptr_[r] < static_cast<size_t>(op.done)) {
      const int32_t j = g_.by_end[r][done_ptr_[r]++];
      const int64_t e = End(r, j);
      if (all_[r].arg < 0 || e > all_[r].val) all_[r] = {e, j};
      if (!t_.hidden[r][j] && (vis_[r].arg < 0 || e > vis_[r].val)) vis_[r] = {e, j};
    }
    const Max& ref = model::IsComm(op.cls) ? all_[r] : vis_[r];
    // A launch-bound op waits for its launch, not for a gap after the ops before it.
    int64_t s = (ref.arg >= 0 ? ref.val : g_.window_start) + (op.bound ? t_.bound_gap[r] : t_.gap[r][i]);
    bind_[r][i] = ref.arg >= 0 ? Bind::kDone : Bind::kWindow;
    arg_[r][i] = ref.arg;
    if (t_.lag[r][i] >= 0 && i > 0) {
      const int64_t l = Start(r, i - 1) + t_.lag[r][i];
      if (l > s) s = l, bind_[r][i] = Bind::kLaunch, arg_[r][i] = static_cast<int32_t>(i - 1);
    }
    if (op.thread >= 0) {
      const int64_t l = LaunchAt(r, i) + op.latency;
      if (l > s) s = l, bind_[r][i] = Bind::kHost;
    }
    start_[r][i] = s;
    state_[r][i] = 2;
  }

  void BuildPrefixes() {
    prefix_max_.resize(g_.ranks.size()), prefix_arg_.resize(g_.ranks.size());
    for (size_t r = 0; r < g_.ranks.size(); ++r) {
      int64_t best = INT64_MIN;
      int32_t arg = -1;
      for (int32_t j : g_.by_end[r]) {
        if (end_[r][j] > best) best = end_[r][j], arg = j;
        prefix_max_[r].push_back(best);
        prefix_arg_[r].push_back(arg);
      }
    }
  }

  const Graph& g_;
  const Timing& t_;
  std::vector<std::vector<char>> state_;  // 0: not yet, 1: being timed, 2: start known
  std::vector<std::vector<int64_t>> start_, end_;
  std::vector<std::vector<Bind>> bind_;
  std::vector<std::vector<int32_t>> arg_;
  std::vector<std::vector<int64_t>> launch_;  // replayed launch calls (INT64_MIN: not yet)
  std::vector<std::vector<int32_t>> anchor_;  // see anchor()
  std::vector<std::vector<Cursor>> cursor_;   // [rank][thread]
  std::vector<std::vector<int64_t>> sync_called_;
  std::vector<std::vector<int32_t>> sync_waited_;
  std::vector<size_t> next_, done_ptr_;
  std::vector<Max> all_, vis_;  // the latest end of the ops done so far (vis_: less hidden transfers)
  std::vector<std::vector<int64_t>> prefix_max_;
  std::vector<std::vector<int32_t>> prefix_arg_;
  int64_t cycles_ = 0;
};

struct Span {
  int64_t start = 0, end = 0;
  size_t rank = 0;  // of the end
  int32_t op = -1;  // the op the end follows on that rank
};

// An iteration's replayed start and end: each boundary after the rank that reaches it last.
Span ReplayIteration(const Replayer& rp, size_t ranks, const model::IterationTime& it) {
  Span s{INT64_MIN, INT64_MIN};
  for (size_t r = 0; r < ranks; ++r) {
    int32_t a = -1;
    s.start = std::max(s.start, rp.Boundary(r, it.start_ns, a));
    const int64_t e = rp.Boundary(r, it.end_ns, a);
    if (e > s.end) s.end = e, s.rank = r, s.op = a;
  }
  return s;
}

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size();
  return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

std::string ModuleName(const ReplayInput& in, uint16_t node) {
  if (!in.nodes || node >= in.nodes->size()) return "[unattributed]";
  return (*in.nodes)[node].name;
}

// The critical path of one iteration, walked back from its end (see model::CriticalSegment).
class PathWalker {
 public:
  PathWalker(const ReplayInput& in, const Graph& g, const Replayer& rp) : in_(in), g_(g), rp_(rp) {}

  std::vector<model::CriticalSegment> Walk(const Span& span) {
    sums_.clear();
    stretches_.clear();
    floor_ = span.start;
    size_t r = span.rank;
    int32_t op = span.op;
    if (!Add(r, "host gap", "", op >= 0 ? rp_.end(r, op) : span.start, span.end)) op = -1;
    int64_t steps = (g_.counts.ops + g_.counts.syncs_tied + g_.counts.syncs_untied) * 3 + 8;
    bool at_end = true;  // at op's end (else at its start)
    while (op >= 0 && steps-- > 0) {
      if (at_end) {
        std::tie(r, op, at_end) = BackFromEnd(r, op);
      } else {
        std::tie(r, op, at_end) = BackFromStart(r, op);
      }
    }
    std::vector<model::CriticalSegment> out;
    for (const auto& [key, v] : sums_) {
      out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), v.first, v.second});
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return std::tie(b.ns, a.rank, a.kind, a.module) < std::tie(a.ns, b.rank, b.kind, b.module);
    });
    return out;
  }

  // The last walk's path in time order, a stretch per run on one rank (empty when it had more
  // than model::kMaxPathStretches).
  std::vector<model::PathStretch> Path() const {
    std::vector<model::PathStretch> out;
    if (stretches_.size() > model::kMaxPathStretches) return out;
    for (auto it = stretches_.rbegin(); it != stretches_.rend(); ++it) {
      const auto most = std::max_element(it->kinds.begin(), it->kinds.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
      out.push_back({it->rank, it->start, it->end, most == it->kinds.end() ? "" : most->first});
    }
    return out;
  }

 private:
  using Step = std::tuple<size_t, int32_t, bool>;

  // Adds [from, to) clipped at the iteration's start; false once the path reached it.
  bool Add(size_t r, const std::string& kind, const std::string& module, int64_t from, int64_t to) {
    const int64_t a = std::max(from, floor_);
    if (to > a) {
      auto& v = sums_[{static_cast<int>(r), kind, module}];
      v.first += to - a, ++v.second;
      // Walked back from the end: a step on the rank of the latest stretch extends it.
      if (stretches_.empty() || stretches_.back().rank != static_cast<int>(r)) {
        if (stretches_.size() <= model::kMaxPathStretches) stretches_.push_back({static_cast<int>(r), a, to, {}});
      }
      if (stretches_.back().rank == static_cast<int>(r)) {
        Stretch& st = stretches_.back();
        st.start = std::min(st.start, a), st.end = std::max(st.end, to);
        st.kinds[kind] += to - a;
      }
    }
    return from > floor_;
  }

  Step BackFromEnd(size_t r, int32_t i) {
    const DepOp& op = g_.ranks[r][i];
    const std::string module = ModuleName(in_, op.node);
    if (!model::IsComm(op.cls)) {
      return Add(r, "compute", module, rp_.start(r, i), rp_.end(r, i)) ? Step{r, i, false} : Step{r, -1, false};
    }
    size_t lr = r;
    int32_t li = i;
    if (op.instance >= 0) {  // the transfer after the last arrival, then that arrival
      for (auto [q, p] : g_.instances[op.instance]) {
        if (rp_.start(q, p) > rp_.start(lr, li)) lr = q, li = p;
      }
    }
    if (!Add(r, "transfer", module, rp_.start(lr, li), rp_.end(r, i))) return {r, -1, false};
    return {lr, li, false};
  }

  Step BackFromStart(size_t r, int32_t i) {
    const int64_t s = rp_.start(r, i);
    const int32_t a = rp_.arg(r, i);
    switch (rp_.bind(r, i)) {
      case Bind::kLaunch:
        return Add(r, "launch gap", ModuleName(in_, g_.ranks[r][i].node), rp_.start(r, a), s) ? Step{r, a, false}
                                                                                              : Step{r, -1, false};
      case Bind::kDone: {
        const int64_t from = rp_.end(r, a);
        const char* kind = s - from < model::kLaunchGapNs ? "launch gap" : "host gap";
        return Add(r, kind, ModuleName(in_, g_.ranks[r][i].node), from, s) ? Step{r, a, true} : Step{r, -1, false};
      }
      case Bind::kWindow:
        Add(r, "host gap", ModuleName(in_, g_.ranks[r][i].node), g_.window_start, s);
        return {r, -1, false};
      case Bind::kHost:
        return BackAlongHost(r, i);
    }
    return {r, -1, false};
  }

  // A launch-bound op: back along its host thread, each call's time before it going to the module
  // of the op it launched, to the sync that waited for a GPU op (then that op's end), or to the
  // iteration's start.
  Step BackAlongHost(size_t r, int32_t i) {
    const Step stop{r, -1, false};
    const DepOp& op = g_.ranks[r][i];
    const auto& events = g_.host[r][op.thread];
    std::string module = ModuleName(in_, op.node);
    int64_t to = rp_.launch(r, i);
    if (!Add(r, "host", module, to, rp_.start(r, i))) return stop;
    for (int32_t k = op.event - 1; k >= 0; --k) {
      const HostEvent& e = events[k];
      if (e.op >= 0) {
        const int64_t from = rp_.launch(r, e.op);
        if (!Add(r, "host", module, from, to)) return stop;
        to = from, module = ModuleName(in_, g_.ranks[r][e.op].node);
        continue;
      }
      const int32_t j = rp_.sync_waited(r, e.sync);
      if (j >= 0) {  // returned after op j's end: the sync's return, then the host's time since
        const int64_t back = rp_.end(r, j) + g_.syncs[r][e.sync].ret;
        if (!Add(r, "host", module, back, to) || !Add(r, "sync", module, rp_.end(r, j), back)) return stop;
        return {r, j, true};
      }
      const int64_t from = rp_.sync_called(r, e.sync);
      if (!Add(r, "host", module, from, to)) return stop;
      to = from;
    }
    Add(r, "host", module, g_.window_start, to);
    return stop;
  }

  const ReplayInput& in_;
  const Graph& g_;
  const Replayer& rp_;
  int64_t floor_ = 0;
  std::map<std::tuple<int, std::string, std::string>, std::pair<int64_t, int64_t>> sums_;
  struct Stretch {
    int rank;
    int64_t start, end;
    std::map<std::string, int64_t> kinds;  // ns by kind
  };
  std::vector<Stretch> stretches_;  // latest first
};

// Which module nodes an edit's glob names: a node whose name, or an ancestor's, matches.
std::vector<char> NodesMatching(const ReplayInput& in, const std::string& glob) {
  if (!in.nodes) return std::vector<char>(1, GlobMatch(glob, "[unattributed]"));
  const auto& nodes = *in.nodes;
  std::vector<char> out(nodes.size(), 0);
  for (size_t n = 0; n < nodes.size(); ++n) {  // a parent's id is smaller than its children's
    out[n] = GlobMatch(glob, nodes[n].name) || (nodes[n].parent >= 0 && out[nodes[n].parent]);
  }
  return out;
}

// The median gap before the NCCL ops of every rank but `rank`.
int64_t OthersCommGap(const Graph& g, const Timing& t, size_t rank) {
  std::vector<int64_t> gaps;
  for (size_t r = 0; r < g.ranks.size(); ++r) {
    if (r == rank) continue;
    for (size_t i = 0; i < g.ranks[r].size(); ++i) {
      if (model::IsComm(g.ranks[r][i].cls)) gaps.push_back(t.gap[r][i]);
    }
  }
  return Median(std::move(gaps));
}

std::string ApplyOnTime(const Graph& g, const WhatIfEdit& e, Timing& t) {
  if (e.rank < 0 || static_cast<size_t>(e.rank) >= g.ranks.size()) {
    return fmt::format("no rank {} in the run: nothing changed", e.rank);
  }
  const int64_t median = OthersCommGap(g, t, e.rank);
  int64_t cut = 0;
  for (size_t i = 0; i < g.ranks[e.rank].size(); ++i) {
    if (!model::IsComm(g.ranks[e.rank][i].cls) || t.gap[e.rank][i] <= median) continue;
    cut += t.gap[e.rank][i] - median;
    t.gap[e.rank][i] = median, ++t.edited;
  }
  HostDeltas(g, t);
  return fmt::format(
      "rank {}'s GPU gaps before its NCCL launches brought to the other ranks' median ({:.3f} ms): "
      "{:.3f} ms less idle",
      e.rank, static_cast<double>(median) / 1e6, static_cast<double>(cut) / 1e6);
}

// What CUDA graphs give: the launch calls between two syncs made at once (the host's time before
// each call removed, but for the first after a sync: a graph cannot hold a sync, so the host's
// work between a sync and the next launch stays, and so do the syncs), each op then following the
// one before it after the rank's least measured gap of a queued op (Graph::queued_gap; the other
// ops' GPU gaps and launch distances under kLaunchGapNs brought down to it).
std::string ApplyLaunchGaps(const Graph& g, Timing& t) {
  int64_t host = 0, gpu = 0;
  for (size_t r = 0; r < g.ranks.size(); ++r) {
    for (size_t i = 0; i < g.ranks[r].size(); ++i) {
      const DepOp& op = g.ranks[r][i];
      if (op.thread >= 0 && op.host_before > 0 && !op.after_sync) {
        host += op.host_before, t.host[r][i] = -op.host_before, ++t.edited;
      }
      if (op.bound) continue;  // its start waits for its call, not for its gap
      for (int64_t* v : {&t.gap[r][i], &t.lag[r][i]}) {
        const int64_t to = std::min(*v, g.queued_gap[r]);
        if (*v > to && *v < model::kLaunchGapNs) gpu += *v - to, *v = to, ++t.edited;
      }
    }
    t.bound_gap[r] = g.queued_gap[r];
  }
  return fmt::format(
      "the launch calls between two syncs made at once ({:.3f} ms of host time before them removed; the syncs "
      "and the host's time after each stay); each op then follows the one before it after its rank's least gap "
      "of a queued op ({:.2f} us on rank 0), the other GPU gaps under {:.1f} ms brought down to it ({:.3f} ms)",
      static_cast<double>(host) / 1e6, g.queued_gap.empty() ? 0.0 : static_cast<double>(g.queued_gap[0]) / 1e3,
      static_cast<double>(model::kLaunchGapNs) / 1e6, static_cast<double>(gpu) / 1e6);
}

// An NCCL op `i` whose transfer now runs alongside the compute after it: that compute (the kernels
// of the rank up to its next NCCL op, for as long as the transfer lasts) is slowed by its module's
// overlap tax. Returns the time added.
int64_t TaxComputeAlongside(const ReplayInput& in, const std::vector<DepOp>& ops, size_t i, std::vector<int64_t>& dur) {
  int64_t budget = ops[i].transfer, added = 0;
  for (size_t j = i + 1; j < ops.size() && budget > 0 && !model::IsComm(ops[j].cls); ++j) {
    if (!model::IsKernelCompute(ops[j].cls)) continue;
    const double tax = ops[j].node < in.overlap_tax.size() ? in.overlap_tax[ops[j].node] : 0;
    const int64_t alongside = std::min(budget, dur[j]);
    budget -= alongside;
    const int64_t more = std::llround(static_cast<double>(alongside) * tax);
    dur[j] += more;
    added += more;
  }
  return added;
}

// Scales compute or transfers, or hides transfers, of the ops whose module matches.
std::string ApplyModuleEdit(const ReplayInput& in, const Graph& g, const WhatIfEdit& e, Timing& t) {
  const std::vector<char> match = NodesMatching(in, e.glob);
  int64_t before = 0, after = 0, ops = 0, gaps = 0, taxed = 0;
  for (size_t r = 0; r < g.ranks.size(); ++r) {
    if (e.rank >= 0 && static_cast<size_t>(e.rank) != r) continue;
    for (size_t i = 0; i < g.ranks[r].size(); ++i) {
      const DepOp& op = g.ranks[r][i];
      if (op.node >= match.size() || !match[op.node]) continue;
      const bool comm = model::IsComm(op.cls);
      const bool compute = e.kind == WhatIfEdit::Kind::kCompute || e.kind == WhatIfEdit::Kind::kTime;
      if (e.kind == WhatIfEdit::Kind::kGemm ? op.cls != OpClass::kGemm
          : compute                         ? !model::IsKernelCompute(op.cls)
                                            : !comm) {
        continue;
      }
      ++ops, ++t.edited;
      if (e.kind == WhatIfEdit::Kind::kTime) {
        // The host's time before the launch scaled alike; without a launch call, the GPU gap.
        gaps += op.thread >= 0 ? op.host_before : t.gap[r][i];
        t.host[r][i] += std::llround(static_cast<double>(op.host_before) * (e.factor - 1));
        t.gap[r][i] = std::llround(static_cast<double>(t.gap[r][i]) * e.factor);
        if (t.lag[r][i] > 0) t.lag[r][i] = std::llround(static_cast<double>(t.lag[r][i]) * e.factor);
      }
      if (e.kind == WhatIfEdit::Kind::kOverlap) {
        t.hidden[r][i] = 1;
        taxed += TaxComputeAlongside(in, g.ranks[r], i, t.dur[r]);
        continue;
      }
      before += t.dur[r][i];
      t.dur[r][i] = std::llround(static_cast<double>(t.dur[r][i]) * e.factor);
      after += t.dur[r][i];
    }
  }
  const char* what = e.kind == WhatIfEdit::Kind::kTransfer || e.kind == WhatIfEdit::Kind::kOverlap ? "NCCL ops"
                     : e.kind == WhatIfEdit::Kind::kGemm                                           ? "GEMM kernels"
                                                                                                   : "compute ops";
  if (e.kind == WhatIfEdit::Kind::kOverlap) {
    return fmt::format(
        "{} {} of modules matching '{}' run alongside the compute after them{}", ops, what, e.glob,
        taxed > 0 ? fmt::format(" (that compute {:.3f} ms slower over the window and ranks: the measured overlap tax)",
                                static_cast<double>(taxed) / 1e6)
                  : "");
  }
  return fmt::format("{} {} of modules matching '{}': {:.3f} ms -> {:.3f} ms{}", ops, what, e.glob,
                     static_cast<double>(before) / 1e6, static_cast<double>(after) / 1e6,
                     e.kind == WhatIfEdit::Kind::kTransfer ? " of transfer"
                     : e.kind == WhatIfEdit::Kind::kTime
                         ? fmt::format(", and the {:.3f} ms of host time before their launches scaled alike",
                                       static_cast<double>(gaps) / 1e6)
                         : "");
}

std::vector<int64_t> IterationTimes(const Replayer& rp, const Graph& g, const ReplayInput& in) {
  std::vector<int64_t> out;
  for (const auto& it : in.iterations) {
    const Span s = ReplayIteration(rp, g.ranks.size(), it);
    out.push_back(s.end - s.start);
  }
  return out;
}

model::WhatIf RunEdit(const ReplayInput& in, const Graph& g, const WhatIfEdit& e) {
  Timing t = Measured(g);
  model::WhatIf w;
  w.edit = e.text;
  switch (e.kind) {
    case WhatIfEdit::Kind::kOnTime:
      w.description = ApplyOnTime(g, e, t);
      break;
    case WhatIfEdit::Kind::kLaunchGaps:
      w.description = ApplyLaunchGaps(g, t);
      break;
    default:
      w.description = ApplyModuleEdit(in, g, e, t);
      break;
  }
  w.edited = t.edited;
  const Replayer rp(g, t);
  w.predicted_iter_ns = IterationTimes(rp, g, in);
  w.predicted_iter_median_ns = Median(w.predicted_iter_ns);
  return w;
}

// The edits the verdict tries: each rank on time, launch gaps removed, and the transfers of
// the (at most three) modules with the most NCCL time overlapped with their compute.
std::vector<WhatIfEdit> Candidates(const ReplayInput& in, const Graph& g) {
  std::vector<WhatIfEdit> out;
  for (size_t r = 0; g.ranks.size() >= 2 && r < g.ranks.size(); ++r) {
    out.push_back({fmt::format("rank {}:on-time", r), WhatIfEdit::Kind::kOnTime, "", static_cast<int>(r), 1});
  }
  out.push_back({"launch-gaps:0", WhatIfEdit::Kind::kLaunchGaps, "", -1, 1});
  std::map<std::string, int64_t> comm_ns;
  for (const auto& ops : g.ranks) {
    for (const DepOp& op : ops) {
      if (model::IsComm(op.cls) && op.instance >= 0 && op.node != kUnattributed) {
        comm_ns[ModuleName(in, op.node)] += op.transfer;
      }
    }
  }
  std::vector<std::pair<int64_t, std::string>> top;
  for (const auto& [name, ns] : comm_ns) top.push_back({-ns, name});
  std::sort(top.begin(), top.end());
  for (size_t k = 0; k < top.size() && k < 3; ++k) {
    out.push_back({top[k].second + ":overlap", WhatIfEdit::Kind::kOverlap, top[k].second, -1, 1});
  }
  return out;
}

void SelfCheck(const ReplayInput& in, const Graph& g, model::Replay& out) {
  const Replayer rp(g, Measured(g));
  out.graph.cycles = rp.cycles();
  PathWalker walker(in, g, rp);
  std::vector<int64_t> measured, replayed;
  for (const auto& it : in.iterations) {
    const Span s = ReplayIteration(rp, g.ranks.size(), it);
    model::IterationReplay ir;
    ir.name = it.name;
    ir.measured_ns = it.end_ns - it.start_ns;
    ir.replay_ns = s.end - s.start;
    ir.critical_path = walker.Walk(s);
    ir.path = walker.Path();
    if (ir.measured_ns > 0) {
      const double err = std::abs(static_cast<double>(ir.replay_ns - ir.measured_ns)) / ir.measured_ns;
      out.self_check_max_error = std::max(out.self_check_max_error, err);
    }
    measured.push_back(ir.measured_ns), replayed.push_back(ir.replay_ns);
    out.iterations.push_back(std::move(ir));
  }
  out.measured_iter_median_ns = Median(measured);
  out.replay_iter_median_ns = Median(replayed);
  out.self_check_ok = out.self_check_max_error <= model::kReplaySelfCheckLimit;
}

bool ParseFactor(std::string_view s, double& out) {
  auto number = [](std::string_view t, double& v) {
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    return ec == std::errc() && p == t.data() + t.size() && std::isfinite(v) && v >= 0;
  };
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos) return number(s, out);
  double a = 0, b = 0;
  if (!number(s.substr(0, slash), a) || !number(s.substr(slash + 1), b) || b == 0) return false;
  out = a / b;
  return true;
}

}  // namespace

bool GlobMatch(std::string_view glob, std::string_view name) {
  size_t g = 0, n = 0, star = std::string_view::npos, back = 0;
  while (n < name.size()) {
    if (g < glob.size() && (glob[g] == '?' || glob[g] == name[n])) {
      ++g, ++n;
    } else if (g < glob.size() && glob[g] == '*') {
      star = g++, back = n;
    } else if (star != std::string_view::npos) {
      g = star + 1, n = ++back;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

StatusOr<WhatIfEdit> ParseWhatIf(std::string_view text) {
  WhatIfEdit e;
  e.text = std::string(text);
  const auto bad = [&](std::string_view why) {
    return Status(ExitCode::kUsage,
                  fmt::format("--what-if '{}': {}. Forms: 'GLOB:compute*K', 'GLOB:gemm*K', 'GLOB:transfer*K', "
                              "'GLOB:time*K', "
                              "'GLOB:overlap' (each optionally after 'rank R:'), 'rank R:on-time', 'launch-gaps:0'",
                              text, why));
  };
  if (text == "launch-gaps:0") return WhatIfEdit{e.text, WhatIfEdit::Kind::kLaunchGaps, "", -1, 1};
  std::string_view rest = text;
  if (rest.substr(0, 5) == "rank ") {
    const size_t colon = rest.find(':');
    int r = -1;
    std::string_view num = rest.substr(5, colon == std::string_view::npos ? std::string_view::npos : colon - 5);
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), r);
    if (ec != std::errc() || p != num.data() + num.size() || r < 0) return bad("the rank is not a number");
    if (colon == std::string_view::npos) return bad("nothing after the rank");
    e.rank = r;
    rest = rest.substr(colon + 1);
    if (rest == "on-time") return e.kind = WhatIfEdit::Kind::kOnTime, e;
  }
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad("no 'GLOB:' before the change");
  e.glob = std::string(rest.substr(0, colon));
  const std::string_view change = rest.substr(colon + 1);
  if (change == "overlap") return e.kind = WhatIfEdit::Kind::kOverlap, e;
  for (auto [prefix, kind] :
       {std::pair{"compute*", WhatIfEdit::Kind::kCompute}, std::pair{"gemm*", WhatIfEdit::Kind::kGemm},
        std::pair{"transfer*", WhatIfEdit::Kind::kTransfer}, std::pair{"time*", WhatIfEdit::Kind::kTime}}) {
    const std::string_view p(prefix);
    if (change.substr(0, p.size()) != p) continue;
    if (!ParseFactor(change.substr(p.size()), e.factor)) return bad("the factor is not a number or a fraction");
    e.kind = kind;
    return e;
  }
  return bad("unknown change");
}

model::Replay ReplayRun(const ReplayInput& in, const std::vector<WhatIfEdit>& edits) {
  model::Replay out;
  if (in.iterations.empty()) {
    out.why_not = "the window holds no steady iteration (the replay predicts per iteration)";
    return out;
  }
  if (in.ranks.empty()) {
    out.why_not = "no GPU work in the window";
    return out;
  }
  const Graph g = BuildGraph(in);
  out.built = true;
  out.graph = g.counts;
  // The self-check and every edit re-time the same graph, each on a timing of its own: one per
  // thread (results in per-item slots, so nothing depends on the thread count), as many at once
  // as kReplayThreads and kTimingBudget allow.
  std::vector<WhatIfEdit> all = edits;
  if (in.candidates) {
    for (auto& e : Candidates(in, g)) all.push_back(std::move(e));
  }
  std::vector<model::WhatIf> results(all.size());
  const int64_t timing = std::max<int64_t>(1, g.counts.ops * kTimingBytesPerOp);
  const size_t threads = std::clamp<size_t>(static_cast<size_t>(kTimingBudget / timing), 1,
                                            std::min(std::max<size_t>(in.threads, 1), kReplayThreads));
  ParallelFor(threads, all.size() + 1, [&](size_t i) {
    if (i == all.size()) {
      SelfCheck(in, g, out);
    } else {
      results[i] = RunEdit(in, g, all[i]);
    }
  });
  out.what_ifs.assign(std::make_move_iterator(results.begin()),
                      std::make_move_iterator(results.begin() + static_cast<std::ptrdiff_t>(edits.size())));
  out.opportunities.assign(std::make_move_iterator(results.begin() + static_cast<std::ptrdiff_t>(edits.size())),
                           std::make_move_iterator(results.end()));
  std::stable_sort(out.opportunities.begin(), out.opportunities.end(), [](const auto& a, const auto& b) {
    return a.predicted_iter_median_ns < b.predicted_iter_median_ns;
  });
  return out;
}

}  // namespace cpprof::analysis
