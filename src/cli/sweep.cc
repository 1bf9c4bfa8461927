// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof sweep [trunk|e2e|train] --n 512,1024 [--grids 1x1,1x2] [--dtype bf16] [--arg-template '...']
//              [--iters N] [--warmup N] [--capture-iters N] [--largest [--step S] [--max-n N]] [--timeout S]
//              [--gpus 0,1] [--nsys PATH] [--quiet] [--dry-run] [--force] --out DIR [-- CPFOLD_ARGS...]
//              cpprof sweep --render --out DIR
// Thin: the ladder lives in src/sweep/ladder (pure), the runs in src/sweep/run_sweep, the outputs
// in src/render/sweep_render.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "cli/command.h"
#include "cli/profile_inputs.h"
#include "doctor/doctor.h"
#include "runner/environment.h"
#include "runner/process_runner.h"
#include "sweep/ladder.h"
#include "sweep/run_sweep.h"

namespace cpprof::cli {

namespace {

class SweepCommand : public Command {
 public:
  void Declare(CLI::App& app) override {
    app.add_option("--n", sizes_,
                   "The sizes (tokens), comma-separated: each grid's ladder runs them upwards (required unless "
                   "--render)");
    app.add_option("--grids", grids_, "The CP grids ROWSxCOLS, comma-separated (ranks = ROWS x COLS)")
        ->capture_default_str();
    app.add_option("--dtype", o_.spec.dtype, "cpfold's --dtype (bf16, fp32); {dtype} in --arg-template");
    app.add_option("--arg-template", o_.spec.arg_template,
                   "A user's workload instead of cpfold: '-m MODULE ARGS' with {n}, {grid}, {cp0}, {cp1}, {ranks}, "
                   "{iters}, {warmup} and {dtype} filled per point (e.g. '-m pkg.profile_model --n-token {n} --cp0 "
                   "{cp0} --cp1 {cp1} --iters {iters}')");
    app.add_option("--iters", o_.spec.iters,
                   "Timed iterations of each point's timing run without the profiler (the median of the steady ones "
                   "is the point's time)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--warmup", o_.spec.warmup, "Warm-up iterations before them (left out)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--capture-iters", o_.spec.capture_iters,
                   "Timed iterations of each point's nsys capture (fast preset; the module split and transfers)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_flag("--largest", o_.spec.largest,
                 "Refine the largest N per grid: bisect between the last size that ran and the first out of memory, "
                 "to a step of --step (and, with --max-n, double past the ladder when no size ran out of memory)");
    app.add_option("--step", o_.spec.step, "With --largest: the bisection stops when the gap is this small")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--max-n", o_.spec.max_n,
                   "With --largest: when no size of the ladder runs out of memory, double N up to this size first "
                   "(0: no doubling)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--timeout", o_.timeout_s,
                   "Seconds before one run of a point (the timing run, or the capture) is killed with its whole "
                   "process tree; a timing run that passes it stops its grid's ladder")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--out", o_.out_dir,
                   "The sweep's folder: sweep.json (also the state a rerun resumes), sweep.md, "
                   "sweep.html, and points/ (each point's logs and capture)")
        ->required();
    app.add_flag("--render", render_,
                 "Write sweep.md and sweep.html again from --out's sweep.json; run nothing (other options ignored)");
    app.add_option("--gpus", o_.gpus, "The GPUs to use, by nvidia-smi index (default: the first free ones)")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->check(CLI::NonNegativeNumber);
    app.add_option("--nsys", nsys_, "Use this nsys (still vetted by the doctor) instead of searching for one");
    app.add_flag("--force", o_.force,
                 "Start again in an --out that holds a sweep of another matrix or workload (or no sweep)");
    app.add_flag("--quiet", quiet_, "Do not echo the runs' output to stderr (it still goes to the logs)");
    app.add_flag("--dry-run", dry_run_, "Print the ladder's first points' commands; run nothing");
    app.add_option("args", args_,
                   "cpfold's MODE (trunk, e2e or train; default trunk), then after -- more cpfold arguments for every "
                   "point");
  }

