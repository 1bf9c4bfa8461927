// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// On a CP grid, which ring waited. The comm matcher keeps, per NCCL kind, the waiting of the
// instances of each set of ranks (CollectiveStats::groups), by the rank waited for (the
// instance's last arrival). Where the grid is known (--dims grid=RxC or cpfold's config line),
// each set is a ring when its ranks share a row or a column of cpfold's layout (rank = row x cols
// + col), the whole grid when it holds every rank, and "across rings" otherwise: a wait is never
// given to a ring its instance was not on. cpfold's Cannon TriMul shifts along its row and its
// column in one batch (one grouped SendRecv launch on the default group), so its ring shifts are
// instances of the whole grid or across rings; the ring collectives (a row's AllGather) are on
// one ring. Ops of two rings that shift at once can also be taken as one instance (comm_match.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/report.h"

namespace cpprof::analysis {

// The waits of r.imbalance's instance groups by ring of r.grid: rows, columns, the whole grid,
// across rings; those without waiting are left out. Empty when the grid is unknown.
std::vector<model::RingWait> RingWaits(const model::Report& r);

// The grid of `rows` x `cols` from `source` when it fits a run of `ranks` ranks; unknown otherwise.
model::CpGrid GridFor(int rows, int cols, const std::string& source, size_t ranks);

}  // namespace cpprof::analysis
