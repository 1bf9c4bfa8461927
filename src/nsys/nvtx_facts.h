// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// What a capture actually recorded, per NVTX domain and in the sample/backtrace tables: the facts
// analysis/capture_diagnostics checks the capture options against.
#pragma once

#include <map>
#include <string>
#include <unordered_set>

#include "base/status.h"
#include "model/capture.h"
#include "nsys/nvtx_reader.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

// The per-range part of the facts, filled by whoever already streams the ranges (the report's
// module attribution does), so that NVTX_EVENTS is not read once more for them.
struct NvtxRangeTally {
  struct Counts {
    int64_t ranges = 0, open = 0, cross_thread = 0;
  };
  std::map<std::string, Counts> ranges;   // per domain name
  std::unordered_set<std::string> named;  // "domain:text" outside the default domain
  int64_t autograd_op_ranges = 0, autograd_shape_ranges = 0;
  // (domainId, globalTid) -> the other events (marks): NvtxScan::marks of the same pass.
  std::map<std::pair<int64_t, int64_t>, int64_t> marks;
  int64_t damaged_rows = 0;  // NvtxScan::damaged_rows of the same pass
  // Events other than domain creates whose payload (binaryData or jsonText) the same pass read
  // (NvtxScanCallbacks::payload; rows with damaged times left out, as everywhere); -1: that pass
  // did not read payloads, so ReadNvtxFacts looks.
  int64_t payload_events = -1;
  // `r` of the ranges ScanNvtx streams, with its `names`.
  void Add(const std::vector<std::string>& names, const NvtxRangeRow& r);
};

// Reads NVTX_EVENTS (ranges named as nsys names them, see nvtx_reader.h), the cudaGraphLaunch
// calls of CUPTI_ACTIVITY_KIND_RUNTIME, and the row counts of the sample and backtrace tables.
// Absent tables give zero counts (-1 for the row counts), never an error.
// With `domains` and `tally` (from a ScanNvtx pass made before, marks included), NVTX_EVENTS is
// not read again; without them, one ScanNvtx pass reads it.
StatusOr<model::NvtxFacts> ReadNvtxFacts(const Database& db, const NvtxDomains* domains = nullptr,
                                         const NvtxRangeTally* tally = nullptr);

}  // namespace cpprof::nsys
