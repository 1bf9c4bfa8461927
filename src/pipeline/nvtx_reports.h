// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// NVTX reports of `cpprof stats`: nvtx_sum (time per range name and style, as nsys names ranges:
// "domain:text", the default domain as ":text").
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "model/stats_table.h"
#include "nsys/sqlite_db.h"

namespace cpprof::pipeline {

// NVTX_EVENTS is read in rowid ranges of at least `min_rows_per_thread` rows, one per thread
// (the databases' ExecContext::threads): the output is the same for any thread count.
inline constexpr int64_t kMinNvtxRowsPerThread = 100'000;
StatusOr<model::StatsTable> NvtxSum(const nsys::Database& db, int64_t min_rows_per_thread);
inline StatusOr<model::StatsTable> NvtxSum(const nsys::Database& db) { return NvtxSum(db, kMinNvtxRowsPerThread); }
// Over several exports (`stats --merge`): one table as for one export holding all their ranges,
// grouped by name (domain name, style, text) across exports; a group's durations export by
// export, each in table order. Exports are read one after the other, each on all cores, and
// merged as they come.
StatusOr<model::StatsTable> NvtxSum(std::span<const nsys::Database> dbs,
                                    int64_t min_rows_per_thread = kMinNvtxRowsPerThread);

// nvtx_gpu_proj_sum: per range name and style, the GPU time of the work launched inside each
// instance (see analysis/nvtx_projection.h for the contract).
StatusOr<model::StatsTable> NvtxGpuProjSum(const nsys::Database& db);
// Over several exports: each range projects onto its own export's GPU ops; the groups are
// merged by name (domain name, style, text) across exports, projections export by export.
StatusOr<model::StatsTable> NvtxGpuProjSum(std::span<const nsys::Database> dbs);

}  // namespace cpprof::pipeline
