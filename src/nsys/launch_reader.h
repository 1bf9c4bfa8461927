// CUDA API calls (the launches GPU ops point back to by correlation id) and the threads that
// make them.
#pragma once

#include <cstdint>
#include <functional>
#include <set>

#include "base/status.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

// globalTids of PyTorch's autograd engine threads ("pt_autograd_N" in ThreadNames): the CUDA
// work they launch is the backward pass. Empty when the export names no threads.
StatusOr<std::set<int64_t>> ReadAutogradThreads(const Database& db);

// Streams the runtime API calls that carry a correlation id: fn(start, globalTid, correlationId).
Status ForEachRuntimeCall(const Database& db, const std::function<void(int64_t, int64_t, int64_t)>& fn);

// The process part of a globalTid (as in the kernel tables' globalPid).
inline int64_t ProcessOfThread(int64_t global_tid) {
  return global_tid & static_cast<int64_t>(0xFFFFFFFFFF000000ull);
}

}  // namespace cpprof::nsys
