// The baseline of bench/run_bench.sh: one bare SQLite scan of exactly the columns that
// `cpprof report` (mode "report") or `cpprof stats --report cuda_gpu_kern_sum` (mode "kern_sum")
// read, opened the same way, touching every value and doing nothing else.
//
//   bare_scan report|kern_sum FILE.sqlite
#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

int64_t Scan(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) return 0;  // table absent
  int n = sqlite3_column_count(st);
  int64_t acc = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    for (int c = 0; c < n; ++c) acc += sqlite3_column_int64(st, c);
  }
  sqlite3_finalize(st);
  return acc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "report") != 0 && std::strcmp(argv[1], "kern_sum") != 0)) {
    std::fprintf(stderr, "usage: bare_scan report|kern_sum FILE.sqlite\n");
    return 2;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(argv[2], &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "bare_scan: cannot open %s\n", argv[2]);
    return 1;
  }
  // The same settings as cpprof's reader (src/nsys/sqlite_db.cc).
  sqlite3_exec(db, "PRAGMA mmap_size=0; PRAGMA cache_size=-2048; PRAGMA query_only=1;", nullptr,
               nullptr, nullptr);
  int64_t acc = 0;
  if (std::strcmp(argv[1], "report") == 0) {
    // GPU ops with the correlation id of their launch; the launches; the NVTX ranges (module
    // attribution); GPU memory events.
    acc += Scan(db, "SELECT start, end, globalPid, deviceId, streamId, demangledName, correlationId "
                    "FROM CUPTI_ACTIVITY_KIND_KERNEL");
    acc += Scan(db, "SELECT start, end, globalPid, deviceId, streamId, bytes, copyKind, correlationId "
                    "FROM CUPTI_ACTIVITY_KIND_MEMCPY");
    acc += Scan(db, "SELECT start, end, globalPid, deviceId, streamId, bytes, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET");
    acc += Scan(db, "SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME");
    acc += Scan(db, "SELECT start, end, eventType, domainId, globalTid, textId, text, endGlobalTid FROM NVTX_EVENTS");
    acc += Scan(db, "SELECT start, globalPid, deviceId, bytes, memKind, memoryOperationType, correlationId "
                    "FROM CUDA_GPU_MEMORY_USAGE_EVENTS");
  } else {
    acc += Scan(db, "SELECT demangledName, end - start FROM CUPTI_ACTIVITY_KIND_KERNEL");
  }
  sqlite3_close(db);
  std::printf("%lld\n", static_cast<long long>(acc));
  return 0;
}
