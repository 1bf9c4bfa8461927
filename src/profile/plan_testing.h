// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Fixtures of the profile plan's tests (plan_test.cc) and of the whole runs with fakes
// (tests/cli/profile_test.cc): the H200 as the doctor saw it, the plan inputs of this checkout,
// options and a plan that must build. For tests only.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "doctor/doctor.h"
#include "doctor/nsys_help.h"
#include "profile/cpfold_presets.h"
#include "profile/plan.h"
#include "test_support.h"

namespace cpprof::testing {

inline const std::string kNsys = "/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys";

inline std::string HelpText() { return ReadFile(DataPath("fakes/h200/nsys-profile--help.txt")); }

inline std::string Launcher() {
  return std::filesystem::canonical(DataPath("../../python/cpprof_helpers/launch_workload.py")).string();
}
inline std::string PythonDir() { return std::filesystem::canonical(DataPath("../../python")).string(); }

// The H200 as the doctor saw it, with the libdw fix in place: 2 free H200s on NVLink, nsys
// 2025.3.1 from the Nsight Compute bundle (its export has --include-json), CPU sampling available.
inline doctor::DoctorFindings H200Findings(const std::string& nsys = kNsys, const std::string& help = HelpText()) {
  doctor::DoctorFindings f;
  doctor::NsysCandidate c;
  c.path = c.real_path = nsys;
  c.version = doctor::ParseNsysVersion("2025.3.1.0");
  f.candidates.push_back(c);
  f.chosen = 0;
  f.profile_help_read = true;
  f.profile_help = doctor::ParseProfileHelp(help);
  f.export_help_read = true;
  f.export_options = doctor::ParseHelpOptions(ReadFile(DataPath("fakes/h200/nsys-export--help.txt")));
  f.functions_trace_base = DataPath("fakes/PythonFunctionsTrace/pytorch.json");
  f.cpu_sampling = true;
  f.importer.checked = true;
  f.importer.loads = true;
  f.nvidia_smi_found = true;
  for (int i = 0; i < 2; ++i) {
    doctor::GpuInfo g;
    g.index = i;
    g.name = "NVIDIA H200";
    g.uuid = "GPU-" + std::to_string(i);
    f.gpus.push_back(g);
    f.targets.push_back(i);
  }
  f.python.runs = true;
  f.python.torchrun = "torchrun";
  return f;
}

inline profile::PlanInputs Inputs(std::map<std::string, std::string> env = {{"PATH", "/usr/bin:/bin"}}) {
  profile::PlanInputs in;
  in.launcher = Launcher();
  in.cpfold_root = PythonDir();
  in.cpfold_spec = PythonDir() + "/cpfold/trace_spec.json";
  auto presets = profile::ReadCpfoldPresets(PythonDir());  // the real cpfold's table, as the CLI reads it
  EXPECT_TRUE(presets.ok()) << presets.status().message();
  if (presets.ok()) in.cpfold_presets = *presets;
  in.caller_env = std::move(env);
  in.user = "tester";
  return in;
}

inline profile::ProfileOptions Opts(std::vector<std::string> args, const std::string& preset = "fast") {
  profile::ProfileOptions o;
  o.args = std::move(args);
  o.preset = preset;
  o.results_dir = TempDir() + "/results-plan";
  return o;
}

inline profile::Plan MustPlan(const profile::ProfileOptions& o, const doctor::DoctorFindings& f,
                              const profile::PlanInputs& in = Inputs()) {
  auto p = profile::BuildPlan(o, f, in);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : profile::Plan{};
}

}  // namespace cpprof::testing
