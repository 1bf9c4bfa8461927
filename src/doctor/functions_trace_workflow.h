// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The functions-trace workflow that 'cpprof trace-json' and 'cpprof profile' (--trace-function,
// --trace-discover) share: read the base file, validate the request by import with the workload's
// Python, report what was rejected, merge. Each command builds its own request from its flags
// and writes the result where it belongs (doctor/functions_trace.h has the building blocks).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "doctor/functions_trace.h"
#include "runner/environment.h"
#include "runner/process_runner.h"

namespace cpprof::doctor {

// Reads and checks the functions-trace file a new one extends.
StatusOr<std::vector<TraceEntry>> ReadTraceBase(const std::string& path);

struct FunctionsTraceJob {
  TraceRequest request;
  std::vector<TraceEntry> base;  // the entries to extend (ReadTraceBase); empty: none
  std::string domain;            // the NVTX domain of the new entries; empty: each module's top package
  std::string python;            // the workload's Python (FindWorkloadPython)
  bool strict = false;           // any rejected entry is an error
  std::string command;           // names the messages: "trace-json", "profile: functions trace"
};

struct FunctionsTrace {
  Validation validation;
  std::vector<TraceEntry> entries;  // the base with the accepted functions merged in (MergeTrace)
};

// Validates `job.request` by import and merges what was accepted into the base. Each rejection
// and note goes to `err` ("cpprof: warning: COMMAND: rejected ...", "  hint: ...", "cpprof: note:
// COMMAND: ..."). Fails when the helper cannot run, or with `strict` when any entry was rejected;
// an empty validation.accepted is the caller's to refuse (its message names its own flags).
StatusOr<FunctionsTrace> MakeFunctionsTrace(const FunctionsTraceJob& job, runner::ProcessRunner& runner,
                                            const runner::Environment& env, std::ostream& err);

}  // namespace cpprof::doctor
