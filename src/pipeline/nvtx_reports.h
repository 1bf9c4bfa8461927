// NVTX reports of `cpprof stats`: nvtx_sum (time per range name and style, as nsys names ranges:
// "domain:text", the default domain as ":text").
#pragma once

#include <cstdint>

#include "base/status.h"
#include "model/stats_table.h"
#include "nsys/sqlite_db.h"

namespace cpprof::pipeline {

// NVTX_EVENTS is read in rowid ranges of at least `min_rows_per_thread` rows, one per thread
// (CPPROF_THREADS): the output is the same for any thread count.
inline constexpr int64_t kMinNvtxRowsPerThread = 100'000;
StatusOr<model::StatsTable> NvtxSum(const nsys::Database& db, int64_t min_rows_per_thread);
inline StatusOr<model::StatsTable> NvtxSum(const nsys::Database& db) { return NvtxSum(db, kMinNvtxRowsPerThread); }

// nvtx_gpu_proj_sum: per range name and style, the GPU time of the work launched inside each
// instance (see analysis/nvtx_projection.h for the contract).
StatusOr<model::StatsTable> NvtxGpuProjSum(const nsys::Database& db);

}  // namespace cpprof::pipeline
