// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof profile [--name N] [--preset fast|full] [--nproc-per-node P] [--nnodes N --rdzv-endpoint H:P]
//                [--gpus 0,1] [--trace-json FILE | --trace-function M:C.f... | --trace-discover PKG
//                [--trace-match RE]] [--probe [--probe-cap S] | --no-probe] [--timeout S] [--results-dir DIR] [--force]
//                [--quiet] [--dry-run] [trunk|e2e|train N_TOKEN RANKS] [-- (-m MODULE | SCRIPT) ARGS...]
// Thin: the plan lives in src/profile/plan (pure), the run in src/profile/run_profile.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "cli/command.h"
#include "cli/profile_inputs.h"
#include "doctor/doctor.h"
#include "profile/plan.h"
#include "profile/run_profile.h"
#include "runner/environment.h"
#include "runner/process_runner.h"

namespace cpprof::cli {

namespace {

class ProfileCommand : public Command {
 public:
  void Declare(CLI::App& app) override {
    app.add_option("--name", o_.name,
                   "The result's name (default: from the workload, e.g. cpfold-trunk-n1024-2x2-fast)");
    app.add_option("--preset", o_.preset, "fast: cuda,nvtx, no CPU sampling (timings); full: the seed's whole set")
        ->check(CLI::IsMember({"fast", "full"}))
        ->capture_default_str();
    app.add_option("--nproc-per-node", o_.nproc_per_node,
                   "Ranks on this node (default: the shorthand's, else the free GPUs)")
        ->check(CLI::PositiveNumber);
    app.add_option("--nnodes", o_.nnodes, "Nodes (each runs its own cpprof profile)")->check(CLI::PositiveNumber);
    app.add_option("--rdzv-endpoint", o_.rdzv_endpoint, "HOST:PORT of the rendezvous, with --nnodes > 1");
    app.add_flag("--per-rank", o_.per_rank,
                 "One nsys per rank inside the launcher (torchrun --no_python nsys profile -o NAME.%q{RANK} python "
                 "...), one export per rank, read as one run (docs/multi-node.md)");
    app.add_option("--gpus", o_.gpus, "The GPUs to use, by nvidia-smi index (default: the first free ones)")
        ->delimiter(',')
        ->allow_extra_args(false)  // else CLI11 eats a '--' that follows (the workload's separator)
        ->check(CLI::NonNegativeNumber);
    app.add_option("--nsys", nsys_, "Use this nsys (still vetted by the doctor) instead of searching for one");
    app.add_option("--trace-json", o_.trace_json, "The --python-functions-trace JSON (see 'cpprof trace-json')");
    app.add_option("--trace-function", o_.trace_functions,
                   "Name this function in the timeline: MODULE:Class.method (repeatable). cpprof writes "
                   "NAME.functions-trace.json as 'cpprof trace-json' does (validated by import, merged with nsys's "
                   "pytorch.json)")
        ->allow_extra_args(false);  // one value per flag, so a '--' right after it still starts the workload
    app.add_option("--trace-discover", o_.trace_discover,
                   "Name the forward of every torch.nn.Module subclass in this importable package (see --trace-match)");
    app.add_option("--trace-match", o_.trace_match,
                   "With --trace-discover: a regex found in the class names to keep (default: every class; RE2 "
                   "syntax: https://github.com/google/re2/wiki/Syntax)");
    app.add_flag("--probe", o_.probe,
                 "Run the feasibility probe (the launch without nsys first) for any workload; the default for "
                 "cpfold with the full preset");
    app.add_flag("--no-probe", o_.no_probe, "Skip the feasibility probe");
    app.add_option("--probe-cap", o_.probe_cap_s,
                   "Stop the probe of a workload that has printed no cpprof-iter line after this many seconds; the "
                   "profiled run goes on and the probe says what it could not learn (0: no cap; not for cpfold, "
                   "whose probe is one iteration)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_flag("--quiet", quiet_, "Do not echo the run's output to stderr (it still goes to the logs)");
    app.add_option("--compare", compare_,
                   "An earlier result (RESULT.sqlite or its base path): after the run, 'cpprof diff --sanity' "
                   "against it; exit 3 when the GPU work differs (the results are still written)");
    app.add_option("--mem-tolerance", mem_tolerance_pct_,
                   "With --compare: the peak memory difference accepted, in percent (different option sets move "
                   "driver-level peaks by up to ~8.5%)")
        ->check(CLI::Range(0.0, 1000.0))
        ->capture_default_str();
    app.add_option("--timeout", o_.timeout_s, "Seconds before the whole run (nsys, torchrun, ranks) is killed")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--results-dir", o_.results_dir, "Where results go: DIR/WORKFLOW/NAME.*")->capture_default_str();
    app.add_option("--workflow", o_.workflow, "The results subfolder (default: inference, training or custom)");
    app.add_flag("--force", o_.force, "Replace an existing result of the same name");
    app.add_flag("--wait", o_.wait, "When the GPUs are busy, poll until they are free (see --max-wait)");
    app.add_option("--max-wait", o_.max_wait_s, "Seconds --wait waits at most")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_flag("--dry-run", o_.dry_run, "Print the command, environment additions and outputs; run nothing");
    app.add_option("args", o_.args,
                   "MODE N_TOKEN RANKS (cpfold: trunk 1024 4), and/or the workload after --: -m MODULE ARGS or "
                   "SCRIPT ARGS");
  }

  StatusOr<int> Run(Context& ctx) override {
    std::string resolved_compare;
    if (!compare_.empty()) {
      resolved_compare = profile::ResolveCompare(compare_);
      if (resolved_compare.empty()) {
        return Status(ExitCode::kUsage, fmt::format("--compare {}: no earlier result there (give RESULT.sqlite or the "
                                                    "result's base path, e.g. profiling/results/inference/NAME)",
                                                    compare_));
      }
    }
    runner::Environment env = runner::Environment::FromProcess();
    runner::RealProcessRunner runner;
    profile::PlanInputs in = MakePlanInputs(env);

    CPPROF_RETURN_IF_ERROR(profile::CheckOptions(o_));
    // Absolute paths: nsys, torchrun and the ranks see the same files whatever their working folder.
    o_.results_dir = std::filesystem::absolute(o_.results_dir).lexically_normal().string();
    if (!o_.trace_json.empty()) {
      if (!runner::Environment::IsFile(o_.trace_json)) {
        return Error(ExitCode::kBadInput, fmt::format("--trace-json '{}' does not exist. Make one with 'cpprof "
                                                      "trace-json'.",
                                                      o_.trace_json));
      }
      o_.trace_json = std::filesystem::absolute(o_.trace_json).lexically_normal().string();
    }
    doctor::DoctorOptions d;
    d.gpus = o_.gpus;
    d.nsys = nsys_;
    ctx.err << "cpprof: profile: checking the machine (cpprof doctor)...\n";
    doctor::DoctorFindings f = doctor::Diagnose(d, runner, env);
    if (o_.wait && !o_.dry_run) {
      f = profile::WaitForGpus(
          o_, in, std::move(f), [&] { return doctor::Diagnose(d, runner, env); },
          [](double s) { std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(s * 1000))); },
          ctx.err);
    }
    CPPROF_ASSIGN_OR_RETURN(profile::Plan plan, profile::BuildPlan(o_, f, in));
    std::vector<Status> stops = profile::Guards(plan, o_, f);
    if (o_.dry_run) {
      ctx.out << profile::DescribePlan(plan);
      for (const auto& s : stops)
        ctx.err << "cpprof: warning: profile: a real run would stop here: " << s.message() << '\n';
      return 0;
    }
    if (!stops.empty()) {
      for (size_t i = 1; i < stops.size(); ++i) ctx.err << "cpprof: error: profile: " << stops[i].message() << '\n';
      return stops.front();
    }
    profile::ExecuteOptions eo;
    eo.exec = ctx.exec;
    eo.live = !quiet_;
    eo.compare = resolved_compare;
    eo.mem_tolerance = mem_tolerance_pct_ / 100.0;
    return profile::Execute(plan, f, runner, ctx.out, ctx.err, eo);
  }

 private:
  profile::ProfileOptions o_;
  std::string nsys_;
  bool quiet_ = false;
  std::string compare_;
  double mem_tolerance_pct_ = 10;
};

}  // namespace

std::unique_ptr<Command> MakeProfileCommand() { return std::make_unique<ProfileCommand>(); }

}  // namespace cpprof::cli
