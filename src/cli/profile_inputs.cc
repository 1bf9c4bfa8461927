// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "cli/profile_inputs.h"

#include <pwd.h>
#include <unistd.h>

#include "profile/cpfold_presets.h"
#include "runner/helpers.h"

namespace cpprof::cli {

namespace {

std::string Parent(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? "." : p.substr(0, s);
}

}  // namespace

profile::PlanInputs MakePlanInputs(const runner::Environment& env) {
  profile::PlanInputs in;
  if (auto l = runner::FindHelper(env, "launch_workload.py")) {
    in.launcher = *l;
    std::string python_dir = Parent(Parent(*l));
    if (runner::Environment::IsFile(python_dir + "/cpfold/run.py")) {
      in.cpfold_root = python_dir;
      if (runner::Environment::IsFile(python_dir + "/cpfold/trace_spec.json")) {
        in.cpfold_spec = python_dir + "/cpfold/trace_spec.json";
      }
      if (auto presets = profile::ReadCpfoldPresets(python_dir); presets.ok()) {
        in.cpfold_presets = *presets;
      } else {
        in.cpfold_presets_error = presets.status().message();
      }
    }
  }
  if (auto kit = runner::FindWorkloadKitRoot(env)) in.workload_kit_root = *kit;
  in.caller_env = env.vars();
  if (auto u = env.Get("USER"); u && !u->empty()) {
    in.user = *u;
  } else if (const passwd* pw = ::getpwuid(::getuid())) {
    in.user = pw->pw_name;
  }
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) in.host = host;
  return in;
}

}  // namespace cpprof::cli
