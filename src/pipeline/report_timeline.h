// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The timeline part of `cpprof report` (for --format html): lanes and module runs per rank from
// the GPU ops, iteration markers from NVTX. A hook of BuildReport (ReportOptions::timeline).
#pragma once

#include <vector>

#include "analysis/module_attribution.h"
#include "base/status.h"
#include "model/gpu_work.h"
#include "model/report.h"

namespace cpprof::pipeline {

// Fills report.timeline. Needs report.ranks and report.modules filled; `modules` (the module
// tree, indexed by node id) is null when the export has no module ranges. May reorder the processes' ops.
// The iterations it is drawn with are the report's window's (analysis/window.h's rule).
Status AddTimeline(model::GpuWork& work, const std::vector<size_t>& process_of_rank,
                   const std::vector<analysis::ModuleTreeNode>* modules, int max_bins, model::Report& report);

// By module node id: the row of model::Report::modules that shows the node, found by the path of
// names from its top-level row; -1 when no row shows it.
std::vector<int> ModuleRowOfNode(const std::vector<analysis::ModuleTreeNode>& nodes, const model::Report& report);

}  // namespace cpprof::pipeline
