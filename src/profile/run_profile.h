// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Running a profile plan: guards, the nsys run under a hard timeout and Ctrl-C, logs, the
// importer and export fallbacks, the readout and the records (command.txt, doctor.json).
#pragma once

#include <ostream>

#include "base/exec_context.h"
#include "base/status.h"
#include "doctor/doctor.h"
#include "model/report.h"
#include "profile/plan.h"
#include "profile/probe.h"
#include "runner/process_runner.h"

namespace cpprof::profile {

struct ExecuteOptions {
  ExecContext exec;                 // how cpprof reads the exports after the run (threads, timing)
  double kill_grace_s = 5;          // SIGTERM, then SIGKILL after this long
  bool live = true;                 // echo the run's output to `err` as it comes (--quiet: false)
  double poll_s = 1;                // the probe polls nvidia-smi's memory.used this often (0: never)
  std::string compare;              // --compare: an earlier result's export; `cpprof diff --sanity` against it
  double mem_tolerance = 0.10;      // --mem-tolerance (a fraction): peak memory difference the comparison accepts
  model::Report* report = nullptr;  // when set, gets the readout's model (cpprof sweep reads it in-process)
  double* wall_s = nullptr;         // when set, gets the profiled run's wall time
};

// An earlier result named by --compare: RESULT.sqlite, or the result's base path (RESULT, as in
// RESULT.readout.md); "" when there is no export there.
std::string ResolveCompare(const std::string& previous);

// One launch without nsys under the same guards as the profiled run (--timeout with the whole
// process tree killed, Ctrl-C), its output teed live into `stdout_log`/`stderr_log` (and onto
// `err` unless options.live is off) and parsed for the iteration lines (profile/probe.h). What
// cpprof sweep times its points with. Fails only when the launch could not start.
struct UnprofiledRun {
  runner::ProcessResult result;
  bool timed_out = false, interrupted = false;
  int killed = 0;
  double wall_s = 0;
  ProbeOutput lines;
};
StatusOr<UnprofiledRun> RunWithoutProfiler(const std::vector<std::string>& argv,
                                           const std::map<std::string, std::string>& env, double timeout_s,
                                           const std::string& stdout_log, const std::string& stderr_log,
                                           runner::ProcessRunner& runner, std::ostream& err,
                                           const ExecuteOptions& options = {});

// The last `n` lines of `text`.
std::string LastLines(const std::string& text, size_t n);

// Runs `plan` (already checked by Guards) and writes its results. `out` gets the readout; `err`
// progress and what was done on the way. Returns the exit code (130 after Ctrl-C) or an error
// that names the logs.
StatusOr<int> Execute(const Plan& plan, const doctor::DoctorFindings& findings, runner::ProcessRunner& runner,
                      std::ostream& out, std::ostream& err, const ExecuteOptions& options = {});

}  // namespace cpprof::profile