  StatusOr<int> Run(Context& ctx) override {
    o_.out_dir = std::filesystem::absolute(o_.out_dir).lexically_normal().string();
    while (o_.out_dir.size() > 1 && o_.out_dir.back() == '/') o_.out_dir.pop_back();
    if (render_) return sweep::RenderSweep(o_.out_dir, ctx.out, ctx.err);
    if (sizes_.empty()) {
      return Error(ExitCode::kUsage,
                   "give the sizes with --n, e.g. --n 512,1024,2048 (or --render to write the "
                   "pages of an earlier sweep again)");
    }
    model::SweepSpec& s = o_.spec;
    CPPROF_ASSIGN_OR_RETURN(s.sizes, sweep::ParseSizes(sizes_));
    CPPROF_ASSIGN_OR_RETURN(s.grids, sweep::ParseGrids(grids_));
    std::vector<std::string> rest = args_;
    if (!s.arg_template.empty()) {
      if (!rest.empty()) {
        return Error(ExitCode::kUsage, fmt::format("--arg-template names the whole workload: leave out '{}' (a mode "
                                                   "and arguments are for cpfold)",
                                                   fmt::join(rest, " ")));
      }
      CPPROF_RETURN_IF_ERROR(sweep::CheckTemplate(s.arg_template));
      sweep::TemplateValues v;
      v.n = 1;
      v.dtype = s.dtype.empty() ? "bf16" : s.dtype;
      auto argv = sweep::ExpandTemplate(s.arg_template, v);
      s.workload = argv.ok() && argv->size() > 1 && (*argv)[0] == "-m" ? "-m " + (*argv)[1] : (*argv)[0];
    } else {
      s.mode = "trunk";
      if (!rest.empty() && (rest[0] == "trunk" || rest[0] == "e2e" || rest[0] == "train")) {
        s.mode = rest[0];
        rest.erase(rest.begin());
      }
      if (!s.dtype.empty() && s.dtype != "bf16" && s.dtype != "fp32") {
        return Error(ExitCode::kUsage, fmt::format("--dtype {}: cpfold takes bf16 or fp32", s.dtype));
      }
      for (const auto& a : rest) {
        for (const char* taken : {"--n-token", "--cp0", "--cp1", "--iters", "--warmup", "--dtype", "--mode"}) {
          if (a == taken || a.rfind(std::string(taken) + "=", 0) == 0) {
            return Error(ExitCode::kUsage, fmt::format("'{}' after -- is set by cpprof sweep per point: use --n, "
                                                       "--grids, --iters, --warmup or --dtype",
                                                       a));
          }
        }
      }
      s.extra_args = rest;
      s.workload = "cpfold " + s.mode;
    }
    if (s.largest && s.max_n > 0 && s.max_n <= s.sizes.back()) {
      return Error(ExitCode::kUsage,
                   fmt::format("--max-n {} must be above the largest --n ({})", s.max_n, s.sizes.back()));
    }
    o_.live = !quiet_;
    o_.dry_run = dry_run_;
    o_.cpprof_version = CPPROF_VERSION;

    runner::Environment env = runner::Environment::FromProcess();
    runner::RealProcessRunner runner;
    profile::PlanInputs in = MakePlanInputs(env);
    doctor::DoctorOptions d;
    d.gpus = o_.gpus;
    d.nsys = nsys_;
    ctx.err << "cpprof: sweep: checking the machine (cpprof doctor)...\n";
    doctor::DoctorFindings f = doctor::Diagnose(d, runner, env);
    if (dry_run_) {
      for (const auto& grid : s.grids) {
        CPPROF_ASSIGN_OR_RETURN(sweep::PointPlans plans, sweep::PlanPoint(o_, s.sizes.front(), grid, f, in));
        ctx.out << fmt::format(
            "grid {} N={} (each size of the ladder alike, with its N):\n  timing run (no profiler): "
            "{}\n  capture: {}\n",
            grid, s.sizes.front(), fmt::join(plans.timing.launch, " "), fmt::join(plans.capture.argv, " "));
      }
      return 0;
    }
    o_.exec = ctx.exec;
    return sweep::RunSweep(o_, f, in, runner, ctx.out, ctx.err);
  }

 private:
  sweep::SweepOptions o_;
  std::string sizes_, grids_ = "1x1", nsys_;
  bool quiet_ = false, dry_run_ = false, render_ = false;
  std::vector<std::string> args_;
};

}  // namespace

std::unique_ptr<Command> MakeSweepCommand() { return std::make_unique<SweepCommand>(); }

}  // namespace cpprof::cli
