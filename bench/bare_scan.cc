// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The baseline of bench/run_bench.sh: one bare SQLite scan of exactly the columns a cpprof
// command reads, opened the same way, touching every value (integers read, text and blobs read
// in full) and doing nothing else. Its time is the floor the command's time is compared against.
//
//   bare_scan MODE FILE.sqlite [FILE2.sqlite]
//
// MODE (what the command reads):
//   report                 GPU ops (kernels with their grid and block sizes, memcpys, memsets) with
//                          their correlation ids and names, the runtime calls' launches, NVTX
//                          events with their payloads, GPU memory usage events (every `cpprof
//                          report` format: text, md, json, csv, html)
//   diff                   `report`'s columns of FILE and of FILE2 (`cpprof diff FILE FILE2`)
//   export                 GPU ops, NVTX events, thread names (`cpprof export`, the Chrome trace),
//                          and what its CP view reads besides: the runtime calls' launches, the
//                          NVTX payloads and the GPU memory usage events
//   export_flows           the same with the runtime calls' ends and names (`cpprof export --flows`)
//   kern_sum               kernel names and durations (`stats --report cuda_gpu_kern_sum`)
//   mem_time_sum           memcpy kinds and memset rows with their durations
//   mem_size_sum           memcpy kinds and memset rows with their sizes
//   nvtx_sum               NVTX events (`stats --report nvtx_sum`)
//   nvtx_gpu_proj_sum      NVTX events, runtime calls (start, end, thread, correlation id), GPU ops
//                          (start, end, process, correlation id)
#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

// A query's alternatives, separated by '|': the first that the export's columns allow is run
// (binaryData and jsonText, say, exist only in exports of newer nsys versions).
int64_t Scan(sqlite3* db, const char* alternatives) {
  sqlite3_stmt* st = nullptr;
  std::string all(alternatives);
  for (size_t from = 0; !st && from <= all.size();) {
    size_t bar = all.find('|', from);
    if (bar == std::string::npos) bar = all.size();
    const std::string sql = all.substr(from, bar - from);
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      sqlite3_finalize(st);
      st = nullptr;
    }
    from = bar + 1;
  }
  if (!st) return 0;  // table or column absent
  int n = sqlite3_column_count(st);
  int64_t acc = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    for (int c = 0; c < n; ++c) {
      const int type = sqlite3_column_type(st, c);
      if (type == SQLITE_TEXT) {
        const unsigned char* t = sqlite3_column_text(st, c);
        acc += sqlite3_column_bytes(st, c) + (t ? t[0] : 0);
      } else if (type == SQLITE_BLOB) {  // a payload, read whole as cpprof reads it
        const auto* b = static_cast<const unsigned char*>(sqlite3_column_blob(st, c));
        const int bytes = sqlite3_column_bytes(st, c);
        acc += bytes + (b && bytes > 0 ? b[0] : 0);
      } else {
        acc += sqlite3_column_int64(st, c);
      }
    }
  }
  sqlite3_finalize(st);
  return acc;
}

// Kernels with their grid and block sizes: report reads them for the overlap tax, export for
// its args.
const char* const kGpuOps[] = {
    "SELECT start, end, globalPid, deviceId, streamId, demangledName, correlationId, gridX, gridY, gridZ, blockX, "
    "blockY, blockZ FROM CUPTI_ACTIVITY_KIND_KERNEL|"
    "SELECT start, end, globalPid, deviceId, streamId, demangledName, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL",
    "SELECT start, end, globalPid, deviceId, streamId, bytes, copyKind, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY",
    "SELECT start, end, globalPid, deviceId, streamId, bytes, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET"};
