// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The plan of one `cpprof profile` run: from the command line and the doctor's findings, the
// exact nsys argv, the torchrun launch, the environment additions, the output paths and what was
// dropped or warned about. Pure: nothing here runs a program or touches the filesystem, so every
// decision is unit-tested (plan_test.cc).
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "doctor/doctor.h"
#include "profile/cpfold_presets.h"

namespace cpprof::profile {

enum class Preset { kFast, kFull };

// Set in the probe's environment for a workload cpprof does not know: cpprof_workload.schedule
// (python/cpprof_workload) runs only this many iterations of the run.
inline constexpr const char* kProbeItersEnv = "CPPROF_PROBE_ITERS";

struct ProfileOptions {
  std::string name;                          // --name; empty: derived from the workload
  std::string preset = "fast";               // --preset fast|full
  int nproc_per_node = 0;                    // --nproc-per-node; 0: the shorthand's ranks, else free GPUs
  int nnodes = 1;                            // --nnodes
  std::string rdzv_endpoint;                 // --rdzv-endpoint HOST:PORT (needed with --nnodes > 1)
  bool per_rank = false;                     // --per-rank: one nsys per rank, inside the launcher
  std::vector<int> gpus;                     // --gpus; empty: the first free GPUs
  std::string trace_json;                    // --trace-json FILE
  std::vector<std::string> trace_functions;  // --trace-function MODULE:Class.method (repeatable)
  std::string trace_discover;                // --trace-discover PKG
  std::string trace_match;                   // --trace-match REGEX (with --trace-discover; default: every class)
  bool probe = false;                        // --probe: probe a workload that is not cpfold too
  bool no_probe = false;                     // --no-probe
  double probe_cap_s = 120;                  // --probe-cap: the probe of a workload without iteration lines (0: none)
  double timeout_s = 1800;                   // --timeout
  std::string results_dir = "profiling/results";
  std::string workflow;           // --workflow; empty: inference / training / custom
  bool force = false;             // --force
  bool dry_run = false;           // --dry-run
  bool wait = false;              // --wait: poll until the GPUs are free
  double max_wait_s = 3600;       // --max-wait
  double poll_s = 30;             // how often --wait asks nvidia-smi again
  std::vector<std::string> args;  // positionals: the shorthand, then the workload after --
};

// What the plan needs to know of this machine besides the findings (filled by the CLI; tests
// pass their own).
struct PlanInputs {
  std::string launcher;              // python/cpprof_helpers/launch_workload.py
  std::string cpfold_root;           // the folder holding the cpfold package; empty: cpfold not found
  std::string cpfold_spec;           // cpfold/trace_spec.json; empty: none
  CpfoldPresets cpfold_presets;      // cpfold/presets.json (diffusion steps per preset); empty: unknown
  std::string cpfold_presets_error;  // why cpfold_presets is empty (ReadCpfoldPresets' message)
  // The folder holding the cpprof_workload package (python/ or share/cpprof/python): put on a
  // workload's PYTHONPATH so that a module written by `cpprof scaffold` imports it. Empty: none.
  std::string workload_kit_root;
  std::map<std::string, std::string> caller_env;
  std::string user = "user";  // for /tmp/$USER/cpprof
  std::string tmp_root = "/tmp";
  std::string host;  // named into reports of multi-node runs
};

struct OutputPaths {
  std::string folder;      // <results>/<workflow>
  std::string base;        // <folder>/<name> (nsys -o)
  std::string tmp_folder;  // /tmp/$USER/cpprof/<name>-<hash of the results folder>
  // The files, one member per row of kOutputFiles (below), which fills them.
  std::string nsys_rep, qdstrm, sqlite, readout_md, report_json, command_txt, doctor_json;
  std::string stdout_log, stderr_log;  // in the results folder
  std::string tmp_stdout_log, tmp_stderr_log;
  std::string functions_trace;                     // written by cpprof (cpfold spec, --trace-function); empty: none
  std::string probe_json;                          // <name>.probe.json
  std::string probe_stdout_log, probe_stderr_log;  // <name>.probe.{stdout,stderr}.log
  std::string tmp_probe_stdout_log, tmp_probe_stderr_log;  // /tmp/$USER/cpprof/<name>/probe.*.log
  std::string gitignore;                                   // <results>/.gitignore
  // --per-rank: <base>.<rank> for every rank of the run (nsys -o <base>.%q{RANK}); a node of a
  // multi-node run finds only its own ranks' reports.
  std::vector<std::string> rank_bases;

