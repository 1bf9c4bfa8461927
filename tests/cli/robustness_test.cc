// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Issue 19, row by row: a hostile or damaged export never crashes, hangs or lies, and cpprof
// never touches what the user did not ask it to change. Each fixture is a small real export
// (tests/data/real/cpwork-trace) damaged by the SQL the issue gives, made here.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/utf8.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kError = 1;
constexpr int kUsage = 2;
constexpr int kBadInput = 4;

// A copy of a real export (cpwork-trace unless said) with `sql` applied.
std::string Damaged(const std::string& name, const std::string& sql, const std::string& from = "cpwork-trace") {
  std::string p = TempDir() + "/" + name + ".sqlite";
  fs::copy_file(RealExport(from), p, fs::copy_options::overwrite_existing);
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
  char* msg = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg), SQLITE_OK) << (msg ? msg : "");
  sqlite3_free(msg);
  sqlite3_close(db);
  return p;
}

std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string FreshDir(const std::string& name) {
  std::string d = TempDir() + "/" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Row 1: a name that is not UTF-8 crashed every JSON output (nlohmann's type_error 316, exit 134).
class InvalidUtf8 : public ::testing::Test {
 protected:
  static std::string Export() {
    static std::string p = Damaged("utf8", R"(UPDATE StringIds SET value = CAST(X'62FF' AS TEXT) WHERE id =
        (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1))");
    return p;
  }
  static void ExpectCleanOutput(const CliResult& r, const std::string& what, bool lists_kernels = true) {
    EXPECT_EQ(r.rc, 0) << what << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << what;
    EXPECT_TRUE(IsValidUtf8(r.out)) << what;
    if (lists_kernels) {
      EXPECT_NE(r.out.find("b\xEF\xBF\xBD"), std::string::npos) << what << ": the bad byte shows as U+FFFD";
    }
    EXPECT_NE(r.err.find("cpprof: note: some names in the export are not valid UTF-8"), std::string::npos) << what;
  }
};

TEST_F(InvalidUtf8, EveryReportFormat) {
  for (std::string f : {"text", "md", "json", "csv", "html"}) {
    ExpectCleanOutput(RunBinary({"report", Export(), "--format", f, "--top", "0"}), "report " + f,
                      f != "md" && f != "html");  // the readout and the page name no kernel
  }
}

TEST_F(InvalidUtf8, StatsDiffAndExport) {
  for (const char* f : {"json", "csv", "table"}) {
    ExpectCleanOutput(RunBinary({"stats", "-r", "cuda_gpu_kern_sum", "--format", f, Export()}),
                      std::string("stats ") + f);
  }
  CliResult d = RunBinary({"diff", RealExport("cpwork-trace"), Export(), "--format", "json", "--top", "0"});
  EXPECT_TRUE(d.rc == 0 || d.rc == 3) << d.err;
  EXPECT_TRUE(IsValidUtf8(d.out));
  EXPECT_NE(d.out.find("b\xEF\xBF\xBD"), std::string::npos);
  ExpectCleanOutput(RunBinary({"export", Export()}), "export");
}

// Row 2: a 40,000-character NVTX name crashed std::regex (130 k frames of recursion). RE2 has no
// recursion; patterns see a name's first 64 KiB, and module names are cut to 200 bytes.
TEST(HugeNames, LongRangeNameIsMatchedAndShownBounded) {
  std::string p = Damaged("long-name", R"(UPDATE NVTX_EVENTS SET textId = NULL, text = 'Trunk.forward' ||
      replace(hex(zeroblob(20000)), '00', 'ab') WHERE rowid = (SELECT rowid FROM NVTX_EVENTS WHERE eventType = 59
      AND text IS NULL AND textId IS NOT NULL LIMIT 1))");
  for (const char* f : {"text", "json", "csv"}) {
    CliResult r = RunBinary({"report", p, "--format", f});
    ASSERT_EQ(r.rc, 0) << f << r.err;
    EXPECT_EQ(r.out.find(std::string(1000, 'a') + "b"), std::string::npos) << f;
    EXPECT_LT(r.out.size(), 200000u) << f;
  }
  EXPECT_EQ(RunBinary({"stats", "-r", "nvtx_sum", p}).rc, 0);
}

// Row 4: pushes without their pops nest thousands deep: report was quadratic in time and its CSV
// in size (2 GB for 20 k pushes). Module paths now stop at 32 levels, said in a note.
TEST(DeepNesting, UnclosedPushesGiveBoundedOutput) {
  std::string p = Damaged("unclosed", R"(WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 4999)
      INSERT INTO NVTX_EVENTS(start, end, eventType, text, globalTid)
      SELECT (SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + i * 1000, NULL, 59, 'Trunk.forward',
             (SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1) FROM n)");
  for (const char* f : {"text", "json", "csv", "md"}) {
    CliResult r = RunBinary({"report", p, "--format", f, "--depth", "64"});
    ASSERT_EQ(r.rc, 0) << f << r.err;
    EXPECT_LT(r.out.size(), 400000u) << f;
    EXPECT_NE(r.err.find("module ranges nest deeper than 32 levels"), std::string::npos) << r.err;
  }
  CliResult d = RunBinary({"diff", RealExport("cpwork-trace"), p, "--format", "json"});
  EXPECT_TRUE(d.rc == 0 || d.rc == 3) << d.err;
  EXPECT_LT(d.out.size(), 400000u);
}

TEST(DeepNesting, DeeplyNestedClosedRangesFinish) {
  // 50 k ranges, each inside the one before, around the whole capture.
  std::string p = Damaged("nested", R"(WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 49999)
      INSERT INTO NVTX_EVENTS(start, end, eventType, text, globalTid)
      SELECT (SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME) - 50000 + i,
             (SELECT max(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + 50000 - i, 59, 'Pairformer.forward',
             (SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1) FROM n)");
  CliResult r = RunBinary({"report", p, "--format", "csv"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_LT(r.out.size(), 400000u);
  EXPECT_NE(r.err.find("module ranges nest deeper than 32 levels"), std::string::npos) << r.err;
}

// Rows 5 and 6: times past int64's reach, negative spans, text times read as 0, huge memory
// events: the rows are left out of report's numbers with a note naming table, columns and count;
// stats' sums saturate and say so.
TEST(DamagedValues, OutOfRangeAndNonIntegerTimesAreLeftOutAndCounted) {
  std::string p = Damaged("values", R"(
      UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 0, end = 4611686018427400249
        WHERE rowid IN (SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid LIMIT 24);
      UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -9223372036854775808, end = 9223372036854775807
        WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);
      UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'abc'
        WHERE rowid = (SELECT max(rowid) - 1 FROM CUPTI_ACTIVITY_KIND_KERNEL);)");
  CliResult r = RunBinary({"report", p, "--format", "json", "--window", "all"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("GPU ops (tables CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET; columns start, end)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("\"invalid_ops\": 1"), std::string::npos);  // 26 in all, per rank
  EXPECT_EQ(r.out.find("\"busy_ns\": -"), std::string::npos);
  EXPECT_EQ(r.out.find("\"span_ns\": -"), std::string::npos);
  // stats and export leave the same ops out, and say so (stats summed them, export drew them).
  CliResult s = RunBinary({"stats", "-r", "cuda_gpu_kern_sum,cuda_gpu_trace,nvtx_kern_sum", "--format", "csv", p});
  ASSERT_EQ(s.rc, 0) << s.err;
  EXPECT_EQ(s.out.find(",-"), std::string::npos) << "no negative total or share";
  EXPECT_EQ(s.out.find("4611686018427"), std::string::npos) << "no damaged duration";
  EXPECT_EQ(s.err.find("a total passed 2^63 - 1"), std::string::npos) << s.err;
  for (const char* note :
       {"cuda_gpu_kern_sum: 26 kernels with damaged values", "cuda_gpu_trace: 26 GPU ops with damaged",
        "nvtx_kern_sum: 26 kernels with damaged values"}) {
    EXPECT_NE(s.err.find(note), std::string::npos) << note << "\n" << s.err;
  }
  const std::string trace = TempDir() + "/values.json";
  CliResult e = RunBinary({"export", p, "-o", trace, "--force"});
  ASSERT_EQ(e.rc, 0) << e.err;
  EXPECT_NE(e.err.find("26 GPU ops with damaged times"), std::string::npos) << e.err;
  EXPECT_EQ(ReadFile(trace).find("\"dur\":4611686018427"), std::string::npos);
  fs::remove(trace);
  fs::remove(p);
}

// Issue 39 item 4: an NVTX range from INT64_MIN to INT64_MAX was dropped by the NVTX reports
// without a word (export said it); each of them now says how many ranges it left out.
TEST(DamagedValues, NvtxReportsSayWhichRangesTheyLeftOut) {
  std::string p = Damaged("nvtx", R"(
      UPDATE NVTX_EVENTS SET start = -9223372036854775808, end = 9223372036854775807
        WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE eventType = 59 ORDER BY rowid LIMIT 2);)");
  CliResult s = RunBinary({"stats", "-r", "nvtx_sum,nvtx_gpu_proj_sum,nvtx_kern_sum", "--format", "csv", p});
  ASSERT_EQ(s.rc, 0) << s.err;
  EXPECT_EQ(s.out.find("9223372036854"), std::string::npos) << s.out;
  for (const char* note : {"nvtx_sum: 2 NVTX ranges with damaged values",
                           "nvtx_gpu_proj_sum: 2 NVTX ranges with "
                           "damaged values",
                           "nvtx_kern_sum: 2 NVTX ranges with damaged values"}) {
    EXPECT_NE(s.err.find(note), std::string::npos) << note << "\n" << s.err;
  }
  fs::remove(p);
}

// A memcpy of 2^63 - 1 bytes summed past 2^63 (its Avg below its Min): left out of the size
// summary and said.
TEST(DamagedValues, ImpossibleSizesAreLeftOutOfTheSizeSummary) {
  std::string p = Damaged("bytes", R"(UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = 9223372036854775807
        WHERE rowid IN (SELECT rowid FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY rowid LIMIT 2);)");
  CliResult s = RunBinary({"stats", "-r", "cuda_gpu_mem_size_sum", "--format", "csv", p});
  ASSERT_EQ(s.rc, 0) << s.err;
  EXPECT_EQ(s.out.find("9223372036854"), std::string::npos) << s.out;
  EXPECT_NE(s.err.find("cuda_gpu_mem_size_sum: 2 memory ops with damaged values"), std::string::npos) << s.err;
  fs::remove(p);
}

// Found by the fuzzer (tests/fuzz/crashes/crash-8fad48e1...): an NVTX iteration range ending at
// INT64_MIN made the steady window's span overflow in the verdict. NVTX and CUDA API rows with
// damaged times are left out when read and counted in one warning.
TEST(DamagedValues, DamagedNvtxAndApiTimesAreLeftOutAndSaidOnce) {
  // cpwork-train: iteration ranges and module ranges (its CUDA API calls are read to tag launches).
  std::string p = Damaged("nvtx-values", R"(
      CREATE TEMP VIEW named AS SELECT rowid AS r, coalesce(text, (SELECT value FROM StringIds WHERE id = textId)) AS t
        FROM NVTX_EVENTS;
      UPDATE NVTX_EVENTS SET end = -9223372036854775808 WHERE rowid = (SELECT min(r) FROM named WHERE t = 'iteration 1');
      UPDATE NVTX_EVENTS SET start = 'abc' WHERE rowid = (SELECT min(r) FROM named WHERE t = 'iteration 2');
      UPDATE NVTX_EVENTS SET end = start - 1 WHERE rowid = (SELECT max(rowid) FROM NVTX_EVENTS WHERE end IS NOT NULL);
      UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = 4611686018427400249
        WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId IS NOT NULL);)",
                          "cpwork-train");
  CliResult r = RunBinary({"report", p, "--format", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.find("\"span_ns\": -"), std::string::npos);
  EXPECT_EQ(r.out.find("\"idle_ns\": -"), std::string::npos);
  EXPECT_NE(r.out.find("\"damaged-times\""), std::string::npos) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("3 rows of NVTX_EVENTS, 1 rows of CUPTI_ACTIVITY_KIND_RUNTIME with damaged times"),
            std::string::npos);
  CliResult text = RunBinary({"report", p});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE((text.out + text.err).find("with damaged times"), std::string::npos);
  for (const char* report : {"nvtx_sum", "nvtx_gpu_proj_sum"}) {
    CliResult s = RunBinary({"stats", "-r", report, "--format", "csv", p});
    ASSERT_EQ(s.rc, 0) << report << ": " << s.err;
    std::istringstream lines(s.out);
    for (std::string line; std::getline(lines, line);) {
      // The numbers come before the quoted range name (which may hold "(0,-1)").
      EXPECT_EQ(line.substr(0, line.find('"')).find(",-"), std::string::npos) << report << ": " << line;
    }
  }
}

TEST(DamagedValues, HugeMemoryEventsAreLeftOut) {
  std::string p = Damaged("memory", "");
  std::string src = RealExport("cpfold-opts-full-1x2");
  fs::copy_file(src, p, fs::copy_options::overwrite_existing);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE CUDA_GPU_MEMORY_USAGE_EVENTS SET bytes = 9223372036854775807 WHERE rowid = "
                         "(SELECT rowid FROM CUDA_GPU_MEMORY_USAGE_EVENTS ORDER BY bytes DESC LIMIT 1)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  CliResult r = RunBinary({"report", p});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("1 rows of CUDA_GPU_MEMORY_USAGE_EVENTS (columns start, bytes)"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("PiB"), std::string::npos);
}

// A kernel name id is part of an op's key (flags from bit 61, the export's index from bit 40 in a
// run of several): damaged ids (negative, huge) are kept as one id, never read as flags. The
// fuzzer's find: INT64_MIN + 1 read back as a memcpy of kind 1 in the HTML's windows.
TEST(DamagedValues, KernelNameIdsPastTheKeyBitsAreOneName) {
  std::string p = Damaged("name-ids",
                          "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = -9223372036854775807 WHERE rowid IN "
                          "(SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 3); "
                          "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 2305843009213693953 WHERE rowid IN "
                          "(SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 2 OFFSET 3)");
  for (const char* format : {"html", "json", "text"}) {
    CliResult r = RunCli({"report", p, "--format", format});
    EXPECT_EQ(r.rc, 0) << format << ": " << r.err;
  }
  CliResult two = RunCli({"report", RealExport("cpwork-trace"), p, "--format", "html", "--force"});  // ids + 1 << 40
  EXPECT_EQ(two.rc, 0) << two.err;
  // Only names changed: every op is still counted, once, and the GPU is as busy as before.
  auto ops_and_busy = [](const std::string& path) {
    CliResult r = RunCli({"report", path, "--format", "json", "--window", "all"});
    EXPECT_EQ(r.rc, 0) << r.err;
    std::vector<std::pair<int64_t, int64_t>> out;
    const nlohmann::json report = nlohmann::json::parse(r.out);
    for (const auto& rank : report.at("per_rank")) {
      int64_t instances = 0;
      for (const auto& [name, c] : rank.at("classes").items()) instances += c.at("instances").get<int64_t>();
      EXPECT_EQ(instances, rank.at("ops").get<int64_t>());
      out.push_back({instances, rank.at("busy_ns").get<int64_t>()});
    }
    return out;
  };
  EXPECT_EQ(ops_and_busy(p), ops_and_busy(RealExport("cpwork-trace")));
}

// Row 8: errors name the next step: a missing column, a locked database.
TEST(ErrorsSayWhatToDo, MissingColumn) {
  std::string p = Damaged("no-column", "ALTER TABLE NVTX_EVENTS DROP COLUMN textId;");
  CliResult r = RunBinary({"stats", "-r", "nvtx_sum", p});
  EXPECT_EQ(r.rc, 5) << r.err;
  EXPECT_NE(r.err.find("lacks what nsys exports hold (no such column: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Export it again with 'nsys export --type sqlite'"), std::string::npos) << r.err;
}

TEST(ErrorsSayWhatToDo, StatsFallsBackToShortNameAsReportDoes) {
  std::string p = Damaged("no-demangled", "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN demangledName;");
  CliResult s = RunBinary({"stats", "-r", "cuda_gpu_kern_sum", "--format", "csv", p});
  EXPECT_EQ(s.rc, 0) << s.err;
  EXPECT_NE(s.out.find("ncclDevKernel_SendRecv"), std::string::npos) << s.out;
  EXPECT_EQ(RunBinary({"report", p}).rc, 0);
}

TEST(ErrorsSayWhatToDo, LockedExport) {
  std::string p = Damaged("locked", "");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;", nullptr, nullptr, nullptr),
            SQLITE_OK);
  CliResult r = RunBinary({"report", p});
  sqlite3_exec(db, "ROLLBACK;", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_EQ(r.rc, kBadInput) << r.err;
  EXPECT_NE(r.err.find("is locked by another process"), std::string::npos) << r.err;
}

// Row 13, the minor items.
TEST(Minor, NewerSchemaIsWarnedAboutAndNanIsNoPercentage) {
  std::string p =
      Damaged("schema99", "UPDATE META_DATA_EXPORT SET value = '99.0.0' WHERE name = 'EXPORT_SCHEMA_VERSION';");
  CliResult r = RunBinary({"report", p});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("warning: export schema 99.0.0 is newer than the newest cpprof was tested with"),
            std::string::npos)
      << r.err;
  for (const char* flag : {"--max-time-delta", "--max-mem-delta", "--mem-tolerance"}) {
    for (const char* v : {"nan", "inf", "-1", "5x"}) {
      CliResult d = RunBinary({"diff", p, p, flag, v});
      EXPECT_EQ(d.rc, kUsage) << flag << " " << v << d.err;
      EXPECT_NE(d.err.find("must be a finite number >= 0"), std::string::npos) << d.err;
    }
  }
}

// Row 4, nvtx_gpu_proj_sum: 200 k properly nested ranges took over a minute (the projection
// scanned every open range per launch and per range), on a thread that launches kernels. Each
// range holds every launch of its thread; its level is its depth.
TEST(DeepNesting, TwoHundredThousandNestedRangesProject) {
  std::string p = Damaged("nested-proj", R"(WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n
      WHERE i < 199999)
      INSERT INTO NVTX_EVENTS(start, end, eventType, text, globalTid)
      SELECT (SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME) - 200000 + i,
             (SELECT max(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + 200000 - i, 59, 'deep.nest',
             (SELECT r.globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN CUPTI_ACTIVITY_KIND_KERNEL AS k
              ON k.correlationId = r.correlationId LIMIT 1) FROM n)");
  CliResult r = RunBinary({"stats", "-r", "nvtx_gpu_proj_sum", "--format", "csv", p});
  ASSERT_EQ(r.rc, 0) << r.err;
  size_t at = r.out.find("\n:deep.nest,PushPop,");
  ASSERT_NE(at, std::string::npos) << r.out.substr(0, 2000);
  std::string row = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  std::vector<std::string> cells;
  for (size_t b = 0, e; b <= row.size(); b = e + 1) {
    e = std::min(row.find(',', b), row.size());
    cells.push_back(row.substr(b, e - b));
  }
  ASSERT_EQ(cells.size(), 14u) << row;
  EXPECT_EQ(cells[4], "200000") << row;    // Range Instances: every range holds GPU work
  EXPECT_EQ(cells[12], "99999.5") << row;  // Avg Range Lvl: 0, 1, ..., 199999
  // The same GPU ops in every range: the projection of each is the same.
  EXPECT_EQ(cells[5], cells[6]) << row;  // mean and median
  EXPECT_EQ(cells[7], cells[8]) << row;  // min and max
  EXPECT_EQ(cells[9], "0.0") << row;
  fs::remove(p);
}

// Rows 3 and 9: a FIFO hung every command (read before its type was checked); /dev/zero was "empty".
TEST(NotAFile, FifoAndDeviceAreRefusedAtOnce) {
  std::string fifo = TempDir() + "/x.sqlite";
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const char* cmd : {"report", "stats", "export", "diff"}) {
    std::vector<std::string> args{cmd};
    if (std::string(cmd) == "stats") args.insert(args.end(), {"-r", "cuda_gpu_kern_sum"});
    args.push_back(fifo);
    if (std::string(cmd) == "diff") args.push_back(fifo);
    CliResult r = RunBinary(args);
    EXPECT_EQ(r.rc, kBadInput) << cmd << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("'" + fifo + "' is a FIFO, not a file"), std::string::npos) << r.err;
  }
  CliResult r = RunBinary({"report", "/dev/zero"});
  EXPECT_EQ(r.rc, kBadInput) << r.err;
  EXPECT_NE(r.err.find("'/dev/zero' is a character device, not a file"), std::string::npos) << r.err;
  fs::remove(fifo);
}

// Row 10: -o followed a symlink planted at its fixed OUT.part name and overwrote the victim.
TEST(OutputFile, PlantedSymlinkIsNeverFollowed) {
  std::string dir = FreshDir("planted");
  WriteFile(dir + "/victim", "precious\n");
  for (const char* planted : {"/out.json.part", "/.out.json.part", "/out.json.tmp"}) {
    fs::create_symlink(dir + "/victim", dir + planted);
  }
  CliResult r = RunBinary({"report", RealExport("cpwork-trace"), "--format", "json", "-o", dir + "/out.json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(ReadFile(dir + "/victim"), "precious\n");
  EXPECT_TRUE(fs::is_symlink(dir + "/out.json.part"));
  EXPECT_NE(ReadFile(dir + "/out.json").find("\"schema\""), std::string::npos);
  EXPECT_EQ(FilesIn(dir),
            (std::vector<std::string>{".out.json.part", "out.json", "out.json.part", "out.json.tmp", "victim"}));
}

// Row 12: -o onto the input replaced the export with the report (exit 0); and an existing file is
// replaced only with --force.
TEST(OutputFile, NeverTheInputAndNoReplaceWithoutForce) {
  std::string dir = FreshDir("onto-input");
  std::string in = dir + "/a.sqlite";
  fs::copy_file(RealExport("cpwork-trace"), in);
  const auto size = fs::file_size(in);
  fs::create_symlink(in, dir + "/link.sqlite");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", in, "--format", "json", "-o", in, "--force"},
        {"report", in, "-o", dir + "/link.sqlite", "--force"},
        {"report", in, "-o", dir + "/../onto-input/a.sqlite"},
        {"export", in, "-o", in, "--force"}}) {
    CliResult r = RunBinary(args);
    EXPECT_EQ(r.rc, kUsage) << r.err;
    EXPECT_NE(r.err.find("is the input '" + in + "': writing there would destroy it"), std::string::npos) << r.err;
    EXPECT_EQ(fs::file_size(in), size);
  }
  std::string out = dir + "/out.txt";
  WriteFile(out, "older\n");
  for (const char* cmd : {"report", "export"}) {
    CliResult r = RunBinary({cmd, in, "-o", out});
    EXPECT_EQ(r.rc, kUsage) << r.err;
    EXPECT_NE(r.err.find("-o '" + out + "' exists; give --force to replace it"), std::string::npos) << r.err;
    EXPECT_EQ(ReadFile(out), "older\n");
  }
  CliResult r = RunBinary({"report", in, "-o", out, "--force"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(ReadFile(out).find("Verdict:"), std::string::npos);
  EXPECT_EQ(FilesIn(dir), (std::vector<std::string>{"a.sqlite", "link.sqlite", "out.txt"}));
  // A device is written in place, never renamed onto.
  EXPECT_EQ(RunBinary({"report", in, "-o", "/dev/null"}).rc, 0);
}

// Row 7: two stats reports printed the first whole, then failed; export streamed unterminated JSON.
TEST(AllOrNothing, StdoutStaysEmptyOnError) {
  std::string p = Damaged("no-textid", "ALTER TABLE NVTX_EVENTS DROP COLUMN textId;");
  CliResult r = RunBinary({"stats", "-r", "cuda_gpu_kern_sum", "-r", "nvtx_sum", "--format", "csv", p});
  EXPECT_NE(r.rc, 0);
  EXPECT_EQ(r.out, "") << "the first table must not be printed when the second fails";
  r = RunBinary({"export", p});
  EXPECT_NE(r.rc, 0);
  EXPECT_EQ(r.out, "");
  std::string dir = FreshDir("all-or-nothing");
  r = RunBinary({"export", p, "-o", dir + "/t.json"});
  EXPECT_NE(r.rc, 0);
  EXPECT_TRUE(FilesIn(dir).empty());
}

// Stdout that is a regular file with nothing after its position (> FILE, >> FILE) takes the output
// as it comes, the same bytes as through a pipe, and is cut back to where it was on an error; a
// file with bytes after the position (1<> FILE) gets the output held, as a pipe does.
TEST(AllOrNothing, StdoutFileIsWrittenInPlaceAndCutBackOnError) {
  const std::string bad = Damaged("no-textid-file", "ALTER TABLE NVTX_EVENTS DROP COLUMN textId;");
  const std::string good = RealExport("cpwork-trace");
  const std::string dir = FreshDir("stdout-file");
  const std::string err = dir + "/stderr";
  auto sh = [&err](const std::string& cmd) {
    int rc = std::system(("bash -c \"" + cmd + "\" 2>" + err).c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  // Each failure below is the damage's (the missing column named), not another one.
  auto failed_on_the_column = [&err] { return ReadFile(err).find("textId") != std::string::npos; };
  const std::string bin = std::string("'") + CPPROF_BINARY + "'";
  WriteFile(dir + "/appended", "kept\n");
  EXPECT_NE(sh(bin + " export '" + bad + "' >> " + dir + "/appended"), 0);
  EXPECT_TRUE(failed_on_the_column()) << ReadFile(err);
  EXPECT_EQ(ReadFile(dir + "/appended"), "kept\n");
  EXPECT_EQ(sh(bin + " export '" + good + "' >> " + dir + "/appended"), 0);
  EXPECT_EQ(sh(bin + " export '" + good + "' | cat > " + dir + "/piped"), 0);
  const std::string piped = ReadFile(dir + "/piped");
  EXPECT_GT(piped.size(), 1000u);
  EXPECT_EQ(ReadFile(dir + "/appended"), "kept\n" + piped);
  WriteFile(dir + "/read-write", "bytes after the position\n");
  EXPECT_NE(sh(bin + " export '" + bad + "' 1<> " + dir + "/read-write"), 0);
  EXPECT_TRUE(failed_on_the_column()) << ReadFile(err);
  EXPECT_EQ(ReadFile(dir + "/read-write"), "bytes after the position\n");
  EXPECT_NE(sh(bin + " stats -r cuda_gpu_kern_sum -r nvtx_sum '" + bad + "' > " + dir + "/stats"), 0);
  EXPECT_TRUE(failed_on_the_column()) << ReadFile(err);
  EXPECT_EQ(ReadFile(dir + "/stats"), "") << "the first table must not stay when the second fails";
}

// Row 13: a closed pipe exits 1, as docs/exit-codes.md says, not 141 (death by SIGPIPE).
TEST(AllOrNothing, ClosedPipeExitsOne) {
  std::string cmd = std::string("bash -c \"'") + CPPROF_BINARY + "' export '" + RealExport("cpwork-trace") +
                    "' 2>/dev/null | head -c 1 >/dev/null; exit \\${PIPESTATUS[0]}\"";
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(rc), kError);
}

}  // namespace
}  // namespace cpprof::testing