const char kNvtx[] = "SELECT start, end, eventType, domainId, globalTid, textId, text, endGlobalTid FROM NVTX_EVENTS";
// With each event's payload (NCCL's ranks, Python backtraces), as the report's pass reads them.
const char kNvtxPayloads[] =
    "SELECT start, end, eventType, domainId, globalTid, textId, text, endGlobalTid, coalesce(binaryData, jsonText) "
    "FROM NVTX_EVENTS|"
    "SELECT start, end, eventType, domainId, globalTid, textId, text, endGlobalTid, binaryData FROM NVTX_EVENTS|"
    "SELECT start, end, eventType, domainId, globalTid, textId, text, endGlobalTid, jsonText FROM NVTX_EVENTS|"
    "SELECT start, end, eventType, domainId, globalTid, textId, text, endGlobalTid FROM NVTX_EVENTS";
const char kLaunches[] =
    "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId IS NOT "
    "NULL";
const char kMemoryUsage[] =
    "SELECT start, globalPid, deviceId, bytes, memKind, memoryOperationType, correlationId "
    "FROM CUDA_GPU_MEMORY_USAGE_EVENTS";

std::vector<const char*> Queries(const std::string& mode) {
  if (mode == "report" || mode == "diff") {
    return {kGpuOps[0], kGpuOps[1], kGpuOps[2], kLaunches, kNvtxPayloads, kMemoryUsage};
  }
  // The trace's events and its CP view (the readout's analysis: the runtime calls' launches and
  // the memory usage events too), each table once.
  if (mode == "export") {
    return {kGpuOps[0], kGpuOps[1],  kGpuOps[2], kNvtxPayloads, "SELECT globalTid, nameId FROM ThreadNames",
            kLaunches,  kMemoryUsage};
  }
  if (mode == "export_flows") {
    return {kGpuOps[0],
            kGpuOps[1],
            kGpuOps[2],
            kNvtxPayloads,
            "SELECT globalTid, nameId FROM ThreadNames",
            "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME",
            kMemoryUsage};
  }
  if (mode == "kern_sum") return {"SELECT demangledName, end - start FROM CUPTI_ACTIVITY_KIND_KERNEL"};
  if (mode == "mem_time_sum") {
    return {"SELECT copyKind, end - start FROM CUPTI_ACTIVITY_KIND_MEMCPY",
            "SELECT end - start FROM CUPTI_ACTIVITY_KIND_MEMSET"};
  }
  if (mode == "mem_size_sum") {
    return {"SELECT copyKind, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY", "SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMSET"};
  }
  if (mode == "nvtx_sum") return {kNvtx};
  if (mode == "nvtx_gpu_proj_sum") {
    return {kNvtx, "SELECT start, end, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME",
            "SELECT start, end, globalPid, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL",
            "SELECT start, end, globalPid, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY",
            "SELECT start, end, globalPid, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET"};
  }
  return {};
}

int64_t ScanFile(const char* path, const std::vector<const char*>& queries) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "bare_scan: cannot open %s\n", path);
    std::exit(1);
  }
  // The same settings as cpprof's reader (src/nsys/sqlite_db.cc).
  sqlite3_exec(db, "PRAGMA mmap_size=0; PRAGMA cache_size=-2048; PRAGMA query_only=1;", nullptr, nullptr, nullptr);
  int64_t acc = 0;
  for (const char* q : queries) acc += Scan(db, q);
  sqlite3_close(db);
  return acc;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "usage: bare_scan report|export|export_flows|kern_sum|mem_time_sum|mem_size_sum|nvtx_sum|nvtx_gpu_proj_sum "
      "FILE.sqlite\n"
      "       bare_scan diff FILE.sqlite FILE2.sqlite\n";
  if (argc < 3) {
    std::fputs(usage, stderr);
    return 2;
  }
  const std::string mode = argv[1];
  std::vector<const char*> queries = Queries(mode);
  if (queries.empty() || (mode == "diff") != (argc == 4) || argc > 4) {
    std::fputs(usage, stderr);
    return 2;
  }
  int64_t acc = ScanFile(argv[2], queries);
  if (mode == "diff") acc += ScanFile(argv[3], queries);
  std::printf("%lld\n", static_cast<long long>(acc));
  return 0;
}
