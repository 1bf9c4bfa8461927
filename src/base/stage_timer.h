// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// With ExecContext::timing (CPPROF_TIMING=1 on the command line), how long each stage of a command
// took and the peak memory so far, onto the context's diagnostics: where time and memory go on a
// big export, without a profiler.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "base/exec_context.h"

namespace cpprof {

// When the process began (its static initialization): the timing lines say how far in they are.
inline const std::chrono::steady_clock::time_point kProcessStart = std::chrono::steady_clock::now();

inline double SecondsSinceStart() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kProcessStart).count();
}

// The process's peak resident set so far (VmHWM), in MB; 0 where /proc is not there.
inline double PeakRssMb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return 0;
}

class StageTimer {
 public:
  explicit StageTimer(const ExecContext& exec) : exec_(exec), last_(std::chrono::steady_clock::now()) {}
  void Mark(const char* stage) {
    if (!exec_.timing) return;
    auto now = std::chrono::steady_clock::now();
    char line[256];
    std::snprintf(line, sizeof line, "cpprof: timing: %-28s %8.3f s   peak RSS so far %6.1f MB   (at %.3f s)", stage,
                  std::chrono::duration<double>(now - last_).count(), PeakRssMb(),
                  std::chrono::duration<double>(now - kProcessStart).count());
    exec_.Timing(line);
    last_ = now;
  }

 private:
  ExecContext exec_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace cpprof
