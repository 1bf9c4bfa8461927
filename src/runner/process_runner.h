// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// ProcessRunner: the one seam through which cpprof runs other programs (nsys, nvidia-smi,
// QdstrmImporter, ldd, python, torchrun). Programs are given as argv lists, never as a shell
// string, so nothing read from the user or a file is ever parsed by a shell.
//
// The real implementation forks and execs with pipes and a timeout; tests use it too, with
// fake tools (small scripts) first on the PATH they pass in RunOptions::env.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cpprof::runner {

struct RunOptions {
  // The child's whole environment. Unset: the parent's. The program (argv[0] without a '/')
  // is looked up on this environment's PATH, not the parent's.
  std::optional<std::map<std::string, std::string>> env;
  std::string cwd;                        // empty: the parent's
  std::optional<std::string> stdin_data;  // unset: the child reads /dev/null
  double timeout_s = 60;                  // then the child's process group is killed
  size_t max_output = 64u << 20;          // bytes kept per stream; the rest is drained and dropped
  // Called with each chunk as it is read (is_err: from stderr), before max_output applies: for
  // live logs and echoing a long run's output. Runs on the calling thread.
  std::function<void(bool is_err, std::string_view chunk)> on_output;
};

struct ProcessResult {
  int exit_code = -1;   // valid when !signaled
  int term_signal = 0;  // the signal that ended it, 0 if it exited
  bool timed_out = false;
  bool truncated = false;  // an output stream went past max_output
  std::string out;
  std::string err;

  bool ok() const { return !timed_out && term_signal == 0 && exit_code == 0; }
  // "exit 127", "killed by signal 9", "timed out after 5 s".
  std::string Describe() const;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // An error Status only when the program could not be started at all (not found, not
  // executable); a program that ran and failed is a ProcessResult with its exit code.
  virtual StatusOr<ProcessResult> Run(const std::vector<std::string>& argv, const RunOptions& options) = 0;
};

// fork + execve, stdin/stdout/stderr on pipes, the child in its own process group.
class RealProcessRunner : public ProcessRunner {
 public:
  StatusOr<ProcessResult> Run(const std::vector<std::string>& argv, const RunOptions& options) override;
};

// The absolute path `name` resolves to on `path_var` (a PATH value), as execvp would find it;
// `name` with a '/' is returned as is when it is executable.
std::optional<std::string> FindProgram(const std::string& name, const std::string& path_var);

}  // namespace cpprof::runner
