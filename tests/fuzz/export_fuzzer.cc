// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// libFuzzer target (issue 19, Deliver 6): damaged nsys exports through cpprof's commands, in
// process, under ASan + UBSan. Each input is a program of damage applied to a copy of a real
// export (tests/data/real, decompressed by bench/fuzz.sh): values swapped for extremes, text, BLOBs,
// NULLs or invalid UTF-8, rows deleted or copied, columns and tables dropped, NVTX pushes left
// open, bytes of the file overwritten. Then report (a format), stats (a report) and export run on
// it. A crash or sanitizer report fails by itself; an "internal error" (an exception that reached
// the CLI's handler) or output that is not valid UTF-8 aborts, so the fuzzer keeps the input.
//
// Built by -DCPPROF_FUZZ=ON with clang (bench/fuzz.sh); the seed export is $CPPROF_FUZZ_SEED.
#include <fuzzer/FuzzedDataProvider.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "base/utf8.h"
#include "cli/cli.h"

namespace {

std::string g_seed;  // the seed export's bytes
std::string g_path;  // the scratch copy each input damages

const char* const kTables[] = {
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "NVTX_EVENTS",
    "StringIds",
    "TARGET_INFO_GPU",
    "CUDA_GPU_MEMORY_USAGE_EVENTS",
    "META_DATA_EXPORT",
    "ThreadNames",
    "PROCESSES",
    "TARGET_INFO_SESSION_START_TIME",
};

const int64_t kExtremes[] = {0,
                             -1,
                             1,
                             INT64_MIN,
                             INT64_MAX,
                             INT64_MIN + 1,
                             INT64_MAX - 1,
                             int64_t{1} << 62,
                             -(int64_t{1} << 62),
                             int64_t{1} << 32,
                             4611686018427400249};

std::vector<std::string> Columns(sqlite3* db, const std::string& table) {
  std::vector<std::string> cols;
  sqlite3_stmt* st = nullptr;
  std::string sql = "PRAGMA table_info(\"" + table + "\")";
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return cols;
  while (sqlite3_step(st) == SQLITE_ROW) cols.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  sqlite3_finalize(st);
  return cols;
}

// Binds a damaging value to parameter 1.
void BindValue(sqlite3_stmt* st, FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0:
      sqlite3_bind_int64(st, 1, in.PickValueInArray(kExtremes));
      break;
    case 1:
      sqlite3_bind_int64(st, 1, in.ConsumeIntegral<int64_t>());
      break;
    case 2: {  // text, possibly not UTF-8
      std::string s = in.ConsumeRandomLengthString(64);
      sqlite3_bind_text(st, 1, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
      break;
    }
    case 3: {
      std::string s = in.ConsumeRandomLengthString(64);
      sqlite3_bind_blob(st, 1, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
      break;
    }
    case 4:
      sqlite3_bind_null(st, 1);
      break;
    case 5:
      sqlite3_bind_double(st, 1, in.ConsumeFloatingPoint<double>());
      break;
    case 6: {  // a long name
      std::string s(in.ConsumeIntegralInRange<size_t>(1000, 60000), 'a');
      sqlite3_bind_text(st, 1, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
      break;
    }
    default:
      sqlite3_bind_text(st, 1, "\x62\xff\xc3", 3, SQLITE_TRANSIENT);
      break;
  }
}

void Exec(sqlite3* db, const std::string& sql) { sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr); }

void Damage(FuzzedDataProvider& in) {
  sqlite3* db = nullptr;
  if (sqlite3_open(g_path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return;
  }
  Exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;");
  int ops = in.ConsumeIntegralInRange<int>(1, 8);
  for (int i = 0; i < ops && in.remaining_bytes() > 0; ++i) {
    std::string table = in.PickValueInArray(kTables);
    std::vector<std::string> cols = Columns(db, table);
    if (cols.empty()) continue;
    const std::string& col = cols[in.ConsumeIntegralInRange<size_t>(0, cols.size() - 1)];
    const int64_t row = in.ConsumeIntegralInRange<int64_t>(0, 200);
    const std::string pick = "(SELECT rowid FROM \"" + table + "\" LIMIT 1 OFFSET " + std::to_string(row) + ")";
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
      case 0:
      case 1:
      case 2: {  // one value
        sqlite3_stmt* st = nullptr;
        std::string sql = "UPDATE \"" + table + "\" SET \"" + col + "\" = ?1 WHERE rowid = " + pick;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK) {
          BindValue(st, in);
          sqlite3_step(st);
        }
        sqlite3_finalize(st);
        break;
      }
      case 3:  // a whole column
        Exec(db, "UPDATE \"" + table + "\" SET \"" + col + "\" = " + std::to_string(in.PickValueInArray(kExtremes)));
        break;
      case 4:
        Exec(db, "DELETE FROM \"" + table + "\" WHERE rowid = " + pick);
        break;
      case 5:
        Exec(db, "INSERT INTO \"" + table + "\" SELECT * FROM \"" + table + "\" WHERE rowid = " + pick);
        break;
      case 6:
        Exec(db, in.ConsumeBool() ? "ALTER TABLE \"" + table + "\" DROP COLUMN \"" + col + "\""
                                  : "DROP TABLE \"" + table + "\"");
        break;
      default: {  // NVTX pushes left open, or nested
        int n = in.ConsumeIntegralInRange<int>(1, 3000);
        bool open = in.ConsumeBool();
        Exec(db, "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < " + std::to_string(n) +
                     ") INSERT INTO NVTX_EVENTS(start, end, eventType, text, globalTid) SELECT "
                     "(SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + i, " +
                     (open ? std::string("NULL") : "(SELECT max(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME) - i") +
                     ", 59, 'Trunk.forward', (SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1) FROM n");
        break;
      }
    }
  }
  sqlite3_close(db);
  // Raw damage: a few bytes of the file overwritten (SQLite has no page checksums).
  int flips = in.ConsumeIntegralInRange<int>(0, 3);
  if (flips > 0) {
    std::fstream f(g_path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    auto size = static_cast<size_t>(f.tellg());
    for (int i = 0; i < flips && size > 0; ++i) {
      std::string bytes = in.ConsumeRandomLengthString(16);
      f.seekp(static_cast<std::streamoff>(in.ConsumeIntegralInRange<size_t>(0, size - 1)));
      f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
  }
}

void Run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int rc = cpprof::cli::Run(args, out, err);
  std::string e = err.str();
  if (e.find("internal error") != std::string::npos || e.find("out of memory") != std::string::npos ||
      !cpprof::IsValidUtf8(out.str()) || (rc != 0 && !out.str().empty())) {
    std::cerr << "export_fuzzer: " << args[0] << " rc=" << rc << ": " << e << '\n';
    std::abort();
  }
}

// Multi-export sets (issue 39): the damaged export and a second one (a copy, the same capture, or
// one whose session starts a fuzzed time later, a run apart or not), read as one run by report,
// export, stats --merge and merge of their partials; with --force or without.
void RunSet(FuzzedDataProvider& in) {
  const std::string second = g_path + ".2.sqlite";
  {
    std::ifstream from(g_path, std::ios::binary);
    std::ofstream to(second, std::ios::binary | std::ios::trunc);
    to << from.rdbuf();
  }
  if (in.ConsumeBool()) {
    sqlite3* db = nullptr;
    if (sqlite3_open(second.c_str(), &db) == SQLITE_OK) {
      const int64_t later = in.ConsumeBool() ? in.PickValueInArray(kExtremes) : in.ConsumeIntegral<int32_t>() * 1000LL;
      Exec(db, "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + " + std::to_string(later));
    }
    sqlite3_close(db);
  }
  std::vector<std::string> force;
  if (in.ConsumeBool()) force.push_back("--force");
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), force.begin(), force.end());
    return args;
  };
  Run(with({"report", g_path, second, "--format", in.ConsumeBool() ? "json" : "text"}));
  if (in.ConsumeBool()) Run(with({"export", g_path, second, "-o", g_path + ".trace.json"}));
  if (in.ConsumeBool()) Run(with({"stats", "--merge", "-r", "cuda_gpu_kern_sum", g_path, second}));
  if (in.ConsumeBool()) {
    std::ostringstream out, err;
    const std::string p1 = g_path + ".1.partial.json", p2 = g_path + ".2.partial.json";
    if (cpprof::cli::Run({"report", "--partial", g_path, "-o", p1, "--force"}, out, err) == 0 &&
        cpprof::cli::Run({"report", "--partial", second, "-o", p2, "--force"}, out, err) == 0) {
      Run(with({"merge", p1, p2}));
    }
    std::remove(p1.c_str());
    std::remove(p2.c_str());
  }
  std::remove((g_path + ".trace.json").c_str());
  std::remove(second.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* seed = std::getenv("CPPROF_FUZZ_SEED");
  if (!seed) {
    std::cerr << "export_fuzzer: set CPPROF_FUZZ_SEED to a small nsys SQLite export (bench/fuzz.sh does)\n";
    std::exit(2);
  }
  std::ifstream f(seed, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  g_seed = s.str();
  if (g_seed.empty()) {
    std::cerr << "export_fuzzer: cannot read " << seed << '\n';
    std::exit(2);
  }
  const char* dir = std::getenv("TMPDIR");
  g_path = std::string(dir ? dir : "/tmp") + "/cpprof-fuzz-" + std::to_string(::getpid()) + ".sqlite";
  // One thread unless CPPROF_FUZZ_THREADS says more: from 4, NVTX_EVENTS is read by several
  // readers, in parts of 7 rowids here (the seed has a hundred-odd events), so damage meets the
  // part boundaries.
  const char* threads = std::getenv("CPPROF_FUZZ_THREADS");
  setenv("CPPROF_THREADS", threads ? threads : "1", 1);
  setenv("CPPROF_NVTX_PART_ROWS", "7", 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream f(g_path, std::ios::binary | std::ios::trunc);
    f.write(g_seed.data(), static_cast<std::streamsize>(g_seed.size()));
  }
  FuzzedDataProvider in(data, size);
  Damage(in);
  const char* const formats[] = {"text", "json", "csv", "md", "html"};
  const char* const reports[] = {"cuda_gpu_kern_sum", "nvtx_sum", "nvtx_gpu_proj_sum", "cuda_gpu_mem_size_sum",
                                 "cuda_api_sum"};
  Run({"report", g_path, "--format", in.PickValueInArray(formats), "--window", in.ConsumeBool() ? "all" : "steady"});
  Run({"stats", "-r", in.PickValueInArray(reports), "--format", in.ConsumeBool() ? "json" : "csv", g_path});
  if (in.ConsumeBool()) Run({"export", g_path, "--flows"});
  if (in.ConsumeBool()) RunSet(in);  // last: the inputs kept before it mean what they meant
  std::remove(g_path.c_str());
  return 0;
}
