// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// One clock for a run captured in several exports (one nsys per rank or per node). Each export
// counts time from its own session start. Two steps put them on the clock of the first export:
//
//   1. coarse: the difference of the session starts nsys recorded in wall-clock time
//      (TARGET_INFO_SESSION_START_TIME), good to the hosts' clock sync (micro- to milliseconds);
//   2. refined: every rank leaves a collective within a transfer's time of the others, so the
//      ends of the same collective on two ranks are nearly one instant. For each process of the
//      reference export and each process of another, the k-th collective of a kind (AllGather,
//      AllReduce, ...; not point-to-point, whose counts differ per rank) is paired with the k-th
//      (or, where the two counts differ, with the index shift that pairs them best); the
//      correction is the median of the end differences, the residual their median distance
//      from it.
//
// The residual is the alignment's error: waiting and straggler numbers across exports are good
// to about it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/gpu_work.h"

namespace cpprof::analysis {

struct ClockInput {
  int64_t utc_start_ns = 0;             // 0: not recorded
  std::vector<model::CommOpTime> comm;  // the export's NCCL kernels, its own clock
};

struct ClockAlignment {
  int64_t offset_ns = 0;     // add to the export's timestamps
  int64_t refine_ns = 0;     // the part of offset_ns from the collectives
  int64_t residual_ns = -1;  // -1: nothing matched
  int64_t matched_ops = 0;   // end differences used
  std::string method;
};

// Index shifts tried when two ranks' counts of a kind differ (ops cut by the capture's edges).
inline constexpr int kMaxIndexShift = 8;

// The kinds whose ends pair the clocks: collectives of every rank (not point-to-point).
bool IsCollective(model::OpClass c);

// exports[0] is the reference (offset 0).
std::vector<ClockAlignment> AlignClocks(const std::vector<ClockInput>& exports);

}  // namespace cpprof::analysis
