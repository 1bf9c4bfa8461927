// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// GPU memory over time per process and device, from CUDA_GPU_MEMORY_USAGE_EVENTS
// (nsys profile --cuda-memory-usage true).
//
// What this measures: memory as the CUDA driver sees it, allocations minus frees of device memory.
// PyTorch's caching allocator takes big segments with cudaMalloc and keeps them, so this is
// reserved (segment) memory, torch.cuda.max_memory_reserved plus CUDA/NCCL's own allocations,
// not torch.cuda.max_memory_allocated (tensors alive), which can be much lower.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cpprof::model {

struct MemoryPoint {
  int64_t time_ns = 0;
  int64_t bytes = 0;  // in use after the event(s) at time_ns
};

// The memory of one process on one device.
struct MemorySeries {
  int64_t global_pid = 0;
  int pid = 0;
  int device = -1;
  int64_t peak_bytes = 0;
  int64_t peak_ns = 0;  // the first time the peak was reached
  // The CUDA runtime call (CUPTI_ACTIVITY_KIND_RUNTIME, same process) of the event that reached
  // the peak, and the thread that made it. Device Static memory (module globals, loaded lazily
  // with a module) comes without a call: then the latest event up to the peak that has one (on
  // the real exports a few bytes of static memory often set the peak just after a cudaMalloc).
  // 0 when no event up to the peak has a call or the call is not in the export.
  int64_t peak_correlation_id = 0;
  int64_t peak_global_tid = 0;
  int64_t final_bytes = 0;      // in use after the last event
  int64_t events = 0;           // counted events (device memory kinds only)
  int64_t unmatched_frees = 0;  // frees that drove the sum below zero (memory allocated before the capture)
  // At most `max_points` points (MemoryOptions), in time order: per time bin the largest value,
  // plus the first and last event and the exact peak point.
  std::vector<MemoryPoint> timeline;
};

struct MemoryUsage {
  bool captured = false;  // CUDA_GPU_MEMORY_USAGE_EVENTS present
  std::string note;       // when not captured: what captures it
  // Which ENUM_CUDA_MEM_KIND kinds counted, in words.
  std::string counted_kinds;
  // By globalPid, then device. A process has one series per device it touched. nsys records
  // Device Static memory (module globals) under device 0 for every process, so a rank on cuda:1
  // also has a small series on device 0: use PeakSeriesPerProcess for one row per process.
  std::vector<MemorySeries> series;
  int64_t ignored_events = 0;  // host (pageable, pinned), managed and unknown kinds
  // Damaged rows left out: start or bytes not an integer, negative, or past kMaxEventBytes.
  int64_t invalid_events = 0;
};

}  // namespace cpprof::model
