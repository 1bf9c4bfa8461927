// The rows of nsys's cuda_gpu_trace report: every kernel, memcpy and memset of an export with the
// columns the report prints, read in one pass over each table and kept as numbers (the names and
// labels once each), so that a million GPU ops are about 100 MB, not their text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

inline constexpr int64_t kNullInt = INT64_MIN;  // a NULL cell
inline constexpr int32_t kNoText = -1;          // a NULL text

struct GpuTraceOp {
  enum Kind : uint8_t { kKernel, kMemcpy, kMemset };
  int64_t start = 0;
  int64_t duration = 0;
  int64_t correlation = kNullInt;
  int64_t context = 0;  // 0 and NULL print empty (nsys: NULLIF(x, 0))
  int64_t green_context = 0;
  int64_t stream = 0;
  // Kernels: grid X/Y/Z, block X/Y/Z, registers per thread, static and dynamic shared memory
  // (bytes); memory operations: bytes in `launch[0]`.
  int64_t launch[9] = {kNullInt, kNullInt, kNullInt, kNullInt, kNullInt, kNullInt, kNullInt, kNullInt, kNullInt};
  int32_t device = kNoText;  // "NVIDIA H200 (0)": nsys's printf('%s (%d)', gpu.name, deviceId)
  int32_t name = kNoText;
  int32_t src_kind = kNoText;  // memory kind labels (a memset's is its src)
  int32_t dst_kind = kNoText;
  Kind kind = kKernel;
};

struct GpuTraceRows {
  std::vector<GpuTraceOp> ops;     // by start; equal starts: kernels, memcpys, memsets, each in table order
  std::vector<std::string> texts;  // what the ops' text fields index
  int64_t damaged = 0;             // ops left out for damaged times (ValidTimesSql), as report leaves them out
};

// The export's GPU ops as cuda_gpu_trace lists them (kernels by demangled name). When nsys would
// skip the report, `skipped` says why (its words) and no rows come back.
StatusOr<GpuTraceRows> ReadGpuTraceRows(const Database& db, std::string* skipped);

}  // namespace cpprof::nsys
