// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// `cpprof sweep`: a workload over a matrix of sizes and CP grids. Each point is planned as
// `cpprof profile` plans a run (profile/plan: the same launch, environment and guards: busy GPUs
// are refused before anything runs, and looked for again before each point), timed without the
// profiler (the launch under --timeout, the median of its steady iterations from the workload's
// iteration lines), which is also the point's feasibility probe (its peak memory and time predict
// whether the capture fits), then captured once under nsys with the fast preset
// (profile/run_profile's Execute) and read in-process (the module split, exposed transfer, memory,
// efficiency). Each grid's size ladder stops at the first size that runs out of memory (or time);
// --largest refines the largest N that fits (sweep/ladder). The state is OUT/sweep.json, rewritten
// after every point: a rerun with the same --out skips the finished points and refuses a changed
// matrix or workload unless --force.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "base/exec_context.h"
#include "base/status.h"
#include "doctor/doctor.h"
#include "model/sweep.h"
#include "profile/plan.h"
#include "runner/process_runner.h"

namespace cpprof::sweep {

struct SweepOptions {
  ExecContext exec;  // how cpprof reads each point's exports (threads, timing)
  model::SweepSpec spec;
  std::string out_dir;      // --out
  bool force = false;       // --force: start again over an earlier sweep of another matrix
  double timeout_s = 900;   // --timeout: each run (the timing run, the capture) is killed after this long
  std::vector<int> gpus;    // --gpus
  bool live = true;         // echo the runs' output to stderr (--quiet: off)
  double kill_grace_s = 5;  // SIGTERM, then SIGKILL after this long
  bool dry_run = false;     // --dry-run: plans are made even without a usable nsys (named "nsys")
  std::string cpprof_version;
};

// The earlier sweep in OUT/sweep.json; nullopt when there is none. A file that is not one is an
// error naming it.
StatusOr<std::optional<model::SweepResult>> ReadSweepJson(const std::string& path);

// The machine's facts for sweep.json, from the doctor's findings.
model::SweepMachine MachineFacts(const doctor::DoctorFindings& f, const std::vector<int>& gpus);

// The plans of one point: the capture's (nsys, fast preset) and the timing run's (the same
// launch with the timing iterations; its `launch` runs without nsys).
struct PointPlans {
  profile::Plan capture, timing;
};
StatusOr<PointPlans> PlanPoint(const SweepOptions& o, int n, const std::string& grid, const doctor::DoctorFindings& f,
                               const profile::PlanInputs& in);

// Runs the sweep; writes OUT/sweep.json, sweep.md and sweep.html (after every point), prints
// sweep.md's tables to `out` and progress to `err`. Exit code: 0 when every point finished
// (ran, ran out of memory, or was skipped after one), 6 when a point failed otherwise or passed
// --timeout (its logs named; a rerun retries it), 130 after Ctrl-C.
StatusOr<int> RunSweep(const SweepOptions& o, const doctor::DoctorFindings& f, const profile::PlanInputs& in,
                       runner::ProcessRunner& runner, std::ostream& out, std::ostream& err);

// Writes OUT/sweep.json, sweep.md and sweep.html from `r` (the skipped points, the largest N per
// grid and the notes recomputed from its points); `written` gets what was written.
Status WriteOutputs(model::SweepResult r, const std::string& out_dir, model::SweepResult* written = nullptr);

// --render: sweep.md and sweep.html (and sweep.json, normalised) again from OUT/sweep.json; runs
// nothing (after an upgrade of cpprof, or for a sweep.json copied from another machine).
StatusOr<int> RenderSweep(const std::string& out_dir, std::ostream& out, std::ostream& err);

}  // namespace cpprof::sweep
