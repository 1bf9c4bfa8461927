// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Environment: what cpprof reads of the machine besides running programs: environment
// variables, the home directory, and files at fixed system locations (/opt/nvidia/...,
// /usr/local/cuda*, /proc/sys/kernel/perf_event_paranoid).
//
// The seam for tests: an Environment built from a map of variables and a root prefix makes
// every fixed location resolve inside a temporary tree (root + "/opt/nvidia/..."), while paths
// that come from variables (PATH, HOME, CONDA_PREFIX) are used as they are.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cpprof::runner {

class Environment {
 public:
  // This process's variables; fixed locations are the real ones.
  static Environment FromProcess();
  explicit Environment(std::map<std::string, std::string> vars, std::string root = "");

  std::optional<std::string> Get(const std::string& name) const;
  std::string GetOr(const std::string& name, const std::string& fallback) const;
  void Set(const std::string& name, const std::string& value) { vars_[name] = value; }
  void Unset(const std::string& name) { vars_.erase(name); }
  const std::map<std::string, std::string>& vars() const { return vars_; }

  // $HOME, else the password database's entry for this user.
  std::string Home() const;
  // A fixed system location ("/opt/nvidia") as seen through the root prefix.
  std::string System(const std::string& absolute_path) const { return root_ + absolute_path; }
  const std::string& root() const { return root_; }

  // Where `name` is on this environment's PATH.
  std::optional<std::string> FindOnPath(const std::string& name) const;

  // Plain filesystem queries (on real paths: apply System() first for fixed locations).
  static bool IsFile(const std::string& path);
  static bool IsDir(const std::string& path);
  static bool IsExecutable(const std::string& path);
  static std::optional<std::string> ReadText(const std::string& path, size_t max_bytes = 1 << 20);
  static std::string RealPath(const std::string& path);  // the path itself when it cannot resolve
  // Paths matching a glob(3) pattern, sorted in version order (cuda-9.2 before cuda-12.4).
  static std::vector<std::string> Glob(const std::string& pattern);

 private:
  std::map<std::string, std::string> vars_;
  std::string root_;
};

// Version-aware string order (strverscmp): "2024.5.1" < "2025.3.1", "cuda-9" < "cuda-12".
bool VersionLess(const std::string& a, const std::string& b);

}  // namespace cpprof::runner
