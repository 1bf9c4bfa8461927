// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof trace-json [--function MOD:Class.method]... [--spec FILE] [--discover PKG --match RX]
//                   [--alias ALIAS=REAL]... [--domain NAME] [--base FILE | --no-base]
//                   [--entry-module MOD] [--strict] [--python PY] [-o OUT]
// Thin: validation and merging live in src/doctor/functions_trace_workflow (shared with cpprof profile).
#include <fmt/format.h>

#include <set>

#include "cli/command.h"
#include "doctor/doctor.h"
#include "doctor/functions_trace.h"
#include "doctor/functions_trace_workflow.h"
#include "doctor/python_env.h"
#include "runner/environment.h"
#include "runner/process_runner.h"

namespace cpprof::cli {

namespace {

class TraceJsonCommand : public Command {
 public:
  void Declare(CLI::App& app) override {
    app.add_option("--function", functions_, "A function to name: MODULE:Class.method (repeatable)");
    app.add_option("--spec", spec_, "A JSON file {\"pkg.module\": [\"Class.method\", ...]}");
    app.add_option("--discover", discover_,
                   "Walk this importable package for torch.nn.Module subclasses (needs --match) and name "
                   "their forward");
    app.add_option("--match", match_,
                   "With --discover: a regex found in the class names to keep, e.g. "
                   "'TriMul|Pairformer|Trunk|Diffusion|Confidence' (RE2 syntax: "
                   "https://github.com/google/re2/wiki/Syntax)");
    app.add_option("--alias", aliases_,
                   "ALIAS=REAL: vendored code that imports itself as ALIAS lives in package REAL (repeatable)");
    app.add_option("--domain", domain_, "The NVTX domain of the new entries (default: each module's top package)");
    app.add_option("--base", base_,
                   "The functions-trace file to extend (default: the PythonFunctionsTrace/pytorch.json shipped "
                   "with the nsys that 'cpprof doctor' picks)");
    app.add_flag("--no-base", no_base_, "Write only the model's own entries");
    app.add_option("--entry-module", entry_module_,
                   "The module the job launches with -m: it runs as __main__, which nsys cannot annotate");
    app.add_flag("--strict", strict_, "Any rejected entry is an error (default: left out and listed)");
    app.add_option("--python", python_, "The workload's Python (default: torchrun's interpreter, else python3)");
    app.add_option("-o,--output", output_, "Where to write the JSON (default: stdout); written whole or not at all");
    app.add_flag("--force", force_, "Replace the -o file when it exists");
  }

  StatusOr<int> Run(Context& ctx) override {
    CPPROF_ASSIGN_OR_RETURN(doctor::TraceRequest req, Request());
    if (no_base_ && !base_.empty()) return Error(ExitCode::kUsage, "--base and --no-base exclude each other");
    runner::Environment env = runner::Environment::FromProcess();
    runner::RealProcessRunner runner;
    doctor::FunctionsTraceJob job;
    job.request = std::move(req);
    job.domain = domain_;
    job.strict = strict_;
    job.command = "trace-json";
    std::string base_path = base_;
    if (!no_base_) {
      if (base_path.empty()) {
        CPPROF_ASSIGN_OR_RETURN(base_path, ShippedBase(runner, env));
      }
      CPPROF_ASSIGN_OR_RETURN(job.base, doctor::ReadTraceBase(base_path));
    }
    WriteFileOptions write;  // -o checked now, before the workload is imported
    write.replace_existing = force_;
    for (const auto& in : {spec_, base_path}) {
      if (!in.empty()) write.inputs.push_back(in);
    }
    const bool to_stdout = output_.empty() || output_ == "-";
    if (!to_stdout) CPPROF_RETURN_IF_ERROR(CheckOutputPath(output_, write));
    doctor::WorkloadPython py = doctor::FindWorkloadPython(env, python_);
    if (py.path.empty()) {
      return Error(ExitCode::kExternal, fmt::format("{}: pass the workload's Python with --python PATH", py.why));
    }
    job.python = py.path;
    CPPROF_ASSIGN_OR_RETURN(doctor::FunctionsTrace trace, doctor::MakeFunctionsTrace(job, runner, env, ctx.err));
    const doctor::Validation& v = trace.validation;
    if (v.accepted.empty()) {
      return Error(ExitCode::kCheckFailed,
                   "no entry was accepted, so the file would name none of the model's "
                   "functions; nothing written");
    }
    if (to_stdout) {
      ctx.out << doctor::TraceJsonText(trace.entries);
    } else {
      CPPROF_RETURN_IF_ERROR(doctor::WriteTraceAtomically(output_, trace.entries, write));
    }
    PrintSummary(v, job.base.size(), base_path, ctx.err);
    return 0;
  }

