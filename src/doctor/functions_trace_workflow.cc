// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "doctor/functions_trace_workflow.h"

#include <fmt/format.h>

namespace cpprof::doctor {

StatusOr<std::vector<TraceEntry>> ReadTraceBase(const std::string& path) {
  auto text = runner::Environment::ReadText(path, kFunctionsTraceMaxBytes);
  if (!text) return Error(ExitCode::kBadInput, fmt::format("cannot read the base file '{}'", path));
  return ParseTraceJson(*text, path);
}

StatusOr<FunctionsTrace> MakeFunctionsTrace(const FunctionsTraceJob& job, runner::ProcessRunner& runner,
                                            const runner::Environment& env, std::ostream& err) {
  FunctionsTrace t;
  CPPROF_ASSIGN_OR_RETURN(t.validation, ValidateByImport(job.request, job.python, runner, env));
  const Validation& v = t.validation;
  for (const auto& r : v.rejected) {
    err << fmt::format("cpprof: {}: {}: rejected {}\n", job.strict ? "error" : "warning", job.command, r.message);
    if (!r.hint.empty()) err << fmt::format("  hint: {}\n", r.hint);
  }
  for (const auto& n : v.notes) err << "cpprof: note: " << job.command << ": " << n << '\n';
  if (job.strict && !v.rejected.empty()) {
    return Error(ExitCode::kCheckFailed, fmt::format("{} entr{} rejected (--strict); nothing written",
                                                     v.rejected.size(), v.rejected.size() == 1 ? "y" : "ies"));
  }
  t.entries = MergeTrace(job.base, v.accepted, job.domain);
  return t;
}

}  // namespace cpprof::doctor
