// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The Python that will run the workload, and what it has (torch, NCCL, nvtx, torchrun).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "runner/environment.h"
#include "runner/process_runner.h"

namespace cpprof::doctor {

struct WorkloadPython {
  std::string path;  // as found (absolute), empty when none
  std::string why;   // "given with --python", "the interpreter of /usr/bin/torchrun", ...
};

// `explicit_python` when given (looked up on PATH if it has no '/'); else the interpreter that
// torchrun's first line names (its shebang, or the exec line of conda's /bin/sh launcher);
// else python3 on PATH.
WorkloadPython FindWorkloadPython(const runner::Environment& env, const std::string& explicit_python);

struct PythonInfo {
  std::string path;  // what was run
  std::string why;
  bool runs = false;
  std::string error;       // why it did not run or answer
  std::string executable;  // sys.executable
  std::string version;     // "3.12.3"
  std::vector<std::string> site_packages;
  bool torch = false;
  std::string torch_version, torch_cuda, nccl, torch_error;
  bool torch_cuda_available = false;
  bool nvtx = false;
  std::string torchrun;  // beside the interpreter or on PATH; empty: none
};

// Runs python/cpprof_helpers/probe_python.py with the interpreter.
PythonInfo ProbePython(runner::ProcessRunner& runner, const runner::Environment& env, const WorkloadPython& python);

}  // namespace cpprof::doctor
