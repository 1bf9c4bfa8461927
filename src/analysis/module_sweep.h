// One sweep over a rank's GPU ops in time order that yields, per module node: attributed busy
// time (each busy instant split equally among the modules whose ops run then, so rows add up),
// communication unions per kind and the part of them hidden under compute; per phase (forward,
// backward, optimizer) attributed busy time; per communication class the part of its union
// hidden under compute; and, when asked, the communication ops for matching across ranks.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "model/gpu_work.h"
#include "model/report.h"

namespace cpprof::analysis {

struct CommOp {
  int64_t start, end;
  uint16_t node;  // module node of the launch
};

struct RankModuleTimes {
  // By node id: busy_ns (inclusive of children), own_ns, comm_ns, hidden_ns, comm_kind_ns, ops.
  std::vector<model::ModuleRankTime> nodes;
  std::array<int64_t, model::kNumPhases> phase_busy_ns{};
  bool has_backward = false;
  // Per class: for communication classes, the part of the class's union during which
  // non-communication work ran (hidden under compute).
  std::array<int64_t, model::kNumOpClasses> hidden_ns{};
  int64_t busy_ns = 0;  // union of all ops
  // What the per-rank summary needs, from the same sweep: per class the sum of durations, the
  // union and the instances; unions of communication and of everything else; first and last.
  std::array<int64_t, model::kNumOpClasses> class_sum_ns{}, class_union_ns{}, class_instances{};
  int64_t comm_union_ns = 0, compute_union_ns = 0;
  int64_t first_start = 0, last_end = 0;
  int64_t ops = 0;
  // Idle time before each node's launches goes to nodes[..].host_idle_ns (the GPU waited for
  // the host to launch them; children added in). With a window (window_end > window_start) the
  // leading gap from its start counts too, and the trailing gap to its end goes to node 0. The
  // same idle, split into short launch gaps (< model::kLaunchGapNs) and longer host stalls:
  int64_t window_start = 0, window_end = 0;
  int64_t launch_gap_ns = 0, host_stall_ns = 0;
  // Per communication class, its ops in start order (when collect_comm_ops).
  std::array<std::vector<CommOp>, model::kNumOpClasses> comm_ops;
  // When collect_comm_ops and a window: the NCCL ops its edges cut (whole) and those outside it
  // near enough to be a peer of one (the work's EdgeCommOps): comm_match.h matches over them.
  std::vector<model::EdgeCommOp> edge_comm_ops;
  // When collect_comm_ops: the stretches during which compute and communication ran together
  // (sorted, disjoint): what can hide a transfer (analysis/comm_match.h), without a second pass.
  std::vector<model::Interval> hidden_segments;
  bool collect_comm_ops = false;
};

// `parent[i]` is the parent node of node i (-1 for roots). Sorts the ops' chunks in place when
// they are out of order (see op_sweep.h).
RankModuleTimes SweepModules(model::ProcessGpuWork& work, const std::vector<int>& parent, bool collect_comm_ops);

// The same in two steps, for sweeping ranks on several threads: StartSweep allocates what the
// sweep fills (on the calling thread, so that it reuses memory freed there), then
// SweepModules(work, parent, out) fills it.
RankModuleTimes StartSweep(const model::ProcessGpuWork& work, size_t nodes, bool collect_comm_ops);
void SweepModules(model::ProcessGpuWork& work, const std::vector<int>& parent, RankModuleTimes& out);

// Rounds shares (which add up to `total` in exact arithmetic) to integers that add up to
// exactly `total`: the largest remainders get the leftover nanoseconds (ties: lower index).
std::vector<int64_t> RoundShares(const std::vector<double>& shares, int64_t total);

}  // namespace cpprof::analysis
