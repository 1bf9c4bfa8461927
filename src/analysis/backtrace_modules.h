// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Module calls from Python backtraces (issue 35 item 5): a capture made with
// `--python-backtrace=cuda` records each launch's Python stack. Where no NVTX module range is
// around a launch, the model's methods on its stack (outermost first) are its module path, the
// same path a functions-trace JSON would have given, and consecutive launches of one thread that
// share a path prefix form one call of each method on it. The calls become module ranges
// (KeptRange, domain "Python backtrace") that ModuleAttribution treats like NVTX ones.
//
// A frame is a method of the model when its file is not a library's (site-packages,
// dist-packages, the Python standard library, "<frozen ...>") and, read from the source file, its
// line is inside a `def` of that function's name directly in a `class` body: it is then named
// "Class.method". Without the source file, a function nn.Module's call machinery called
// (torch's _call_impl) is named "file.py:function"; other frames are left out.
//
// What is an estimate, said in docs/modules.md: a launch without a backtrace (nsys records them
// for the runtime API's launches, not for library kernels launched through the driver, e.g.
// cuBLAS's) goes to the calls of the backtrace before it, unless it is within kLeadNs (20 us) of
// the next backtrace, whose calls then start before it; and a new call of a method is told from
// the last one by its line going back (a method that loops over its children counts a call per
// pass), by an iteration's start or end, or by another thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/module_attribution.h"
#include "analysis/module_config.h"
#include "model/python_frames.h"

namespace cpprof::analysis {

inline constexpr std::string_view kBacktraceDomain = "Python backtrace";

// A source file's text and where it was found, or nullopt when it was not.
struct SourceText {
  std::string found_at;
  std::string text;
};
using SourceReader = std::function<std::optional<SourceText>(const std::string& recorded_path)>;

// The def around `line` (1-based) in Python source `text`: the function's name and, when the def
// sits directly in a class body, the class's. Empty names when there is none.
struct EnclosingDef {
  std::string function;
  std::string cls;
};
EnclosingDef FindEnclosingDef(std::string_view text, int line);

// A file of a library or of Python itself (never a model's method).
bool IsLibraryFile(std::string_view path);

struct BacktraceModuleInput {
  const model::PythonBacktraces* backtraces = nullptr;
  // Ranges already kept from NVTX: a backtrace inside one of their module ranges is left to it.
  const std::vector<KeptRange>* kept = nullptr;
  // Where iterations start, per process (globalPid, time): no call spans one.
  std::vector<std::pair<int64_t, int64_t>> iteration_starts;
  SourceReader read_source;  // may be empty: no source
};

struct BacktraceModules {
  std::vector<KeptRange> ranges;   // KeptRange::name indexes `names`
  std::vector<std::string> names;  // "Python backtrace:Class.method"
  model::BacktraceModuleSummary summary;
};

// The module calls of every thread's backtraces; `config` decides which names are modules
// (a user's exclude patterns apply as to NVTX names).
BacktraceModules BuildBacktraceModules(const BacktraceModuleInput& in, const ModuleConfig& config);

}  // namespace cpprof::analysis
