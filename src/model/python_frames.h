// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Python backtraces of CUDA launches as the export records them (nsys/python_backtraces.h), and
// what the readout says about the module rows built from them (analysis/backtrace_modules.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/saturating.h"

namespace cpprof::model {

struct PythonFrame {
  uint32_t function = 0;  // index into PythonBacktraces::strings: "forward", "<module>"
  uint32_t file = 0;      // index into strings: the path as the capturing machine had it
  int32_t line = 0;
};

// One launch's backtrace: frames[first, first + count), innermost first.
struct PythonBacktrace {
  int64_t start = 0;       // the CUDA API call's start
  int64_t global_tid = 0;  // its thread
  uint32_t first = 0, count = 0;
};

struct PythonBacktraces {
  std::vector<std::string> strings;
  std::vector<PythonFrame> frames;
  std::vector<PythonBacktrace> marks;  // in table order
  int64_t damaged = 0;                 // marks whose payload could not be read (left out)
};

// How the module rows from Python backtraces were made (report JSON: modules_config's
// "python_backtraces"; absent when the export has none).
struct BacktraceModuleSummary {
  int64_t backtraces = 0;       // launches with a Python backtrace
  int64_t used = 0;             // of them, those with a method of the model on their stack, outside any NVTX module
  int64_t in_nvtx_modules = 0;  // of them, those inside an NVTX module range (the range decides)
  int64_t ranges = 0;           // module calls made from them
  int64_t methods = 0;          // distinct methods (the most of any export)
  int64_t files_read = 0;       // source files found (methods named Class.method)
  std::vector<std::string> files_missing;  // user files not found: methods named file:function
  int64_t frames_not_matching = 0;         // frames whose line is not in a def of that name in the file found
  int64_t damaged = 0;                     // backtraces whose payload could not be read (left out)
  bool empty() const { return backtraces == 0 && damaged == 0; }
  // Another export's (the run's sums; the missing files of both, sorted, at most kMaxFilesListed).
  void Add(const BacktraceModuleSummary& o);
  static constexpr size_t kMaxFilesListed = 50;
};

inline void BacktraceModuleSummary::Add(const BacktraceModuleSummary& o) {
  // Saturating: a partial from another machine may hold any count up to +-2^62.
  for (auto [mine, theirs] : {std::pair{&backtraces, o.backtraces},
                              {&used, o.used},
                              {&in_nvtx_modules, o.in_nvtx_modules},
                              {&ranges, o.ranges},
                              {&files_read, o.files_read},
                              {&frames_not_matching, o.frames_not_matching},
                              {&damaged, o.damaged}}) {
    SatAdd(*mine, theirs);
  }
  methods = methods > o.methods ? methods : o.methods;
  for (const auto& f : o.files_missing) {
    bool have = false;
    for (const auto& g : files_missing) have = have || g == f;
    if (!have && files_missing.size() < kMaxFilesListed) files_missing.push_back(f);
  }
}

}  // namespace cpprof::model
