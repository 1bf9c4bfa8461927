// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// `cpprof diff`: two readouts side by side. Kernel mix (per class and per kernel: instances and
// time share), per-rank GPU time and peak memory, module times; the sanity verdict ("did a
// launcher or annotation change alter the GPU work?": same kernel names and counts per rank,
// peak memory within a tolerance); and regressions against thresholds (for CI gates).
#pragma once

#include "model/diff.h"

namespace cpprof::analysis {

// `a` and `b` need all kernels per rank (BuildReport with top_kernels = 0).
model::ReportDiff DiffReports(const model::Report& a, const model::Report& b, const model::DiffOptions& options,
                              model::PeakMemoryOf peak_memory = nullptr);

}  // namespace cpprof::analysis