  // The result files an earlier run of the same name leaves (what --force replaces): the rows of
  // kOutputFiles marked `result`, in its order, then each rank's files with --per-rank.
  std::vector<std::string> Results() const;
};

// When a profile run writes an output file.
enum class OutputWhen {
  kRun,             // every run
  kProbe,           // when the feasibility probe runs
  kFunctionsTrace,  // when cpprof writes the functions-trace JSON (Plan::trace_json is then this file)
  kNsysLeftover,    // only when nsys cannot convert its capture (then the importer runs on it)
};

// One file a profile run writes.
struct OutputFile {
  std::string OutputPaths::*path;  // the member of OutputPaths that holds it
  const char* suffix;              // after OutputPaths::base, or after tmp_folder when in_tmp
  bool in_tmp;                     // a live copy under /tmp, there even when cpprof is killed
  OutputWhen when;
  bool result;    // an earlier run's file of the same name: --force replaces it (OutputPaths::Results)
  bool per_rank;  // with --per-rank, each rank's <base>.<rank> gets one (nsys -o <base>.%q{RANK})
  const char* writer;
};

// Every file a profile run writes, in the order --dry-run lists them (outputs:). BuildPlan fills
// OutputPaths from it, Results() and the run's clean-up read it, DescribePlan lists it.
inline constexpr OutputFile kOutputFiles[] = {
    {&OutputPaths::nsys_rep, ".nsys-rep", false, OutputWhen::kRun, true, true, "nsys profile (-o BASE)"},
    {&OutputPaths::qdstrm, ".qdstrm", false, OutputWhen::kNsysLeftover, true, true,
     "nsys, when it cannot convert its capture (cpprof then runs QdstrmImporter)"},
    {&OutputPaths::sqlite, ".sqlite", false, OutputWhen::kRun, true, true,
     "cpprof with 'nsys export --type sqlite --include-json true' (where nsys has it), else nsys profile "
     "--export=sqlite"},
    {&OutputPaths::readout_md, ".readout.md", false, OutputWhen::kRun, true, false,
     "cpprof: the profile summary and the readout (render/profile_summary.h)"},
    {&OutputPaths::report_json, ".report.json", false, OutputWhen::kRun, true, false, "cpprof: the report as JSON"},
    {&OutputPaths::command_txt, ".command.txt", false, OutputWhen::kRun, true, false,
     "cpprof: DescribePlan, then the probe's results"},
    {&OutputPaths::doctor_json, ".doctor.json", false, OutputWhen::kRun, true, false,
     "cpprof: the doctor's findings the plan was made from"},
    {&OutputPaths::stdout_log, ".stdout.log", false, OutputWhen::kRun, true, false, "cpprof: the run's stdout"},
    {&OutputPaths::stderr_log, ".stderr.log", false, OutputWhen::kRun, true, false, "cpprof: the run's stderr"},
    {&OutputPaths::tmp_stdout_log, "/stdout.log", true, OutputWhen::kRun, false, false,
     "cpprof: the run's stdout, live"},
    {&OutputPaths::tmp_stderr_log, "/stderr.log", true, OutputWhen::kRun, false, false,
     "cpprof: the run's stderr, live"},
    {&OutputPaths::probe_json, ".probe.json", false, OutputWhen::kProbe, true, false,
     "cpprof: the probe's measurement and predictions"},
    {&OutputPaths::probe_stdout_log, ".probe.stdout.log", false, OutputWhen::kProbe, true, false,
     "cpprof: the probe's stdout"},
    {&OutputPaths::probe_stderr_log, ".probe.stderr.log", false, OutputWhen::kProbe, true, false,
     "cpprof: the probe's stderr"},
    {&OutputPaths::tmp_probe_stdout_log, "/probe.stdout.log", true, OutputWhen::kProbe, false, false,
     "cpprof: the probe's stdout, live"},
    {&OutputPaths::tmp_probe_stderr_log, "/probe.stderr.log", true, OutputWhen::kProbe, false, false,
     "cpprof: the probe's stderr, live"},
    {&OutputPaths::functions_trace, ".functions-trace.json", false, OutputWhen::kFunctionsTrace, false, false,
     "cpprof: the --python-functions-trace JSON (doctor/functions_trace_workflow.h)"},
};

// The suffix of the row of kOutputFiles that fills `member`: a rank's report with --per-rank is
// <base>.<rank> + OutputSuffix(&OutputPaths::nsys_rep).
constexpr const char* OutputSuffix(std::string OutputPaths::*member) {
  for (const OutputFile& file : kOutputFiles) {
    if (file.path == member) return file.suffix;
  }
  return "";
}

struct Plan {
  Preset preset = Preset::kFast;
  std::string name, workflow;
  int ranks = 1, nnodes = 1;
  bool per_rank = false;  // one nsys per rank (torchrun --no_python nsys profile ... python ...)
  std::vector<int> gpus;  // the GPUs the ranks get (CUDA_VISIBLE_DEVICES), empty: unknown

  bool cpfold = false;      // the reference workload
  std::string cpfold_mode;  // trunk | e2e | train
  int n_token = 0, cp0 = 1, cp1 = 1;

