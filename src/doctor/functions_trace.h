// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The --python-functions-trace JSON of nsys: building it from the model's own classes.
//
// nsys's schema is a list of {"domain", "module", "functions": ["Class.method", ...]} (other keys,
// such as "color", are kept as they are). Entries are validated by importing them with the
// workload's Python (python/cpprof_helpers/validate_trace.py), merged with a base file (the
// pytorch.json shipped with nsys, so torch.* stays named), and written atomically.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/status.h"
#include "runner/environment.h"
#include "runner/process_runner.h"

namespace cpprof::doctor {

// The most bytes of a functions-trace file cpprof reads (a base file: --base, the pytorch.json
// shipped with nsys; a --spec file), in 'cpprof trace-json' and 'cpprof profile' alike. Such a
// file lists module and function names, far below this; the limit only stops a wrong file (an
// export, a log) from being read whole. 64 MiB, the larger of the two limits the commands had
// (profile read 16 MiB), so no base that 'cpprof trace-json' accepts is refused by 'cpprof profile'.
inline constexpr size_t kFunctionsTraceMaxBytes = size_t{64} << 20;

struct FunctionEntry {
  std::string module;    // "pkg.layers"
  std::string function;  // "Trunk.forward" or "helper"
  std::string origin;    // "--function", "--spec FILE", "--discover PKG"
};

struct DiscoverRequest {
  std::string package;
  std::string match;  // an RE2 regex (base/regex.h) searched in class names by cpprof; "": every class
};

struct TraceRequest {
  std::vector<FunctionEntry> entries;
  std::vector<DiscoverRequest> discover;
  std::map<std::string, std::string> aliases;  // ALIAS -> REAL
  std::string entry_module;                    // what `-m` will launch (runs as __main__)
};

struct Rejection {
  FunctionEntry entry;
  std::string reason;   // the helper's: module_not_importable, class_missing, runs_as_main, ...
  std::string message;  // what is wrong, in a sentence
  std::string hint;     // what to do
};

struct Validation {
  std::string python;  // the interpreter that imported them
  std::vector<FunctionEntry> accepted;
  std::vector<Rejection> rejected;
  std::vector<std::string> notes;  // discovery problems, re-exports, __main__ blocks
};

// "pkg.mod:Class.method" -> {pkg.mod, Class.method}.
StatusOr<FunctionEntry> ParseFunctionFlag(const std::string& flag);
// A spec file: {"pkg.mod": ["Class.method", ...], ...}, at most kFunctionsTraceMaxBytes.
StatusOr<std::vector<FunctionEntry>> ReadSpecFile(const std::string& path);
// "ALIAS=REAL".
StatusOr<std::pair<std::string, std::string>> ParseAlias(const std::string& flag);
bool IsDottedName(const std::string& s);
// Checks a --match/--trace-match pattern (RE2 syntax); the error (kUsage) names `flag`.
Status CheckClassPattern(const std::string& pattern, std::string_view flag);

// Runs the helper with `python` (from `cwd`, empty: this process's) and sorts its answers.
StatusOr<Validation> ValidateByImport(const TraceRequest& request, const std::string& python,
                                      runner::ProcessRunner& runner, const runner::Environment& env);

// One entry of nsys's schema, kept as its JSON object (so keys like "color" survive).
using TraceEntry = nlohmann::ordered_json;

// Reads and checks a functions-trace file: a list of objects with string "domain" and "module"
// and a list of strings "functions".
StatusOr<std::vector<TraceEntry>> ParseTraceJson(const std::string& text, const std::string& what);

// Base entries first, in their order (duplicates of one domain+module+other keys merged, their
// functions in first-seen order); then each accepted function: added to the entry of its
// domain+module when there is one, else to a new entry. New entries are sorted by domain and
// module, new functions sorted by name, so the result does not depend on the order of flags.
// `domain` empty: each module's top-level package.
std::vector<TraceEntry> MergeTrace(const std::vector<TraceEntry>& base, const std::vector<FunctionEntry>& accepted,
                                   const std::string& domain);

// Writes `path` with WriteFileAtomically (`o`: replace or not, the inputs it may not name), reading
// the temporary file back and checking that it parses to `entries` before the rename.
Status WriteTraceAtomically(const std::string& path, const std::vector<TraceEntry>& entries, WriteFileOptions o = {});

std::string TraceJsonText(const std::vector<TraceEntry>& entries);

}  // namespace cpprof::doctor
