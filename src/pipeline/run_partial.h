// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A run read up to the point where its ranks need each other: per rank its summary and its sweep
// over the window (module times, communication ops, compute under communication), per export
// what it says about itself. `report` finishes it at once (FinishReport); `report --partial`
// writes it for one export and `merge` finishes several (the map and reduce steps of a run too
// big for one machine: pipeline/partial_merge.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/cost_model.h"
#include "analysis/module_attribution.h"
#include "analysis/module_sweep.h"
#include "base/saturating.h"
#include "model/capture.h"
#include "model/gpu_work.h"
#include "model/memory.h"
#include "model/nccl.h"
#include "model/report.h"
#include "model/timeline.h"

namespace cpprof::pipeline {

// One GPU process: a rank.
struct ProcessPartial {
  size_t source = 0;          // index into RunPartial::sources
  model::GpuProcess process;  // globalPid (the run's: see RunPid), pid, name, ops per device
  model::NcclRankInfo nccl;   // rank -1: NCCL's payloads did not say
  // analysis::SummarizeRankFromSweep's summary over the window (span set to it), before the
  // communication budget, which needs the other ranks.
  model::RankSummary summary;
  // The sweep over the window: nodes by the run's module tree, phases, idle gaps, communication
  // ops and the stretches of compute under communication. The per-class and union fields are
  // already in `summary`.
  analysis::RankModuleTimes sweep;
  int64_t excluded_ops = 0, warmup_ops = 0, warmup_ns = 0;
  int64_t outside_window_ops = 0, outside_window_ns = 0, clipped_ops = 0;
};

// One export.
struct SourcePartial {
  model::RunExport run_export;  // file, name, host, session start; the clock fields once aligned
  model::ExportInfo export_info;
  model::CaptureInfo capture;
  std::vector<model::Diagnostic> diagnostics;
  std::string interconnect;
};

// What the module attribution says about the whole run, named in the readout's notes: the same in
// every window's partial of a run. One struct from the exports' attribution (pipeline/run_reader)
// through the partials (pipeline/partial_merge) to the notes (FinishReport).
struct AttributionFacts {
  int64_t backward_ranges = 0;       // autograd's backward ranges
  int64_t backward_mapped = 0;       // of them, mapped to the module of their forward op
  int64_t cross_thread = 0;          // NVTX ranges ending on another thread (left out, as nsys does)
  bool modules_overflowed = false;   // past analysis::kMaxModuleNodes paths: the deepest folded into parents
  bool modules_too_deep = false;     // module ranges nested past analysis::kMaxModuleDepth
  std::string warmup_range;          // the first warm-up range seen, named in notes
  std::string exclude_work_pattern;  // --exclude-ranges, named in notes

  // Another export's (or partial's) facts added: counts summed, flags or-ed, the first warm-up
  // range kept. exclude_work_pattern is the run's option, left for the caller to set.
  void Add(const AttributionFacts& other) {
    SatAdd(backward_ranges, other.backward_ranges);
    SatAdd(backward_mapped, other.backward_mapped);
    SatAdd(cross_thread, other.cross_thread);
    modules_overflowed |= other.modules_overflowed;
    modules_too_deep |= other.modules_too_deep;
    if (warmup_range.empty()) warmup_range = other.warmup_range;
  }
};

// What the efficiency section needs besides the times (docs/cost-model.md), resolved where the
// export and its log are: `report --partial` writes it, `merge` computes the section from it.
struct EfficiencyInputs {
  bool has_dims = false;
  analysis::Dims dims;      // the sizes, when has_dims (--dims, or cpfold's config line beside the export)
  std::string missing;      // else why there are none, and the flag that gives them
  std::string cost_config;  // the --model-config used (JSON, as ParseCostConfig reads it); "" the built-in
  // Warnings on the sizes: --dims against the recorded shapes, shapes of two modules that disagree.
  std::vector<std::string> notes;
};

struct RunPartial {
  std::vector<SourcePartial> sources;
  std::vector<ProcessPartial> processes;  // by rank
  std::string rank_method;
  int world_size = 0;
  // The module tree, by node id (empty: no module ranges anywhere), and how it was built.
  std::vector<analysis::ModuleTreeNode> nodes;
  model::ModuleGrouping grouping;
  AttributionFacts attribution;
  model::Window window;       // on the run's clock; left-out counts are added by FinishReport
  model::MemoryUsage memory;  // series by the run's globalPids, on the run's clock
  std::vector<std::string> notes;
  bool invalid_utf8 = false;    // some text read from the exports was not UTF-8 (shown as U+FFFD)
  EfficiencyInputs efficiency;  // filled for `report --partial`; BuildReport finds them itself
  // The op shapes under each module (--pytorch autograd-shapes-nvtx), by path, first export first:
  // what the sizes are found from. Not written into a partial (its EfficiencyInputs holds the sizes).
  std::vector<model::ModuleShapes> shapes;
  // Compute slowed under communication (analysis/overlap_tax.h), filled by ReadRun; not written
  // into a partial (a merged run has none).
  model::OverlapTax overlap_tax;
};

}  // namespace cpprof::pipeline
