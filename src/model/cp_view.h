// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The context-parallel view of a run as the Chrome trace draws it: per rank the module spans (the
// readout's attribution), every NCCL op split into its waiting and its transfer (the readout's
// matching across ranks, analysis/comm_match.h), the matched instances (one collective or one
// ring shift) that flow events link across ranks, and GPU memory over time. Built by
// pipeline/cp_view.h, written by render/chrome_trace.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/memory.h"
#include "model/op_class.h"
#include "model/report.h"

namespace cpprof::model {

struct CpModuleSpan {
  int64_t start = 0, end = 0;
  int level = 0;     // 0: top-level module rows; 1: one level down
  std::string name;  // the row's name
  std::string path;  // "trunk/CPFoldModel.trunk"
  bool cp = false;   // the module communicates on two or more ranks
};

// A piece of one NCCL op: its waiting for the last peer, its transfer, or (no peer matched) the
// whole op.
struct CpCommSlice {
  enum class Part { kWait, kTransfer, kUnmatched };
  int64_t start = 0, end = 0;
  OpClass kind = OpClass::kNcclOther;
  Part part = Part::kUnmatched;
  int64_t op_start = 0;   // the op's start (its arrival)
  int64_t instance = -1;  // index into CpView::instances; -1 unmatched
};

struct CpInstance {
  OpClass kind = OpClass::kNcclOther;
  int64_t last_start = 0;                         // the last arrival: where every op's transfer starts
  std::vector<std::pair<int, int64_t>> arrivals;  // (rank, its op's start), by start
};

struct CpRankView {
  int rank = 0;
  std::vector<CpModuleSpan> modules;                       // by level, then start
  std::vector<CpCommSlice> comm;                           // by op start
  std::vector<MemoryPoint> memory;                         // the rank's memory line (its peak device)
  int64_t wait_ns = 0, transfer_ns = 0, unmatched_ns = 0;  // sums of the slices
};

// A stretch of the critical path of one replayed steady iteration (model::PathStretch) and its
// iteration's name.
struct CpPathStretch {
  int rank = 0;
  int64_t start = 0, end = 0;  // as replayed with no edit (the run's clock)
  std::string kind;            // most of its time: "compute", "transfer", "host gap", "launch gap"
  std::string iteration;       // "cpfold:iter2"
};

struct CpView {
  Window window;  // the window applied (the readout's)
  std::vector<CpRankView> ranks;
  std::vector<CpInstance> instances;
  // The critical path of each steady iteration of the window, iteration after iteration, each
  // in time order; empty without steady iterations or with the replay off.
  std::vector<CpPathStretch> critical_path;

  // The iterations whose path is there (a path past kMaxPathStretches is not).
  int64_t PathIterations() const {
    int64_t n = 0;
    for (size_t i = 0; i < critical_path.size(); ++i) {
      n += i == 0 || critical_path[i].iteration != critical_path[i - 1].iteration;
    }
    return n;
  }
};

}  // namespace cpprof::model
