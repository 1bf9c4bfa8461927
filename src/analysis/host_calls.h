// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The host side of the GPU work, for the replay's launch and sync edges (analysis/replay.h): per
// process, every CUDA API call's start and thread by correlation id (what launched each op), and
// the calls that block their thread until GPU work is done.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/gpu_work.h"

namespace cpprof::analysis {

// cudaStreamSynchronize, cudaDeviceSynchronize, cudaThreadSynchronize, cudaEventSynchronize, a
// blocking cudaMemcpy* (not *Async), and their driver API forms (cuStreamSynchronize,
// cuCtxSynchronize, cuEventSynchronize, cuMemcpy*); nsys's "_v3020" version suffix is ignored.
// cudaStreamWaitEvent is not one: it makes a stream wait, not the host.
bool IsHostSync(std::string_view api_name);

class HostCalls {
  struct Entry {
    uint32_t correlation;
    uint32_t thread;
    int64_t start;
  };

 public:
  // A call with a correlation id; `sync`: IsHostSync of its name.
  void Add(int64_t global_pid, int64_t global_tid, int64_t correlation, int64_t start, int64_t end, bool sync);
  void Finish();  // sorts; call once after the last Add

  // Lookups with a memory of the last answer (cheap when asked in correlation order). One per
  // reading thread.
  class Reader {
   public:
    explicit Reader(const HostCalls& calls) : calls_(&calls) {}
    // The call's start and thread; start model::kNoLaunch when there is none.
    model::HostLaunch Find(int64_t global_pid, int64_t correlation);

   private:
    const HostCalls* calls_;
    int64_t last_pid_ = -1;
    const std::vector<Entry>* last_ = nullptr;
    size_t hint_ = 0;
  };

  // The process's blocking calls, by start (empty when it made none).
  const std::vector<model::HostSync>& Syncs(int64_t global_pid) const;
  size_t size() const { return calls_; }

 private:
  struct Process {
    std::vector<Entry> calls;  // by correlation after Finish
    std::vector<model::HostSync> syncs;
    std::unordered_map<int64_t, uint32_t> thread_index;  // globalTid -> index
  };
  std::unordered_map<int64_t, Process> by_process_;
  size_t calls_ = 0;
  // Add's last thread (a node of by_process_ stays where it is).
  Process* last_ = nullptr;
  int64_t last_pid_ = 0, last_tid_ = 0;
  uint32_t last_thread_ = 0;
};

}  // namespace cpprof::analysis
