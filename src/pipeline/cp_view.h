// The context-parallel view of a run for `cpprof export --format chrome-trace`: per rank the
// module spans (the readout's attribution), every NCCL op split into its waiting and its transfer
// (the readout's matching across ranks, analysis/comm_match.h), the matched instances (one
// collective or one ring shift) that flow events link across ranks, and GPU memory over time.
// The same numbers as `cpprof report` over the same window (docs/chrome-trace.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/memory.h"
#include "model/op_class.h"
#include "pipeline/build_report.h"

namespace cpprof::pipeline {

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
  model::OpClass kind = model::OpClass::kNcclOther;
  Part part = Part::kUnmatched;
  int64_t op_start = 0;   // the op's start (its arrival)
  int64_t instance = -1;  // index into CpView::instances; -1 unmatched
};

struct CpInstance {
  model::OpClass kind = model::OpClass::kNcclOther;
  int64_t last_start = 0;                         // the last arrival: where every op's transfer starts
  std::vector<std::pair<int, int64_t>> arrivals;  // (rank, its op's start), by start
};

struct CpRankView {
  int rank = 0;
  std::vector<CpModuleSpan> modules;                       // by level, then start
  std::vector<CpCommSlice> comm;                           // by op start
  std::vector<model::MemoryPoint> memory;                  // the rank's memory line (its peak device)
  int64_t wait_ns = 0, transfer_ns = 0, unmatched_ns = 0;  // sums of the slices
};

struct CpView {
  model::Window window;  // the window applied (the readout's)
  std::vector<CpRankView> ranks;
  std::vector<CpInstance> instances;
};

// Reads the exports as `cpprof report` does (options.window applies) and builds the view; module
// spans at most `module_bins` per level and rank (consecutive ops of a row merged, as the HTML
// timeline's).
StatusOr<CpView> BuildCpView(const std::vector<std::string>& paths, const ReportOptions& options,
                             int module_bins = 20000);

}  // namespace cpprof::pipeline
