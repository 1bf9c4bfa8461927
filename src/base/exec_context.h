// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// How a command runs, as opposed to what it computes: the thread budget, whether to time its
// stages, where diagnostics go, and the knobs tests turn. The CLI builds one (cli/exec_env.h reads
// the environment once, in cli::Main) and passes it down in each command's options and with each
// export it opens (nsys::Database), so that no floor below cli/ reads the environment or a global.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace cpprof {

class DecompressedFiles;  // base/compressed_file.h

// Where a command's diagnostic lines go as it runs (stage timings, how long threads waited for
// each other): one line per call, whole, from any thread.
class Diagnostics {
 public:
  virtual ~Diagnostics() = default;
  virtual void Line(std::string_view line) = 0;
};

// Writes each line to a C stream (stderr by default), under a lock.
class StreamDiagnostics final : public Diagnostics {
 public:
  explicit StreamDiagnostics(std::FILE* out = stderr) : out_(out) {}
  void Line(std::string_view line) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::fprintf(out_, "%.*s\n", static_cast<int>(line.size()), line.data());
  }

 private:
  std::FILE* out_;
  std::mutex mu_;
};

// The machine's cores (at least 1): the thread budget when nobody chose one.
inline size_t HardwareThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

struct ExecContext {
  // Threads a command may run at once (ParallelFor, reading threads, prefetching): 1 runs
  // everything on the calling thread. The output is the same for any number.
  size_t threads = HardwareThreads();
  // Print how long each stage took, its peak memory, and how long threads waited for each other.
  bool timing = false;
  // Test knob: read the NVTX table in parts of this many rows (1 or more) instead of parts sized
  // for speed, so that small exports meet every part boundary case. 0: sized for speed.
  int64_t nvtx_part_rows = 0;
  // Where timing lines and notes go. Null: stderr.
  Diagnostics* diagnostics = nullptr;
  // Where compressed exports are decompressed to (TMPDIR, else /tmp), and the files this command
  // decompressed already (null: each reader decompresses its own copy).
  std::string temp_dir = "/tmp";
  std::shared_ptr<DecompressedFiles> decompressed;

  // A timing line (only when `timing`), to `diagnostics`.
  void Timing(std::string_view line) const {
    if (timing) Note(line);
  }
  // A line the user sees as the command runs ("cpprof: note: ..."), to `diagnostics`.
  void Note(std::string_view line) const {
    if (diagnostics) {
      diagnostics->Line(line);
    } else {
      static StreamDiagnostics to_stderr;
      to_stderr.Line(line);
    }
  }
  // Whether work may run on a thread of its own beside the caller's.
  bool HasSpareThreads() const { return threads > 1; }
};

}  // namespace cpprof
