// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Wires reading (nsys/) and analysis (analysis/) into the model of `cpprof report`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/cost_model.h"
#include "analysis/module_config.h"
#include "analysis/replay.h"
#include "base/exec_context.h"
#include "base/status.h"
#include "model/report.h"

namespace cpprof::pipeline {

struct ReportOptions {
  size_t top_kernels = 10;                          // per rank; 0 = all
  const analysis::ModuleConfig* modules = nullptr;  // null: the built-in grouping
  bool timeline = false;     // fill Report::timeline (for --format html): two more passes over the ops
  int timeline_bins = 4000;  // at most this many bins per lane and rank
  // The window the numbers cover (analysis/window.h): steady, all, iter:N or A:B.
  std::string window = "steady";
  // A regex for the iteration ranges ("domain:text"); "" uses the built-in marker names.
  std::string iteration_range;
  // Several exports that do not look like one run (another command, or starts more than
  // analysis::kMaxRunStartSpreadNs apart) are read as one anyway.
  bool force = false;
  // The cost model (null: the built-in) and the model's sizes (--dims, the config's "dims" under
  // them); without sizes, cpfold's `cpfold-config:` line in the log beside the export gives them.
  const analysis::CostConfig* cost = nullptr;
  std::optional<analysis::Dims> dims;
  // The steady window replayed (analysis/replay.h): the self-check, critical paths, the verdict's
  // candidates and these edits (--what-if). Off: Report::replay says so.
  bool replay = true;
  std::vector<analysis::WhatIfEdit> what_if;
  // The overlap tax (analysis/overlap_tax.h): each op's kernel name and launch sizes are kept
  // while the exports are read (12 bytes an op), and the replay's overlap edits pay it. Off
  // (--no-overlap-tax): no "overlap_tax" in the report.
  bool overlap_tax = true;
  // Where the Python files that the launches' backtraces name are looked for (--source-root),
  // before the paths the capture recorded (analysis/backtrace_modules.h).
  std::vector<std::string> source_roots;
  ExecContext exec;  // how the command runs: threads, timing (from the CLI)
};

StatusOr<model::Report> BuildReport(const std::string& path, const ReportOptions& options);

// One readout of a run captured in several exports (one nsys per rank or per node): their
// processes become the run's ranks (NCCL's payloads, else the launcher's rank variables, else
// host and device order) and their clocks are put on the first export's (analysis/clock_align.h);
// Report::run_exports says how. One path is the same as the overload above.
StatusOr<model::Report> BuildReport(const std::vector<std::string>& paths, const ReportOptions& options);

// The report of a run read up to its ranks' matching (pipeline/run_partial.h): waiting vs
// transfer, modules, imbalance, verdict.
struct RunPartial;
model::Report FinishReport(RunPartial run, const ExecContext& exec);

// `window` (its steady iterations) replayed over the ops ReadRun kept in `work`, with `edits`
// (analysis/replay.h), on exec's threads: fills Report::replay and remakes the verdict from it.
// Without `candidates`, the verdict's candidates are not re-timed (the CP view draws the path alone).
struct RunWork;
void AddReplay(const RunWork& work, const std::vector<analysis::ModuleTreeNode>& nodes,
               const std::vector<analysis::WhatIfEdit>& edits, const model::Window& window, const ExecContext& exec,
               model::Report& report, bool candidates = true);

// What `cpprof report --format html` draws: the readout, the timeline over the whole capture,
// and the readout of each iteration found (window iter:N), for the page's iteration strip; at
// most `max_iterations` iterations (the first ones). All from one reading of the exports
// (pipeline/run_reader.h's RunData): each is the same as BuildReport with its window.
inline constexpr size_t kMaxPageIterations = 100;  // the default of `report --html-iterations`
struct Page {
  model::Report readout;
  model::Report timeline;     // window "all", Report::timeline built; empty when own_timeline
  bool own_timeline = false;  // the readout's window is the whole capture: its Report::timeline is the page's
  std::vector<model::Report> iterations;  // readout.window.iterations[i], window iter:i
  size_t iterations_left_out = 0;
};
StatusOr<Page> BuildPage(const std::vector<std::string>& paths, const ReportOptions& options,
                         size_t max_iterations = kMaxPageIterations);

// Fills report.efficiency (analysis/cost_efficiency.h): the sizes from options.dims, else from
// cpfold's config line in <export>.stdout.log (cpprof profile) or <export>.log beside the first
// export, else efficiency is not computed and the report says which flag gives it.
void AddEfficiency(const std::vector<std::string>& paths, const ReportOptions& options, model::Report& report);

// The same in two steps, for `report --partial` and `merge`: the sizes (and `cost_config`, the
// --model-config as JSON, "" for the built-in) where the exports are, then the section from them
// (kBadInput when the cost config does not parse).
// `capture`: what the run recorded that gives sizes (the op shapes under each module, the
// workload's command line, the ranks); analysis/size_inference.h says the order of the sources.
struct EfficiencyInputs;
struct CaptureEvidence {
  const std::vector<model::ModuleShapes>* shapes = nullptr;
  const std::vector<std::string>* arguments = nullptr;  // nsys's PROCESS_0 arguments
  int world_size = 0;
  std::map<std::string, int64_t> kernel_launches;  // kernel name -> launches over the capture, all ranks
};
EfficiencyInputs FindEfficiencyInputs(const std::vector<std::string>& paths, const ReportOptions& options,
                                      std::string cost_config, const CaptureEvidence& capture);
// What a run read up to its partial recorded (for `report --partial`); valid while `run` lives.
CaptureEvidence EvidenceOf(const RunPartial& run);
Status AddEfficiency(const EfficiencyInputs& inputs, model::Report& report);

// Peak GPU memory per rank (index = rank), when the export captured memory usage.
std::vector<std::optional<int64_t>> PeakMemoryPerRank(const model::Report& report);

}  // namespace cpprof::pipeline