 private:
  // The request from the flags: --function, --spec, --discover/--match, --alias, --entry-module.
  StatusOr<doctor::TraceRequest> Request() const {
    doctor::TraceRequest req;
    for (const auto& f : functions_) {
      CPPROF_ASSIGN_OR_RETURN(doctor::FunctionEntry e, doctor::ParseFunctionFlag(f));
      req.entries.push_back(e);
    }
    if (!spec_.empty()) {
      CPPROF_ASSIGN_OR_RETURN(auto entries, doctor::ReadSpecFile(spec_));
      req.entries.insert(req.entries.end(), entries.begin(), entries.end());
    }
    if (discover_.empty() != match_.empty()) {
      return Error(ExitCode::kUsage, "--discover PKG and --match REGEX go together");
    }
    if (!discover_.empty()) {
      if (!doctor::IsDottedName(discover_)) {
        return Error(ExitCode::kUsage, fmt::format("--discover '{}' is not a package name", discover_));
      }
      CPPROF_RETURN_IF_ERROR(doctor::CheckClassPattern(match_, "--match"));
      req.discover.push_back({discover_, match_});
    }
    if (req.entries.empty() && req.discover.empty()) {
      return Error(ExitCode::kUsage,
                   "nothing to name: give --function MODULE:Class.method, --spec FILE, or "
                   "--discover PKG --match REGEX");
    }
    for (const auto& a : aliases_) {
      CPPROF_ASSIGN_OR_RETURN(auto pair, doctor::ParseAlias(a));
      req.aliases[pair.first] = pair.second;
    }
    if (!entry_module_.empty() && !doctor::IsDottedName(entry_module_)) {
      return Error(ExitCode::kUsage, fmt::format("--entry-module '{}' is not a module name", entry_module_));
    }
    req.entry_module = entry_module_;
    return req;
  }

  // No --base: the shipped pytorch.json of the nsys the doctor picks.
  StatusOr<std::string> ShippedBase(runner::ProcessRunner& runner, const runner::Environment& env) const {
    doctor::DoctorOptions o;
    o.nsys_only = true;
    o.python = python_;
    doctor::DoctorFindings f = doctor::Diagnose(o, runner, env);
    if (f.functions_trace_base.empty()) {
      return Error(ExitCode::kError,
                   fmt::format("no base file: {}. Pass the shipped pytorch.json with --base FILE (it is in "
                               "PythonFunctionsTrace/ beside nsys), or --no-base to write only the model's "
                               "entries. Try 'cpprof doctor'.",
                               f.Chosen() ? fmt::format("{} has no PythonFunctionsTrace/pytorch.json", f.Chosen()->path)
                                          : "no nsys found"));
    }
    return f.functions_trace_base;
  }

  // The last line: what was written, how many functions in how many modules, and from which base.
  void PrintSummary(const doctor::Validation& v, size_t base_entries, const std::string& base_path,
                    std::ostream& err) const {
    std::set<std::string> mods, fns;
    for (const auto& a : v.accepted) {
      mods.insert(a.module);
      fns.insert(a.module + ":" + a.function);
    }
    size_t modules = mods.size(), functions = fns.size();
    err << fmt::format(
        "cpprof: trace-json: {}{} function{} in {} module{} validated with {}{}{}\n",
        output_.empty() || output_ == "-" ? "" : "wrote " + output_ + ": ", functions, functions == 1 ? "" : "s",
        modules, modules == 1 ? "" : "s", v.python,
        base_path.empty() ? "" : fmt::format(", added to {} base entries from {}", base_entries, base_path),
        v.rejected.empty() ? "" : fmt::format("; {} rejected", v.rejected.size()));
  }

  std::vector<std::string> functions_;
  std::string spec_;
  std::string discover_;
  std::string match_;
  std::vector<std::string> aliases_;
  std::string domain_;
  std::string base_;
  bool no_base_ = false;
  std::string entry_module_;
  bool strict_ = false;
  bool force_ = false;
  std::string python_;
  std::string output_;
};

}  // namespace

std::unique_ptr<Command> MakeTraceJsonCommand() { return std::make_unique<TraceJsonCommand>(); }

}  // namespace cpprof::cli
