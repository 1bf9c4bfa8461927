// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The doctor: is this machine ready to profile a multi-GPU PyTorch job with nsys?
//
// Diagnose() finds every nsys, fits them to the GPUs, checks that the chosen one can write a
// report (its QdstrmImporter loads), says what will be inert, looks at the workload's Python,
// whether the target GPUs are free and how they are connected. It returns a plain model
// (DoctorFindings) that `cpprof doctor` renders and that `cpprof profile` reuses: the chosen
// nsys, the environment it needs (the LD_LIBRARY_PATH fix), the accepted --pytorch tokens.
// Everything external goes through a ProcessRunner and an Environment (see src/runner).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "doctor/nsys_help.h"
#include "doctor/nsys_version.h"
#include "doctor/nvidia_smi.h"
#include "doctor/python_env.h"
#include "runner/environment.h"
#include "runner/process_runner.h"

namespace cpprof::doctor {

struct DoctorOptions {
  std::string nsys;        // --nsys: use this one (still vetted); empty: search
  std::vector<int> gpus;   // --gpus: the target GPUs; empty: all
  std::string python;      // --python; empty: torchrun's interpreter, else python3
  bool deep = false;       // --deep: profile a 1-second command and look for the .nsys-rep
  bool nsys_only = false;  // find and choose nsys (with the GPUs and Python it needs) only
  double timeout_s = 60;   // per probe command
};

enum class CheckStatus { kPass, kWarn, kFail, kSkip };
const char* CheckStatusName(CheckStatus s);  // "PASS", "WARN", "FAIL", "SKIP"

struct Check {
  std::string id;     // stable, for JSON consumers: "nsys", "importer", "gpus-free", ...
  std::string title;  // short, for the table
  CheckStatus status = CheckStatus::kSkip;
  std::string detail;  // what was found
  std::string hint;    // what to do (empty for PASS)
};

struct NsysCandidate {
  std::string path;                   // as found
  std::string real_path;              // symlinks resolved: the key for de-duplication
  std::vector<std::string> found_by;  // "PATH", "$CONDA_PREFIX", "Nsight Compute bundle", ...
  std::optional<NsysVersion> version;
  std::string version_text;       // first line of --version
  std::string error;              // why it did not run or answer
  bool supports_targets = false;  // >= the minimum of every target GPU (true with no GPU)
  bool recommended_for_targets = false;
  std::string unsupported_reason;  // "predates sm_120 (Blackwell) support: needs >= 2024.5"
};

struct ImporterCheck {
  std::string path;                   // QdstrmImporter; empty when none was found
  std::vector<std::string> searched;  // where it was looked for
  bool checked = false;
  bool loads = false;
  int exit_code = 0;
  std::string output;                     // what it printed (the loader's message when it failed)
  std::vector<std::string> missing_libs;  // "libdw.so.1"
  std::string fix_dir;                    // a folder found holding every missing library
  std::string ld_library_path;            // the LD_LIBRARY_PATH value with which it was seen to load
  bool loads_with_fix = false;
};

struct BusyGpu {
  int index = -1;
  std::vector<ComputeApp> apps;
};

struct DoctorFindings {
  // nsys
  std::vector<NsysCandidate> candidates;
  int chosen = -1;                    // into candidates
  std::string chosen_why;             // "newest of 2 copies that support sm_90 (Hopper, needs >= 2022.4)"
  std::vector<std::string> searched;  // where nsys was looked for
  ImporterCheck importer;
  bool profile_help_read = false;
  ProfileHelp profile_help;  // accepted options and --pytorch tokens
  bool export_help_read = false;
  std::vector<std::string> export_options;  // `nsys export --help`'s long options
  std::string functions_trace_base;         // the shipped PythonFunctionsTrace/pytorch.json
  bool status_read = false;
  StatusEnvironment status_env;      // nsys status -e
  std::optional<int> paranoid;       // /proc/sys/kernel/perf_event_paranoid
  std::optional<bool> cpu_sampling;  // unknown when neither could be read
  std::optional<bool> deep_ok;       // --deep
  std::string deep_detail;
  // The environment `nsys profile` needs beyond the caller's (LD_LIBRARY_PATH for the importer).
  std::map<std::string, std::string> profile_env;

  // GPUs
  bool nvidia_smi_found = false;
  std::string nvidia_smi_error;
  std::vector<GpuInfo> gpus;
  std::vector<int> targets;  // indices
  std::vector<ComputeApp> apps;
  std::vector<BusyGpu> busy;  // target GPUs with compute processes
  std::optional<Topology> topology;
  std::string topology_error;

  PythonInfo python;

  std::vector<Check> checks;  // in the order printed

  // `nsys export --include-json true` keeps NVTX payloads (NCCL's communicator ids and ranks,
  // Python backtraces), which nsys 2025.3.1 leaves out of its exports by default.
  bool ExportKeepsPayloads() const;
  const NsysCandidate* Chosen() const { return chosen >= 0 ? &candidates[static_cast<size_t>(chosen)] : nullptr; }
  bool HasFail() const;
};

DoctorFindings Diagnose(const DoctorOptions& options, runner::ProcessRunner& runner, const runner::Environment& env);

// The hint printed when no usable nsys exists: how to get one.
std::string InstallNsysHint();

}  // namespace cpprof::doctor
