// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The timeline of `cpprof report --format html`: per rank, lanes of GPU work (compute, each NCCL
// kind, memcpy/memset) and the module spans above them, downsampled to a bounded number of bins
// per lane so the page stays small for exports of millions of kernels. Filled by
// analysis/timeline from the ops of model::ProcessGpuWork; times are export nanoseconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/op_class.h"

namespace cpprof::model {

// A lane: a set of op classes drawn on one row of a rank.
struct TimelineLane {
  std::string name;              // "compute", "SendRecv", ..., "memcpy/memset"
  std::vector<OpClass> classes;  // the classes it holds
};

// A piece of one lane: [start, end] bounds the busy time inside it; busy_ns is the union of the
// lane's ops inside [start, end] (<= end - start). When the lane is not downsampled, a bin is one
// interval of overlapping ops merged (busy_ns == end - start). The bins of a lane do not overlap
// and their busy_ns adds up to the union of the lane's ops.
struct TimelineBin {
  int64_t start = 0, end = 0;
  int64_t busy_ns = 0;
  OpClass cls = OpClass::kComputeOther;  // the class with the most op time inside the bin
};

struct RankLane {
  int lane = 0;                   // index into Timeline::lanes
  int64_t ops = 0;                // ops of the lane's classes on this rank
  int64_t union_ns = 0;           // wall time during which one of them ran (= sum of the bins' busy_ns)
  int64_t intervals = 0;          // merged intervals before downsampling
  bool downsampled = false;       // intervals > Timeline::max_bins: bins are fixed time slices
  int64_t bin_ns = 0;             // width of a time slice when downsampled
  std::vector<TimelineBin> bins;  // by start
};

// A stretch of GPU work of one module row (model::Report::modules index): consecutive ops (by
// start) attributed to the row or its children, ended by an op of another row or by a gap longer
// than the rank's bin width. Work with no module does not end a run.
struct ModuleRun {
  int64_t start = 0, end = 0;
  int row = 0;
};

struct RankTimeline {
  int rank = 0;
  int64_t bin_ns = 0;           // (last_end - first_start) / max_bins, at least 1
  std::vector<RankLane> lanes;  // lanes with ops on this rank, in Timeline::lanes order
  // [0]: top-level module rows; [1]: their children. Each by start, non-overlapping.
  std::vector<ModuleRun> module_runs[2];
  int64_t module_run_count[2] = {0, 0};  // runs before downsampling
  bool modules_downsampled[2] = {false, false};
};

struct Timeline {
  bool built = false;
  int max_bins = 0;  // per lane and rank
  std::vector<TimelineLane> lanes;
  std::vector<RankTimeline> ranks;  // by rank
};

}  // namespace cpprof::model
