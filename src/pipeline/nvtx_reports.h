// NVTX reports of `cpprof stats`: nvtx_sum (time per range name and style, as nsys names ranges:
// "domain:text", the default domain as ":text").
#pragma once

#include "base/status.h"
#include "model/stats_table.h"
#include "nsys/sqlite_db.h"

namespace cpprof::pipeline {

StatusOr<model::StatsTable> NvtxSum(const nsys::Database& db);

// nvtx_gpu_proj_sum: per range name and style, the GPU time of the work launched inside each
// instance (see analysis/nvtx_projection.h for the contract).
StatusOr<model::StatsTable> NvtxGpuProjSum(const nsys::Database& db);

}  // namespace cpprof::pipeline
