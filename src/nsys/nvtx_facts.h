// What a capture actually recorded, per NVTX domain and in the sample/backtrace tables: the facts
// analysis/capture_diagnostics checks the capture options against.
#pragma once

#include "base/status.h"
#include "model/capture.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

// Reads NVTX_EVENTS (ranges named as nsys names them, see nvtx_reader.h), the cudaGraphLaunch
// calls of CUPTI_ACTIVITY_KIND_RUNTIME, and the row counts of the sample and backtrace tables.
// Absent tables give zero counts (-1 for the row counts), never an error.
StatusOr<model::NvtxFacts> ReadNvtxFacts(const Database& db);

}  // namespace cpprof::nsys
