// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The window a readout covers. Warm-up, start-up (CUDA, cuBLAS and NCCL initialisation) and
// tear-down are not the workload, so by default the numbers cover the steady state: the
// iterations after warm-up. Iterations are found from NVTX ranges:
//   - iteration markers: a range whose last ':'-part is "iterN", "iter N", "iteration N",
//     "stepN", "ProfilerStep#N" (torch.profiler) or "warmupN" (any case, ' ', '_', '#' or '-'
//     before the number), such as cpfold's "cpfold:iter1" and "cpfold:warmup0";
//   - or the ranges a user's --iteration-range regex matches;
//   - without either, the repeats of the outermost module range (pipeline/attribution.cc).
// Markers of one name on several ranks are one iteration (earliest start to latest end);
// markers nested inside another marker of the same process are left out (a "step" inside an
// iteration is not one). Warm-up iterations are those named so (warmup, warm-up, warm_up); when
// none is, the first iteration is taken as warm-up.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/report.h"

namespace cpprof::analysis {

enum class MarkerKind { kNone, kIteration, kWarmup };

// Whether `range` ("domain:text") is an iteration marker by name (see above).
MarkerKind IterationMarkerKind(std::string_view range);

// One marker range on one process.
struct IterationMark {
  std::string name;  // "domain:text"
  int64_t global_pid = 0;
  int64_t start = 0, end = 0;
  bool warmup = false;
  int64_t global_tid = 0;  // the range's thread (0: not known)
};

// `spec`: "steady" (default), "all", "iter:N" (the N-th iteration by start, from 0, warm-up
// ones included) or "A:B" (seconds on the session clock, as the readout prints them; "ms" or
// "us" after a number changes its unit). `method` says how the marks were found.
// Errors (exit code kUsage) say what is wrong with the spec.
// The per-iteration wall times (median, min, max) of the iterations in the window, said at the
// end of its description (replacing what an earlier call said).
void AddIterationStats(model::Window& w);

StatusOr<model::Window> ChooseWindow(std::vector<IterationMark> marks, const std::string& method,
                                     const std::string& spec);

// Puts the steady iterations of `w` (none in its window yet) in its window and spans the window
// over them: those not warm-up, or all when every one is (as --window steady chooses). Returns
// how many are not warm-up.
size_t SelectSteady(model::Window& w);

// The steady window of the iterations `w` found (e.g. over the whole capture): what --window
// steady would have given; `w` as it is when it has no iterations.
model::Window SteadyOf(const model::Window& w);

}  // namespace cpprof::analysis
