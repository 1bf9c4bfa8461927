// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The timeline of a rank for the HTML report: its GPU ops merged into lanes (compute, one per
// NCCL kind, memcpy/memset) and module runs, with at most `max_bins` bins per lane. Two passes in
// start order over the ops (op_sweep.h), no per-op copies: the first counts merged intervals
// and module runs, the second keeps them as they are when they fit and bins them into fixed time
// slices when they do not. Memory: O(lanes x max_bins), whatever the number of ops.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "model/gpu_work.h"
#include "model/report.h"
#include "model/timeline.h"

namespace cpprof::analysis {

// The lanes of the ranks' work: "compute" (kernels that are not communication), one per
// communication class that any rank ran (enum order), "memcpy/memset". Lanes no rank used are
// left out.
std::vector<model::TimelineLane> TimelineLanes(const std::vector<model::RankSummary>& ranks);

struct TimelineInput {
  const std::vector<model::TimelineLane>* lanes = nullptr;
  // By module node id (GpuOp::node): its top-level row and its row one level down in
  // model::Report::modules; -1 for none (no module, or the node is itself top-level).
  std::vector<int> level0_row, level1_row;
  int64_t first_start = 0, last_end = 0;  // the rank's span (model::RankSummary)
  int max_bins = 4000;
};

// May reorder the process's ops (see op_sweep.h).
model::RankTimeline BuildRankTimeline(model::ProcessGpuWork& work, const TimelineInput& in);

}  // namespace cpprof::analysis
