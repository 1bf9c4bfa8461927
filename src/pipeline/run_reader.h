// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Reads a run from its exports (one, or one per rank or per node) up to the point where its ranks
// need each other: the RunPartial (pipeline/run_partial.h). Exports are read in parallel, their
// clocks aligned (analysis/clock_align.h) and their processes, module trees and names merged.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis/ranks.h"
#include "analysis/window.h"
#include "base/status.h"
#include "model/gpu_work.h"
#include "model/timeline.h"
#include "pipeline/attribution.h"
#include "pipeline/build_report.h"
#include "pipeline/run_partial.h"

namespace cpprof::pipeline {

// What the HTML timeline needs besides the partial: the ops themselves.
struct RunWork {
  model::GpuWork work;
  std::vector<size_t> process_of_rank;  // rank -> index into work.processes
};

// `keep`, when given, receives the GPU ops (for the timeline).
StatusOr<RunPartial> ReadRun(const std::vector<std::string>& paths, const ReportOptions& options,
                             RunWork* keep = nullptr);

// A run read once for the readouts of several windows (report --format html: the readout, the
// whole capture's timeline and each iteration's readout). Every op of the capture stays in memory
// with its key (model::kOpKeyWarmup: 24 bytes an op), and each window's partial is cut from them:
// the same partial as ReadRun with that window, without reading the exports again.
class RunData {
 public:
  RunData();
  ~RunData();
  RunData(RunData&&) noexcept;
  RunData& operator=(RunData&&) noexcept;

  // The window of a --window spec ("steady", "iter:3"), on the run's clock.
  StatusOr<model::Window> Window(const std::string& spec) const;
  // The partials over `windows` (none the whole capture), cut in one pass over the ops; with
  // `memory`, each holds the memory usage (RunPartial::memory) too.
  std::vector<RunPartial> Partials(std::vector<model::Window> windows, bool memory) const;
  // The overlap tax of `window` (analysis/overlap_tax.h), from the ops wholly inside it. Before TakeAll.
  model::OverlapTax OverlapTax(const model::Window& window) const;
  // The partial over the whole capture, `window` (whole_capture), from the ops themselves; the ops
  // then go to `keep` (for the timeline). The last call on this RunData.
  RunPartial TakeAll(model::Window window, RunWork* keep, bool memory);

  struct Impl;

 private:
  friend StatusOr<RunData> ReadRunData(const std::vector<std::string>& paths, const ReportOptions& options);
  std::unique_ptr<Impl> impl_;
};

// The run's iterations as the readout finds them (analysis/window.h's one rule: markers,
// --iteration-range, else the repeats of the outermost module range), on the run's clock: export
// e's marks (its attribution's, `iteration_marks` left empty) shifted by its clock offset, their
// global_pid model::RunPid(e, globalPid) when the run has several exports. The first export's
// method (the next one's where it found none) says how they were found. Used by ReadRun and by
// the Kineto export, which reads the attribution (without tagging launches) as it opens the run.
struct RunIterations {
  std::vector<analysis::IterationMark> marks;
  std::string method;
};
void TakeIterationMarks(Attribution& a, size_t e, bool several, int64_t offset_ns, RunIterations& out);

// Reads the exports once for RunData (options.window is checked, not applied).
StatusOr<RunData> ReadRunData(const std::vector<std::string>& paths, const ReportOptions& options);

// Maps module trees of several exports into one: the same path is the same node.
class ModuleTreeMerger {
 public:
  explicit ModuleTreeMerger(std::vector<analysis::ModuleTreeNode>& run_nodes) : nodes_(run_nodes) {}
  // Node ids of `mine` -> the run's. Past analysis::kMaxModuleNodes nodes, new ones fold into
  // their parent (overflowed() says so).
  std::vector<uint16_t> Add(const std::vector<analysis::ModuleTreeNode>& mine);
  bool overflowed() const { return overflowed_; }

 private:
  std::vector<analysis::ModuleTreeNode>& nodes_;
  std::map<std::tuple<int, std::string, std::string, bool>, int> index_;
  bool overflowed_ = false;
};

// analysis::CheckSameRun on the exports at `paths`, their capture facts read from each (for a
// command that does not otherwise read them: `stats --merge`). Opening errors as for `report`.
Status CheckSameRun(const std::vector<std::string>& paths, bool force, const ExecContext& exec);

// "trunk/CPFoldModel.trunk/...": a node's path from its top-level row.
std::string NodePath(const std::vector<analysis::ModuleTreeNode>& nodes, int node);

}  // namespace cpprof::pipeline
