// The rows of nsys's summary reports (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
// cuda_gpu_mem_size_sum, cuda_api_sum, osrt_sum), grouped the way nsys's report scripts group them: the SQL of
// `cpprof stats` lives here; pipeline/stats_reports.cc turns the groups into tables.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "nsys/grouped_values.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

// The readers below leave out rows whose times are damaged (not integers, end before start, past
// kMaxTimestampNs: ValidTimesSql), as `cpprof report` leaves them out, and add their count to
// `*damaged` when given.

// Kernel durations (end - start) per demangled name, in table order.
StatusOr<std::vector<Group>> KernelDurationsByName(const Database& db, int64_t* damaged = nullptr);

// Call durations (end - start) per nameId of an API table (CUPTI_ACTIVITY_KIND_RUNTIME, OSRT_API),
// in table order, the groups in nameId order and named through StringIds (two ids may share a
// name: nsys keeps them apart); `where` (SQL, may be empty) filters the rows as nsys's report does
// (osrt_sum: "eventClass == 27").
StatusOr<std::vector<Group>> CallDurationsByNameId(const Database& db, const char* table, const char* where,
                                                   int64_t* damaged = nullptr);

enum class MemOpValue { kDuration, kBytes };

// Memcpy and memset durations or sizes per operation ("[CUDA memcpy Host-to-Device]", "[CUDA
// memset]"), memcpy kinds joined to their labels as nsys joins them (kBytes: an op whose size is
// below 0 or past 2^50 bytes is damaged too). When nsys would skip the
// report, `skipped` says why (its words) and no groups come back.
StatusOr<std::vector<Group>> MemOpValuesByOperation(const Database& db, MemOpValue value, std::string* skipped,
                                                    int64_t* damaged = nullptr);

}  // namespace cpprof::nsys
