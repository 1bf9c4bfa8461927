// Waiting is not communicating. An NCCL kernel runs from the moment its rank reaches the
// collective (or the ring shift) until the data has moved, so its duration includes the time it
// spun waiting for peers that arrived later. This splits every NCCL op into waiting and
// transfer by matching it with its peers' ops, without assuming that ranks run equal numbers of
// ops (Cannon's initial skew gives ranks different numbers of ring shifts):
//
//   An instance is a set of ops of one kind, at most one per rank, that overlap and end
//   together: one collective or one ring shift. Ops are taken by end time; the earliest-ending
//   op not yet matched seeds an instance, and each other rank adds its earliest-ending unmatched
//   op that started before the seed ended and ended within kEndTolerance of it. In an instance
//   the rank that started last (the last to arrive) gates the others: an op's waiting is from
//   its start to that last start, its transfer is the rest. The last arrival's lateness costs
//   the others their waiting (its `caused_wait_ns`).
//
// A window's edges never turn waiting into transfer: an op the window cut is matched over its
// whole extent, with its peers' ops outside the window (RankModuleTimes::edge_comm_ops), split
// there, then clipped to the window (CollectiveStats::edge_instances counts those instances).
//
// An op no other rank's op matches (one rank only, or a peer outside the export) is left
// unsplit and counted as unmatched. Two independent groups that shift at the same time (the
// row rings of a 2D grid) can be taken as one instance: their ops overlap and end together.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/module_sweep.h"
#include "model/gpu_work.h"
#include "model/report.h"

namespace cpprof::analysis {

// Ops end "together" within max(kEndToleranceNs, kEndToleranceShare x the seed's duration).
inline constexpr int64_t kEndToleranceNs = 50'000;
inline constexpr double kEndToleranceShare = 0.25;

// One op's split.
struct CommOpSplit {
  int64_t wait_ns = 0;
  int64_t transfer_start = 0;  // the transfer is [transfer_start, end); the op's start when unmatched
  bool matched = false;
  bool last_arrival = false;   // this rank started last in its instance
  int64_t caused_wait_ns = 0;  // when last_arrival: the others' waiting in the instance
  int64_t instance = -1;       // when matched: the instance's number among its kind's (from 0)
};

struct CommMatch {
  // Per kind (model::OpClass), per rank, per op in the order of RankModuleTimes::comm_ops.
  std::array<std::vector<std::vector<CommOpSplit>>, model::kNumOpClasses> splits;
  std::vector<model::CollectiveStats> kinds;  // kinds with ops, in OpClass order
};

// `per_rank[r]` is rank r's sweep (its comm_ops, in start order). Fills everything but
// CommSplit::exposed_transfer_ns, which needs the compute timeline (SplitRankComm).
CommMatch MatchComm(const std::vector<const RankModuleTimes*>& per_rank);

// Keeps of each process's EdgeCommOps outside `window` those that can be a peer of an op its
// edges cut: an instance's ops all hold one instant (its earliest end), so none lies farther from
// the window than the longest cut op over all processes. Without a cut op none is kept.
void KeepNearEdges(std::vector<model::ProcessGpuWork>& procs, const model::Interval& window);

// For each interval (sorted by start; they may overlap one another), the part of it covered by
// `segments` (sorted, disjoint): for a transfer, the part hidden under compute.
std::vector<int64_t> Overlap(const std::vector<model::Interval>& segments, const std::vector<model::Interval>& sorted);

// Rank r's exposed transfer: the transfer parts of its matched ops (and the whole of its
// unmatched ones) during which no compute ran, added to `match.kinds[..].per_rank[r]`; and per
// module node (each op's node and its ancestors) the ops' waiting, transfer, exposed transfer,
// last arrivals and caused waiting, added to `nodes` (indexed like the sweep's nodes).
// Compute is taken from the sweep's hidden_segments (compute and communication at once).
void SplitRankComm(const RankModuleTimes& sweep, size_t rank, const std::vector<int>& parent, CommMatch& match,
                   std::vector<model::ModuleRankTime>& nodes);

}  // namespace cpprof::analysis
