// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// CUDA API calls (the launches GPU ops point back to by correlation id) and the threads that
// make them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "base/status.h"
#include "model/global_id.h"
#include "nsys/export_reader.h"
#include "nsys/row_prefetch.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

// globalTids of PyTorch's autograd engine threads ("pt_autograd_N" in ThreadNames): the CUDA
// work they launch is the backward pass. Empty when the export names no threads.
StatusOr<std::set<int64_t>> ReadAutogradThreads(const Database& db);

// One runtime API call with a correlation id.
struct RuntimeCall {
  int64_t start = 0, end = 0;
  int64_t global_tid = 0;
  int64_t correlation = 0;
  int64_t name_id = 0;  // StringIds id of the function's name
};

// Streams the runtime API calls that carry a correlation id, in table order. Calls with damaged
// times (ValidTimesSql) are left out; returns how many.
StatusOr<int64_t> ForEachRuntimeCall(const Database& db, const std::function<void(const RuntimeCall&)>& fn);

struct ApiCallRow {
  int64_t start, end;
  int64_t global_tid;
  int64_t correlation;  // 0 when the export has none for the call
  bool has_correlation;
  int64_t name_id;  // StringIds id of the function's name
  // A CUDA backtrace row (--cudabacktrace): nsys's second row for a call it took a backtrace of,
  // with the same thread and correlation id, around the call's own row (just before it in table
  // order); alone when nsys traced the call no other way.
  bool backtrace;
};

// The CUDA runtime and driver API calls as a cursor: in table order (exports list them by start)
// or, with `by_start`, sorted by start (SQLite sorts). `launches_only`: the calls that carry a
// correlation id. An export without the table, or without a correlationId column (every call
// then has none), gives an empty or id-less stream rather than an error.
class ApiCallCursor {
 public:
  static StatusOr<ApiCallCursor> Open(const Database& db, bool by_start, bool launches_only);
  bool Next() {
    if (!st_) return false;
    do {
      if (!st_->Step()) return false;
    } while (!ValidTimes(*st_, 0, 1, false));  // damaged times (ValidTimesSql) are left out
    row_.start = st_->Int(0);
    row_.end = st_->Int(1);
    row_.global_tid = st_->Int(2);
    row_.has_correlation = !st_->IsNull(3);
    row_.correlation = st_->Int(3);
    row_.name_id = st_->Int(4);
    row_.backtrace = st_->Int(5) != 0;
    return true;
  }
  const ApiCallRow& row() const { return row_; }
  Status status() const { return st_ ? st_->status() : OkStatus(); }

 private:
  std::optional<PrefetchedRows> st_;  // SQLite steps on a core of its own
  ApiCallRow row_{};
};

// The latest end of a CUDA API call (0 when there is none).
StatusOr<int64_t> LastApiCallEnd(const Database& db);

// Thread names by globalTid (ThreadNames joined to StringIds; a thread named twice keeps the
// later name). Empty when the export names no threads.
StatusOr<std::map<int64_t, std::string>> ReadThreadNames(const Database& db);

// The process part of a globalTid (as in the kernel tables' globalPid).
inline int64_t ProcessOfThread(int64_t global_tid) { return model::GlobalPidOf(global_tid); }

}  // namespace cpprof::nsys