  std::string nsys, nsys_version;
  std::vector<std::string> nsys_options;  // what follows "nsys profile", before the launch
  // What follows "nsys export --type sqlite" when cpprof exports the report after the run
  // ({"--include-json", "true"}: NVTX payloads kept); empty: nsys profile --export=sqlite writes it.
  std::vector<std::string> export_options;
  std::vector<std::string> launch;    // torchrun ... launcher -- workload
  std::vector<std::string> workload;  // (-m MODULE | SCRIPT) ARGS, exactly as the workload gets it
  std::vector<std::string> argv;      // the whole command
  std::map<std::string, std::string> env_additions;
  std::map<std::string, std::string> env;     // the child's whole environment
  std::vector<std::string> kept_from_caller;  // NCCL_*, TORCH_*, NVSHMEM_* names passed through
  double timeout_s = 1800;                    // --timeout: then the whole process tree is killed
  double pg_timeout_s = 0;
  std::string trace_json;                    // the --python-functions-trace file; empty: none
  std::string trace_spec, trace_base;        // trace_json is written from these (cpfold's spec)
  std::vector<std::string> trace_functions;  // --trace-function: validated by import, then merged
  std::string trace_discover, trace_match;   // --trace-discover PKG [--trace-match REGEX]
  std::string entry_module;                  // the workload's -m MODULE (runs as __main__)
  // The feasibility probe: the same launch without nsys, shortened, run first.
  bool probe = false;
  std::string probe_why;                // why it runs or not
  std::vector<std::string> probe_argv;  // torchrun ... launcher -- workload (shortened)
  // The probe's environment when it differs from `env`: a workload cpprof does not know gets
  // CPPROF_PROBE_ITERS (cpprof_workload.schedule runs only that many iterations). Empty: `env`.
  std::map<std::string, std::string> probe_env;
  std::map<std::string, std::string> probe_env_additions;
  // --probe-cap: a probe that has printed no iteration line after this long is stopped and the
  // profiled run goes on (the memory seen so far is checked, the time is not predicted). 0: no
  // cap; always 0 for cpfold (its probe runs one iteration).
  double probe_cap_s = 0;
  int planned_iters = 0;              // the profiled run's iterations (warmup included); 0: unknown
  double iter_scale = 1;              // e2e: planned diffusion steps / the probe's
  double overhead = 1.1;              // the preset's overhead factor under nsys (a guess)
  double headroom = 0.10;             // GPU memory kept free for nsys
  std::vector<std::string> warnings;  // printed, and kept in command.txt and the readout
  std::vector<std::string> dropped;   // "--cudabacktrace=all: CPU sampling is unavailable ..."
  OutputPaths out;
};

StatusOr<Preset> ParsePreset(const std::string& s);

// The shorthand of the seed recipe: MODE N RANKS (trunk 1024 4 -> 2x2; e2e 512 2 -> 1x2).
struct Shorthand {
  std::string mode;
  int n_token = 0, ranks = 0, cp0 = 1, cp1 = 1;
};
bool LooksLikeShorthand(const std::vector<std::string>& args);
StatusOr<Shorthand> ParseShorthand(const std::vector<std::string>& args);
// A square grid when ranks is a square, else 1 x ranks.
std::pair<int, int> CpGrid(int ranks);

// The usage errors that need no findings (options that exclude each other, malformed
// --trace-function): checked by the CLI before the doctor runs, and again by BuildPlan.
Status CheckOptions(const ProfileOptions& options);

// The plan, in named steps (plan.cc): the options checked; the workload (cpfold's shorthand, or
// what follows --); ranks and GPUs; names and output paths (kOutputFiles); nsys and its options,
// the functions trace among them; the launch; the probe; the environment.
StatusOr<Plan> BuildPlan(const ProfileOptions& options, const doctor::DoctorFindings& findings,
                         const PlanInputs& inputs);

// Why this plan must not run, each with the fix; empty: it may. Checked against the findings
// (nsys makes reports, GPUs are free and enough) and the filesystem (no result of the same name
// without --force).
std::vector<Status> Guards(const Plan& plan, const ProfileOptions& options, const doctor::DoctorFindings& findings);

// Whether the only reason to wait is there: the ranks' GPUs are busy (or too few are free)
// while some GPU is in use, so waiting can help.
bool WaitingForGpusCanHelp(const Plan& plan, const ProfileOptions& options, const doctor::DoctorFindings& findings);

// --wait: while WaitingForGpusCanHelp, sleep options.poll_s and ask `diagnose` again, for at most
// options.max_wait_s. Returns the last findings (the caller re-plans and re-checks them).
// `sleep_s` is injected so tests do not sleep.
doctor::DoctorFindings WaitForGpus(const ProfileOptions& options, const PlanInputs& inputs,
                                   doctor::DoctorFindings findings,
                                   const std::function<doctor::DoctorFindings()>& diagnose,
                                   const std::function<void(double)>& sleep_s, std::ostream& err);

// What --dry-run prints and command.txt holds.
std::string DescribePlan(const Plan& plan);

}  // namespace cpprof::profile
