// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Per-rank readout: span, busy, compute vs communication, time per class, top kernels.
#pragma once

#include <string>

#include "analysis/module_sweep.h"
#include "model/gpu_work.h"
#include "model/report.h"

namespace cpprof::analysis {

// `kernel_name` maps a StringIds id to its name. `top` bounds top_kernels (0: all).
// May reorder the process's ops (chunks are sorted in place when they are out of order).
model::RankSummary SummarizeRank(model::ProcessGpuWork& work, const model::GpuNames& names, size_t top);

// The same summary from a module sweep already made over `work` (analysis/module_sweep.h): no
// second pass over the ops.
model::RankSummary SummarizeRankFromSweep(const model::ProcessGpuWork& work, const model::GpuNames& names, size_t top,
                                          const RankModuleTimes& sweep);

}  // namespace cpprof::analysis
