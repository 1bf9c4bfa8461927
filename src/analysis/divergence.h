// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Divergent control flow across ranks, read from how many NCCL ops of each kind each rank ran:
// every rank of a CP job must issue the same collectives in the same order, so per-rank counts
// that differ point at a count (recycles, sampling steps, an early exit) that each rank decided
// for itself. Pure: from the report's per-kind statistics.
#pragma once

#include <optional>

#include "model/capture.h"
#include "model/report.h"

namespace cpprof::analysis {

// The per-rank count differences a kind may show without being flagged.
//  - Collectives (AllGather, ReduceScatter, AllReduce, Broadcast, Reduce, AllToAll): equal counts,
//    give or take one op cut at the window's or capture's edge.
//  - SendRecv on a 1-D ring (a world that is not a square of 2 or more): equal, give or take one.
//  - SendRecv on a g x g grid (a square world of 4 or more): Cannon's initial skew and its undoing
//    add up to two shifts per g-1 shifts of the main loop on some ranks, so the most may be
//    (g+1)/(g-1) times the fewest (plus one): 2x2 -> 3x (cpfold's trunk on 2x2: 72 to 216).
//  - Peer copies and NCCL kernels of no known kind: not judged.
// The world's grid is assumed square when the world is; a 1 x R grid of a square R gets the
// looser SendRecv bound.
struct DivergenceRule {
  bool judged = false;
  int64_t max_allowed = 0;  // for the kind's fewest count
  std::string why;          // "equal on every rank", "Cannon's skew on a 2x2 grid: at most 3x"
};
DivergenceRule RuleFor(model::OpClass kind, int world_size, int64_t fewest);

// A warning ("divergent-control-flow") naming the kinds whose counts differ beyond their rule,
// with the counts per rank and the seed-and-broadcast fix; nothing when every kind is within it
// (or there is one rank).
std::optional<model::Diagnostic> DiagnoseDivergence(const model::Imbalance& imbalance, int world_size);

}  // namespace cpprof::analysis
