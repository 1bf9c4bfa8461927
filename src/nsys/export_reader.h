// Reading an nsys SQLite export: what it holds (schema probe) and streaming row readers for the
// tables cpprof uses. Readers select only the columns they need and call `fn` per row; they hold
// no rows themselves.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "model/global_id.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

// Timestamps past this (2^62 ns, 146 years) are damage, not time: with every kept time below it,
// no difference or sum of two overflows int64.
inline constexpr int64_t kMaxTimestampNs = int64_t{1} << 62;

// A GPU op's times as the numbers may use them: integers, 0 <= start <= end <= kMaxTimestampNs.
inline bool ValidOpTimes(bool integers, int64_t start, int64_t end) {
  return integers && start >= 0 && start <= end && end <= kMaxTimestampNs;
}

// The times of a host-side row (NVTX, CUDA API calls) as an SQL condition on the columns `start`
// and `end` of `table_alias` ("" or "ne."): integers, -2^61 <= start <= end <= 2^62 (a host event
// may come before the session's time 0; the bounds keep every difference inside int64). Rows that
// fail it are left out when read. NULL `end` passes where `end_may_be_null` (an NVTX range still
// open, an NVTX mark).
std::string ValidTimesSql(bool end_may_be_null, std::string_view table_alias = "");

// The same rule on a row already read (a Statement or PrefetchedRows, whose start and end are
// columns `start_col` and `end_col`), for the big tables' readers: SQLite evaluating the
// condition per row costs as much as the scan itself.
template <typename Row>
bool ValidTimes(const Row& row, int start_col, int end_col, bool end_may_be_null) {
  if (!row.IsInteger(start_col)) return false;
  const int64_t start = row.Int(start_col);
  if (start < -kMaxTimestampNs / 2 || start > kMaxTimestampNs) return false;
  if (row.IsNull(end_col)) return end_may_be_null;
  if (!row.IsInteger(end_col)) return false;
  const int64_t end = row.Int(end_col);
  return end >= start && end <= kMaxTimestampNs;
}

inline constexpr const char* kKernelTable = "CUPTI_ACTIVITY_KIND_KERNEL";
inline constexpr const char* kMemcpyTable = "CUPTI_ACTIVITY_KIND_MEMCPY";
inline constexpr const char* kMemsetTable = "CUPTI_ACTIVITY_KIND_MEMSET";
inline constexpr const char* kRuntimeTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
inline constexpr const char* kNvtxTable = "NVTX_EVENTS";
inline constexpr const char* kMemoryEventsTable = "CUDA_GPU_MEMORY_USAGE_EVENTS";

// An optional table and the nsys option that fills it, for "not captured" notes.
struct OptionalTable {
  const char* table;
  const char* what;
  const char* option;
};
inline constexpr OptionalTable kOptionalTables[] = {
    {kMemcpyTable, "CUDA memcpy", "--trace cuda (no memcpy happened)"},
    {kMemsetTable, "CUDA memset", "--trace cuda (no memset happened)"},
    {kRuntimeTable, "CUDA runtime API calls", "--trace cuda"},
    {kNvtxTable, "NVTX ranges", "--trace nvtx"},
    {kMemoryEventsTable, "GPU memory usage", "--cuda-memory-usage true"},
    {"OSRT_API", "OS runtime calls", "--trace osrt"},
    {"COMPOSITE_EVENTS", "CPU samples", "--sample process-tree (needs perf_event_paranoid <= 2)"},
    {"CUDA_CALLCHAINS", "CUDA backtraces", "--cudabacktrace all"},
};

struct ExportSchema {
  std::string schema_version;        // META_DATA_EXPORT: EXPORT_SCHEMA_VERSION
  std::string nsys_version;          // the nsys that made the report, if recorded
  std::vector<std::string> present;  // optional tables present ("what" of kOptionalTables)
  std::vector<std::string> absent;   // "what (captured with OPTION)"
  std::string kernel_name_column;    // demangledName (preferred) or shortName
};

// Checks that `db` is an nsys export holding GPU kernels and says what else it holds.
// Errors: kNotAnExport for an empty database, foreign tables, or no kernel table.
StatusOr<ExportSchema> ProbeExport(const Database& db);

