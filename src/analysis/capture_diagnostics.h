// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Checks of a capture: the options nsys recorded (model::CaptureInfo) against what the export
// actually holds (model::NvtxFacts), said as diagnostics with what to do. Pure: no SQLite.
#pragma once

#include <vector>

#include "model/capture.h"

namespace cpprof::analysis {

// The diagnostics, errors first, then warnings, then infos, each group in a fixed order:
//  functions-trace-unreadable, functions-trace-not-loaded, functions-trace-domain-empty (one per
//  domain), functions-trace-functions-missing (one per domain), pytorch-autograd-no-ops,
//  nvtx-open-ranges, nvtx-cross-thread-ranges, cuda-graphs, cpu-sampling-off,
//  cpu-sampling-inert, cuda-backtraces-inert, python-backtraces-inert, osrt-backtraces-none,
//  nsys-message (one per kept DIAGNOSTIC_EVENT text).
// Texts hold no host paths (the functions-trace file is named by its domains and modules).
std::vector<model::Diagnostic> DiagnoseCapture(const model::CaptureInfo& capture, const model::NvtxFacts& facts);

// The module launched with `-m MODULE` (python -m, torchrun -m/--module), "" when none.
std::string EntryModule(const model::CaptureInfo& capture);

}  // namespace cpprof::analysis
