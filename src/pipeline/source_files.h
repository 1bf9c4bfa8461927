// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Finds the Python source files a capture's backtraces name (analysis/backtrace_modules.h) on
// this machine: a path as the capturing machine recorded it (/work/run/model/pairformer.py) is
// looked for under each --source-root, longest tail first (ROOT/work/run/model/pairformer.py,
// ROOT/run/model/pairformer.py, ROOT/model/pairformer.py, ROOT/pairformer.py), then as it is.
// Only regular files of at most kMaxSourceBytes are read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/backtrace_modules.h"

namespace cpprof::pipeline {

inline constexpr uintmax_t kMaxSourceBytes = 16u << 20;

analysis::SourceReader MakeSourceReader(std::vector<std::string> roots);

}  // namespace cpprof::pipeline