// Names from the StringIds table, looked up on first use and kept.
class StringTable {
 public:
  explicit StringTable(const Database& db);
  // The string for `id`; "" if there is none.
  const std::string& Get(int64_t id);
  const Status& status() const { return status_; }

 private:
  Statement stmt_;
  std::unordered_map<int64_t, std::string> cache_;
  Status status_;
  std::string empty_;
};

// Rows [first, last] of a table by rowid (both inclusive); the whole table when unset.
struct RowidRange {
  int64_t first = INT64_MIN, last = INT64_MAX;
  bool whole() const { return first == INT64_MIN && last == INT64_MAX; }
};

struct KernelRow {
  int64_t start, end;
  bool valid_times;  // ValidOpTimes: else the row is damaged and left out of every number
  int64_t global_pid;
  int32_t device, stream;
  int64_t name_id;      // of the demangled name (shortName where the export has no demangled name)
  int64_t correlation;  // of the CUDA call that launched it (0 when NULL or not exported)
  bool has_correlation;
  // With KernelColumns::launch_config, where the export has them:
  bool has_launch_config;
  int64_t grid[3], block[3];
};

struct KernelColumns {
  RowidRange rows;             // the whole table by default
  bool launch_config = false;  // grid and block sizes
  // Only the kernels whose name starts with this ("nccl"): SQLite skips the others.
  std::string name_prefix;
};

// `column` of `table` when the export has it, else NULL: one rule for optional columns.
inline std::string ColumnOrNull(const Database& db, const char* table, const char* column) {
  return db.HasColumn(table, column) ? std::string(column) : std::string("NULL");
}

// The WHERE clause of ForEachKernel for `cols` ("" for the whole table).
std::string KernelWhere(const ExportSchema& schema, const KernelColumns& cols);

// Streams the kernel table (or a rowid range of it) in table order. A missing correlationId
// column reads as NULL (has_correlation false).
template <typename Fn>
Status ForEachKernel(const Database& db, const ExportSchema& schema, Fn&& fn, KernelColumns cols = {}) {
  std::string dims;
  if (cols.launch_config) {
    for (const char* c : {"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"}) {
      dims += ", " + ColumnOrNull(db, kKernelTable, c);
    }
  }
  CPPROF_ASSIGN_OR_RETURN(
      Statement st, db.Prepare("SELECT start, end, globalPid, deviceId, streamId, " + schema.kernel_name_column + ", " +
                                   ColumnOrNull(db, kKernelTable, "correlationId") + dims + " FROM " + kKernelTable +
                                   KernelWhere(schema, cols),
                               "reading kernels"));
  KernelRow r{};
  while (st.Step()) {
    r.start = st.Int(0);
    r.end = st.Int(1);
    r.valid_times = ValidOpTimes(st.IsInteger(0) && st.IsInteger(1), r.start, r.end);
    r.global_pid = st.Int(2);
    r.device = static_cast<int32_t>(st.Int(3));
    r.stream = static_cast<int32_t>(st.Int(4));
    r.name_id = st.Int(5);
    r.has_correlation = !st.IsNull(6);
    r.correlation = st.Int(6);
    if (cols.launch_config) {
      r.has_launch_config = !st.IsNull(7);
      for (int i = 0; i < 3; ++i) r.grid[i] = st.Int(7 + i), r.block[i] = st.Int(10 + i);
    }
    fn(r);
  }
  return st.status();
}

struct MemOpRow {
  int64_t start, end;
  bool valid_times;  // ValidOpTimes
  int64_t global_pid;
  int32_t device, stream;
  int64_t bytes;
  int32_t copy_kind;  // ENUM_CUDA_MEMCPY_OPER id for memcpy; -1 for memset
  // ENUM_CUDA_MEM_KIND ids: a memcpy's source and destination, a memset's memory (dst_kind -1);
  // -1 when the export has none.
  int32_t src_kind, dst_kind;
  int64_t correlation;  // of the CUDA call that launched it (0 when NULL or not exported)
  bool has_correlation;
};

