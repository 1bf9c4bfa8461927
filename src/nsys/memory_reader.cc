// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/memory_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "nsys/export_reader.h"

namespace cpprof::nsys {

namespace {

constexpr int64_t kAllocation = 0;  // ENUM_CUDA_DEV_MEM_EVENT_OPER: 0 Allocation, 1 Deallocation

struct Running {
  model::MemorySeries series;
  std::vector<model::MemoryPoint> points;
  size_t peak_index = 0;
  int64_t bytes = 0;
  int64_t last_correlation_id = 0;  // of the latest event that came from a runtime call
};

}  // namespace

bool IsGpuMemoryKind(int64_t mem_kind) { return mem_kind == 2 || mem_kind == 3 || mem_kind == 5; }

std::vector<model::MemoryPoint> Downsample(const std::vector<model::MemoryPoint>& points, size_t peak_index,
                                           int max_points) {
  max_points = std::max(max_points, 3);
  if (points.size() <= static_cast<size_t>(max_points)) return points;
  std::vector<size_t> keep = {0, points.size() - 1, peak_index};
  const int bins = max_points - 3;
  const int64_t t0 = points.front().time_ns, t1 = points.back().time_ns;
  const double width = bins > 0 ? static_cast<double>(t1 - t0 + 1) / bins : 0;
  int current_bin = -1;
  size_t best = 0;
  for (size_t i = 0; bins > 0 && i < points.size(); ++i) {
    int bin = std::min(bins - 1, static_cast<int>(static_cast<double>(points[i].time_ns - t0) / width));
    if (bin != current_bin) {
      if (current_bin >= 0) keep.push_back(best);
      current_bin = bin;
      best = i;
    } else if (points[i].bytes > points[best].bytes) {
      best = i;
    }
  }
  if (current_bin >= 0) keep.push_back(best);
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  std::vector<model::MemoryPoint> out;
  out.reserve(keep.size());
  for (size_t i : keep) out.push_back(points[i]);
  return out;
}

StatusOr<model::MemoryUsage> ReadMemoryUsage(const Database& db, const MemoryOptions& options) {
  model::MemoryUsage usage;
  usage.counted_kinds = "Device, Array, Device Static (host pageable/pinned and managed memory left out)";
  if (!db.HasTable(kMemoryEventsTable)) {
    usage.note = "GPU memory usage not captured (captured with nsys profile --cuda-memory-usage true)";
    return usage;
  }
  usage.captured = true;
  // One pass in time order (rowid breaks ties, so equal timestamps keep the order nsys wrote).
  // SQLite sorts the rows: about as costly as the scan on exports of a few 100k events.
  CPPROF_ASSIGN_OR_RETURN(
      Statement st, db.Prepare(fmt::format("SELECT start, globalPid, deviceId, bytes, memKind, memoryOperationType, "
                                           "coalesce(correlationId, 0) FROM {} ORDER BY start, rowid",
                                           kMemoryEventsTable),
                               "reading GPU memory usage"));
  std::map<std::pair<int64_t, int64_t>, Running> series;
  while (st.Step()) {
    if (!IsGpuMemoryKind(st.Int(4))) {
      ++usage.ignored_events;
      continue;
    }
    int64_t start = st.Int(0), gpid = st.Int(1), device = st.Int(2), bytes = st.Int(3);
    // 2^50 bytes (1 PiB) is more than any GPU holds: a larger event is damage, as is a time past 2^62 ns.
    if (!st.IsInteger(0) || !st.IsInteger(3) || bytes < 0 || bytes > (int64_t{1} << 50) || start < 0 ||
        start > kMaxTimestampNs) {
      ++usage.invalid_events;
      continue;
    }
    Running& r = series[{gpid, device}];
    if (r.series.events == 0) {
      r.series.global_pid = gpid;
      r.series.pid = PidOf(gpid);
      r.series.device = static_cast<int>(device);
    }
    ++r.series.events;
    bool alloc = st.Int(5) == kAllocation;
    if (__builtin_add_overflow(r.bytes, alloc ? bytes : -bytes, &r.bytes)) r.bytes = alloc ? INT64_MAX : INT64_MIN;
    if (!alloc && r.bytes < 0) ++r.series.unmatched_frees;
    r.points.push_back({start, r.bytes});
    if (int64_t corr = st.Int(6); corr != 0) r.last_correlation_id = corr;
    if (r.points.size() == 1 || r.bytes > r.series.peak_bytes) {
      r.series.peak_bytes = r.bytes;
      r.series.peak_ns = start;
      r.series.peak_correlation_id = r.last_correlation_id;
      r.peak_index = r.points.size() - 1;
    }
  }
  CPPROF_RETURN_IF_ERROR(st.status());

  // The thread of each peak's runtime call: one scan of the runtime table for all of them.
  std::set<int64_t> wanted;
  for (auto& [key, r] : series) {
    if (r.series.peak_correlation_id != 0) wanted.insert(r.series.peak_correlation_id);
  }
  if (options.peak_threads && !wanted.empty() && db.HasTable(kRuntimeTable)) {
    std::string list;
    for (int64_t id : wanted) list += (list.empty() ? "" : ",") + std::to_string(id);
    CPPROF_ASSIGN_OR_RETURN(Statement rt, db.Prepare(fmt::format("SELECT correlationId, globalTid FROM {} "
                                                                 "WHERE correlationId IN ({})",
                                                                 kRuntimeTable, list),
                                                     "reading CUDA runtime calls of memory peaks"));
    while (rt.Step()) {
      int64_t corr = rt.Int(0), tid = rt.Int(1);
      for (auto& [key, r] : series) {
        if (r.series.peak_correlation_id == corr && GlobalPidOf(tid) == r.series.global_pid) {
          r.series.peak_global_tid = tid;
        }
      }
    }
    CPPROF_RETURN_IF_ERROR(rt.status());
  }

  for (auto& [key, r] : series) {
    r.series.final_bytes = r.bytes;
    r.series.timeline = Downsample(r.points, r.peak_index, options.max_points);
    usage.series.push_back(std::move(r.series));
  }
  return usage;
}

std::vector<model::MemorySeries> PeakSeriesPerProcess(const model::MemoryUsage& usage) {
  std::map<int64_t, const model::MemorySeries*> best;
  for (const auto& s : usage.series) {
    auto& b = best[s.global_pid];
    if (!b || s.peak_bytes > b->peak_bytes) b = &s;
  }
  std::vector<model::MemorySeries> out;
  for (const auto& [gpid, s] : best) out.push_back(*s);
  return out;
}

}  // namespace cpprof::nsys
