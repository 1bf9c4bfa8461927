// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Where the Python helpers shipped with cpprof (python/cpprof_helpers/*.py) are: they run under
// the workload's own Python, so they are files, not code inside the binary.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/environment.h"

namespace cpprof::runner {

// The places searched, in order: CPPROF_HELPERS_DIR of `env` (the command's environment); beside the executable
// (<exe>/../python/cpprof_helpers, then <exe>/../share/cpprof/python/cpprof_helpers, which covers
// build/cpprof in a checkout and an installed prefix); the source tree cpprof was built from.
std::vector<std::string> HelperSearchDirs(const Environment& env);

// The path of helper `file` (e.g. "validate_trace.py"), if one of those places has it.
std::optional<std::string> FindHelper(const Environment& env, const std::string& file);

// The folder holding the cpprof_workload package (python/cpprof_workload, installed beside the
// helpers): the parent of the first of those places whose parent has it.
std::optional<std::string> FindWorkloadKitRoot(const Environment& env);

}  // namespace cpprof::runner