// Streams memcpys then memsets (whichever tables exist); a missing correlationId reads as NULL.
template <typename Fn>
Status ForEachMemOp(const Database& db, Fn&& fn) {
  for (const char* table : {kMemcpyTable, kMemsetTable}) {
    if (!db.HasTable(table)) continue;
    bool memcpy = table == std::string_view(kMemcpyTable);
    CPPROF_ASSIGN_OR_RETURN(
        Statement st, db.Prepare(std::string("SELECT start, end, globalPid, deviceId, streamId, bytes, ") +
                                     (memcpy ? "copyKind" : "-1") + ", " + ColumnOrNull(db, table, "correlationId") +
                                     ", " + ColumnOrNull(db, table, memcpy ? "srcKind" : "memKind") + ", " +
                                     (memcpy ? ColumnOrNull(db, table, "dstKind") : "NULL") + " FROM " + table,
                                 memcpy ? "reading memcpys" : "reading memsets"));
    MemOpRow r{};
    while (st.Step()) {
      r.start = st.Int(0);
      r.end = st.Int(1);
      r.valid_times = ValidOpTimes(st.IsInteger(0) && st.IsInteger(1), r.start, r.end);
      r.global_pid = st.Int(2);
      r.device = static_cast<int32_t>(st.Int(3));
      r.stream = static_cast<int32_t>(st.Int(4));
      r.bytes = st.Int(5);
      r.copy_kind = static_cast<int32_t>(st.Int(6));
      r.has_correlation = !st.IsNull(7);
      r.correlation = st.Int(7);
      r.src_kind = st.IsNull(8) ? -1 : static_cast<int32_t>(st.Int(8));
      r.dst_kind = st.IsNull(9) ? -1 : static_cast<int32_t>(st.Int(9));
      fn(r);
    }
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  return OkStatus();
}

// An upper bound on the rows of `table`: its largest rowid (nsys numbers rows from 1 and never
// deletes any), read from the end of its b-tree; 0 when the table is absent or empty. A largest
// rowid past kPlausibleRowid or below 1 (a damaged or edited export) is not believed: the rows
// are counted instead (a scan), so that nothing is sized by a rowid.
inline constexpr int64_t kPlausibleRowid = int64_t{1} << 31;
StatusOr<int64_t> RowsUpperBound(const Database& db, const char* table);

// `table` split into up to `parts` rowid ranges of equal width, each of at least
// `min_rows_per_part` rowids (fewer parts for a small table), covering every row in order: for
// readers that read the parts on their own connections at once. One part (the whole table) when
// the table is absent, empty or its rowids span more than int64 (a damaged export).
StatusOr<std::vector<RowidRange>> SplitRowids(const Database& db, const char* table, size_t parts,
                                              int64_t min_rows_per_part);

// Streams (globalPid, correlationId, start, end) of every GPU op (kernels, memcpys, memsets)
// that names the CUDA call that launched it: fn(global_pid, correlation, start, end). Tables
// without a correlationId column are left out.
template <typename Fn>
Status ForEachOpLaunch(const Database& db, Fn&& fn) {
  for (const char* table : {kKernelTable, kMemcpyTable, kMemsetTable}) {
    if (!db.HasTable(table) || !db.HasColumn(table, "correlationId")) continue;
    CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare(std::string("SELECT start, end, globalPid, correlationId FROM ") +
                                                         table + " WHERE correlationId IS NOT NULL",
                                                     "reading GPU ops"));
    while (st.Step()) {
      // An op with damaged times projects nothing (the other readers leave it out too).
      if (!ValidOpTimes(st.IsInteger(0) && st.IsInteger(1), st.Int(0), st.Int(1))) continue;
      fn(st.Int(2), st.Int(3), st.Int(0), st.Int(1));
    }
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  return OkStatus();
}

// CUDA memcpy kinds (ENUM_CUDA_MEMCPY_OPER) that move data between GPUs.
inline constexpr int kMemcpyPeerToPeer = 10;

struct ProcessInfo {
  int64_t global_pid = 0;
  int pid = 0;
  std::string name;
};

// The PROCESSES table keyed by globalPid (empty when the table is absent).
StatusOr<std::unordered_map<int64_t, ProcessInfo>> ReadProcesses(const Database& db);

// pid and tid packed in nsys's globalPid/globalTid: see model/global_id.h.
using model::GlobalPidOf;
using model::PidOf;
using model::TidOf;

}  // namespace cpprof::nsys
