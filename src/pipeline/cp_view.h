// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
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
#include "model/cp_view.h"
#include "pipeline/build_report.h"

namespace cpprof::pipeline {

using model::CpCommSlice;
using model::CpInstance;
using model::CpModuleSpan;
using model::CpPathStretch;
using model::CpRankView;
using model::CpView;

// Reads the exports as `cpprof report` does (options.window applies) and builds the view; module
// spans at most `module_bins` per level and rank (consecutive ops of a row merged, as the HTML
// timeline's); with options.replay, the critical path of each steady iteration (the readout's
// replay, analysis/replay.h).
StatusOr<CpView> BuildCpView(const std::vector<std::string>& paths, const ReportOptions& options,
                             int module_bins = 20000);

}  // namespace cpprof::pipeline
