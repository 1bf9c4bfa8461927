// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "runner/helpers.h"

namespace cpprof::runner {

std::vector<std::string> HelperSearchDirs(const Environment& env) {
  std::vector<std::string> dirs;
  if (auto d = env.Get("CPPROF_HELPERS_DIR"); d && !d->empty()) dirs.push_back(*d);
  std::string exe = Environment::RealPath("/proc/self/exe");
  if (size_t slash = exe.rfind('/'); slash != std::string::npos) {
    std::string exe_dir = exe.substr(0, slash);
    dirs.push_back(exe_dir + "/../python/cpprof_helpers");
    dirs.push_back(exe_dir + "/../share/cpprof/python/cpprof_helpers");
  }
#ifdef CPPROF_SOURCE_DIR
  dirs.push_back(std::string(CPPROF_SOURCE_DIR) + "/python/cpprof_helpers");
#endif
  return dirs;
}

std::optional<std::string> FindHelper(const Environment& env, const std::string& file) {
  for (const auto& dir : HelperSearchDirs(env)) {
    std::string p = dir + "/" + file;
    if (Environment::IsFile(p)) return Environment::RealPath(p);
  }
  return std::nullopt;
}

std::optional<std::string> FindWorkloadKitRoot(const Environment& env) {
  for (const auto& dir : HelperSearchDirs(env)) {
    std::string root = dir + "/..";
    if (Environment::IsFile(root + "/cpprof_workload/__init__.py")) return Environment::RealPath(root);
  }
  return std::nullopt;
}

}  // namespace cpprof::runner
