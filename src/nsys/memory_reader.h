// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Peak GPU memory per process and device from CUDA_GPU_MEMORY_USAGE_EVENTS.
#pragma once

#include <vector>

#include "base/status.h"
#include "model/memory.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

struct MemoryOptions {
  int max_points = 512;  // per series timeline; at least 3
  // Fill peak_global_tid (one more scan of the runtime table). The report leaves it off: it
  // finds the peak's module from the launches it has tagged already.
  bool peak_threads = true;
};

// Memory kinds (ENUM_CUDA_MEM_KIND) counted as GPU memory: Device (2), Array (3), Device Static
// (5). Pageable (0) and Pinned (1) are host memory; Managed (4) and Managed Static (6) migrate
// between host and device, so they are left out; Unknown (7) too.
bool IsGpuMemoryKind(int64_t mem_kind);

// Reads the table once in time order and keeps a running sum of allocations minus frees per
// (globalPid, deviceId). Without the table: captured=false and a note saying how to capture it.
StatusOr<model::MemoryUsage> ReadMemoryUsage(const Database& db, const MemoryOptions& options = {});

// Per process, the series with the largest peak (by globalPid).
std::vector<model::MemorySeries> PeakSeriesPerProcess(const model::MemoryUsage& usage);

// Keeps at most `max_points` of `points` (time order): splits the time range into bins and keeps
// per bin its largest point; the first and last points and the point at `peak_index` always stay.
std::vector<model::MemoryPoint> Downsample(const std::vector<model::MemoryPoint>& points, size_t peak_index,
                                           int max_points);

}  // namespace cpprof::nsys
