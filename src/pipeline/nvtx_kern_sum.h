// nvtx_kern_sum of `cpprof stats`: per process, thread, NVTX range ("domain:text") and style, the
// kernels launched inside each range, as nsys's report of that name groups them.
#pragma once

#include <span>

#include "base/status.h"
#include "model/stats_table.h"
#include "nsys/sqlite_db.h"

namespace cpprof::pipeline {

// A kernel belongs to every push/pop or start/end range (not ended on another thread) of the thread
// that launched it whose [start, end] holds its launch call's [start, end]: nested ranges each count
// it, and a kernel whose launch no range holds (or whose launch is not in the export) is a row of
// its own with the range (and, without a launch, the thread) empty. Per (PID, TID, range, style,
// kernel name): the range instances and kernels (each counted once), and the statistics of the
// kernels' durations taken once per (range instance, kernel) pair, as nsys's join takes them.
// Rows by range, PID, TID, then total time, largest first. Several exports (`stats --merge`): the
// groups of all of them, a group's durations export by export.
StatusOr<model::StatsTable> NvtxKernSum(std::span<const nsys::Database> dbs);

}  // namespace cpprof::pipeline
