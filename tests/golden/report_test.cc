// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// `cpprof report` on hand-written fixtures with answers worked out by hand, and on the real
// exports: invariants, an independent SQL cross-check, and golden JSON (rebaseline with
// CPPROF_REBASELINE=1, then review the diff).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::json;

json ReportJson(const std::string& path, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"report", "--format", "json", path};
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = RunCli(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  return json::parse(r.out);
}

TEST(ReportFixture, OverlappingStreamsByHand) {
  json j = ReportJson(SqlFixture("overlapping_streams"));
  ASSERT_EQ(j["per_rank"].size(), 1u);
  const json& r = j["per_rank"][0];
  EXPECT_EQ(r["span_ns"], 700);
  EXPECT_EQ(r["compute_ns"], 250);
  EXPECT_EQ(r["comm_ns"], 300);
  EXPECT_EQ(r["both_ns"], 30);
  EXPECT_EQ(r["compute_only_ns"], 220);
  EXPECT_EQ(r["comm_only_ns"], 270);
  EXPECT_EQ(r["busy_ns"], 520);
  EXPECT_EQ(r["idle_ns"], 180);
  EXPECT_EQ(r["classes"]["SendRecv"]["sum_ns"], 280);
  EXPECT_EQ(r["classes"]["SendRecv"]["instances"], 2);
  EXPECT_EQ(r["classes"]["AllGather"]["union_ns"], 40);
  EXPECT_EQ(r["classes"]["GEMM"]["sum_ns"], 200);
  EXPECT_EQ(r["classes"]["elementwise"]["kind"], "compute");
  EXPECT_EQ(r["top_kernels"][0]["name"], "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(j["export"]["schema_version"], "3.20.3");
}

TEST(ReportFixture, ZeroKernelsIsAnEmptyReportWithANote) {
  CliResult r = RunCli({"report", SqlFixture("zero_kernels")});
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("0 ranks"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("has a kernel table but no GPU work"), std::string::npos) << r.err;
}

TEST(ReportFixture, RanksByDeviceWithoutNcclPayload) {
  json j = ReportJson(SqlFixture("ranks_by_device"));
  EXPECT_EQ(j["ranks"]["method"], "device order (the export has no NCCL rank payloads)");
  ASSERT_EQ(j["per_rank"].size(), 2u);
  EXPECT_EQ(j["per_rank"][0]["pid"], 300);
  EXPECT_EQ(j["per_rank"][0]["device"], 0);
  EXPECT_EQ(j["per_rank"][1]["pid"], 200);
}

TEST(ReportFixture, RanksFromNcclPayloads) {
  json j = ReportJson(SqlFixture("nccl_payload"));
  EXPECT_EQ(j["ranks"]["method"], "NCCL NVTX payloads (ncclCommInitRank: Rank, No. of ranks)");
  EXPECT_EQ(j["ranks"]["world_size"], 2);
  ASSERT_EQ(j["per_rank"].size(), 2u);
  // Payloads say pid 200 (device 1) is rank 0 and pid 300 (device 0) is rank 1.
  EXPECT_EQ(j["per_rank"][0]["pid"], 200);
  EXPECT_EQ(j["per_rank"][0]["device"], 1);
  EXPECT_EQ(j["per_rank"][1]["pid"], 300);
}

TEST(ReportFixture, NotCapturedIsSaidOnceOnStderr) {
  CliResult r = RunCli({"report", SqlFixture("overlapping_streams")});
  EXPECT_EQ(r.rc, 0);
  size_t first = r.err.find("not captured:");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(r.err.find("not captured:", first + 1), std::string::npos);
  EXPECT_NE(r.err.find("GPU memory usage (captured with --cuda-memory-usage true)"), std::string::npos);
  EXPECT_EQ(r.out.find("not captured"), std::string::npos);  // stdout carries data only
}

// Sums straight from SQL, per process: an oracle independent of cpprof's reader and classes.
std::map<int, int64_t> SqlKernelTimePerPid(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::map<int, int64_t> out;
  const char* sql =
      "SELECT globalPid >> 24 & 16777215, sum(d) FROM ("
      " SELECT globalPid, end - start AS d FROM CUPTI_ACTIVITY_KIND_KERNEL"
      " UNION ALL SELECT globalPid, end - start FROM CUPTI_ACTIVITY_KIND_MEMCPY"
      " UNION ALL SELECT globalPid, end - start FROM CUPTI_ACTIVITY_KIND_MEMSET) GROUP BY 1";
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) out[sqlite3_column_int(st, 0)] = sqlite3_column_int64(st, 1);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

class ReportReal : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportReal, TotalsAddUpAndMatchSql) {
  std::string path = RealExport(GetParam());
  json j = ReportJson(path, {"--top", "0", "--window", "all"});  // SQL sums over the whole export
  auto sql = SqlKernelTimePerPid(path);
  ASSERT_EQ(j["per_rank"].size(), sql.size()) << "every process with GPU work is a rank";
  ASSERT_GE(j["per_rank"].size(), 2u) << "every real export is a torchrun job of 2 or more ranks";
  for (const json& r : j["per_rank"]) {
    int64_t span = r["span_ns"], busy = r["busy_ns"];
    EXPECT_EQ(int64_t(r["compute_only_ns"]) + int64_t(r["comm_only_ns"]) + int64_t(r["both_ns"]), busy);
    EXPECT_EQ(busy + int64_t(r["idle_ns"]), span);
    EXPECT_EQ(int64_t(r["comm_only_ns"]) + int64_t(r["both_ns"]), int64_t(r["comm_ns"]));
    EXPECT_GT(busy, 0);
    EXPECT_LE(busy, span);
    int64_t class_sum = 0, kernel_sum = 0, unions = 0;
    for (const auto& [name, c] : r["classes"].items()) {
      class_sum += int64_t(c["sum_ns"]);
      unions += int64_t(c["union_ns"]);
      EXPECT_LE(int64_t(c["union_ns"]), int64_t(c["sum_ns"])) << name;
    }
    EXPECT_GE(unions, busy);  // class unions may overlap each other, never cover less than busy
    for (const json& k : r["top_kernels"]) kernel_sum += int64_t(k["total_ns"]);
    EXPECT_EQ(class_sum, kernel_sum);
    EXPECT_EQ(class_sum, sql.at(r["pid"])) << "pid " << r["pid"];
    EXPECT_EQ(r["invalid_ops"], 0);
  }
  // Every job communicates: all ranks show NCCL work. Ranks follow devices (NCCL payload values
  // are absent in nsys 2025.3 exports), one process per device.
  for (size_t i = 0; i < j["per_rank"].size(); ++i) {
    EXPECT_GT(int64_t(j["per_rank"][i]["comm_ns"]), 0) << "rank " << i;
    EXPECT_EQ(j["per_rank"][i]["device"], int(i));
  }
}

TEST_P(ReportReal, GoldenJson) {
  std::string name = GetParam();
  json j = ReportJson(RealExport(name));
  std::string golden = DataPath("golden/" + name + ".report.json");
  if (std::getenv("CPPROF_REBASELINE")) {
    std::filesystem::create_directories(DataPath("golden"));
    WriteFile(golden, j.dump(2) + "\n");
    GTEST_SKIP() << "rebaselined " << golden;
  }
  ASSERT_TRUE(std::filesystem::exists(golden)) << "run with CPPROF_REBASELINE=1 to create " << golden;
  EXPECT_EQ(j.dump(2) + "\n", ReadFile(golden)) << "review, then rebaseline with CPPROF_REBASELINE=1";
  // The same readout with NVTX_EVENTS read by four readers in parts of 61 rowids: every part
  // boundary case (a domain created a part before its ranges, a range open across parts) meets one.
  ::setenv("CPPROF_THREADS", "16", 1);
  ::setenv("CPPROF_NVTX_PART_ROWS", "61", 1);
  json parts = ReportJson(RealExport(name));
  ::unsetenv("CPPROF_NVTX_PART_ROWS");
  ::unsetenv("CPPROF_THREADS");
  EXPECT_EQ(parts.dump(2), j.dump(2)) << "the readout depends on where the NVTX parts begin";
}

TEST_P(ReportReal, TextAndCsvRender) {
  std::string path = RealExport(GetParam());
  CliResult text = RunCli({"report", path});
  EXPECT_EQ(text.rc, 0);
  EXPECT_NE(text.out.find("GPU time per rank over "), std::string::npos);
  EXPECT_EQ(text.out.find(path), std::string::npos) << "no host paths unless asked";
  CliResult with_path = RunCli({"report", "--show-paths", path});
  EXPECT_NE(with_path.out.find(path), std::string::npos);
  CliResult csv = RunCli({"report", "--format", "csv", path});
  EXPECT_EQ(csv.rc, 0);
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\n')), "section,rank,item,class,instances,time_ns,wall_ns");
  // Deterministic: the same input gives the same bytes.
  EXPECT_EQ(RunCli({"report", "--format", "csv", path}).out, csv.out);
}

// The steady-state readout still adds up: each rank's window is compute + exposed transfer +
// waiting + idle; each NCCL kind's time is wait + transfer + unmatched; every wait is caused by
// an instance's last arrival; module rows and their host-idle parts add up per rank.
TEST_P(ReportReal, WindowBudgetAndSplitsAddUp) {
  json j = ReportJson(RealExport(GetParam()));
  const json& w = j["window"];
  EXPECT_EQ(w["kind"], w["iterations"].empty() ? "all" : "steady") << GetParam();
  int64_t waited = 0, caused = 0;
  for (size_t r = 0; r < j["per_rank"].size(); ++r) {
    const json& x = j["per_rank"][r];
    if (!w["whole_capture"]) {
      EXPECT_EQ(int64_t(x["span_ns"]), int64_t(w["end_ns"]) - int64_t(w["start_ns"]));
    }
    EXPECT_EQ(int64_t(x["compute_ns"]) + int64_t(x["exposed_transfer_ns"]) + int64_t(x["exposed_wait_ns"]) +
                  int64_t(x["idle_ns"]),
              int64_t(x["span_ns"]));
    EXPECT_GE(int64_t(x["exposed_wait_ns"]), 0);
    EXPECT_EQ(int64_t(x["launch_gap_ns"]) + int64_t(x["host_stall_ns"]), int64_t(x["idle_ns"]));
    int64_t comm_sum = 0, split_sum = 0;
    for (const auto& [name, c] : x["classes"].items()) {
      if (c["kind"] == "comm") comm_sum += int64_t(c["sum_ns"]);
    }
    for (const json& c : j["imbalance"]["collectives"]) {
      const json& p = c["per_rank"][r];
      EXPECT_EQ(int64_t(p["wait_ns"]) + int64_t(p["transfer_ns"]) + int64_t(p["unmatched_ns"]), int64_t(p["time_ns"]));
      split_sum += int64_t(p["time_ns"]);
      waited += int64_t(p["wait_ns"]);
      caused += int64_t(p["caused_wait_ns"]);
    }
    EXPECT_EQ(split_sum, comm_sum);
    int64_t busy = 0, idle = 0;
    for (const json& row : j["modules"]["rows"]) {
      if (int(row["parent"]) >= 0) continue;
      busy += int64_t(row["per_rank"][r]["busy_ns"]);
      idle += int64_t(row["per_rank"][r]["host_idle_ns"]);
    }
    if (!j["modules"]["rows"].empty()) {
      EXPECT_EQ(busy, int64_t(x["busy_ns"]));
      EXPECT_EQ(idle, int64_t(x["idle_ns"])) << "rank " << r;
    }
  }
  EXPECT_EQ(waited, caused);
  EXPECT_FALSE(j["verdict"]["summary"].get<std::string>().empty());
}

// Who waited for whom adds up: each rank's row of waited_for_ns is its waiting over every kind,
// each kind's groups hold all of that kind's waiting, and the rings of a known grid all of it.
TEST_P(ReportReal, WhoWaitedForWhomAddsUp) {
  json j = ReportJson(RealExport(GetParam()));
  const json& im = j["imbalance"];
  const size_t n = j["per_rank"].size();
  ASSERT_EQ(im["waited_for_ns"].size(), n);
  int64_t all = 0;
  for (size_t r = 0; r < n; ++r) {
    int64_t waited = 0, row = 0;
    for (const json& c : im["collectives"]) waited += int64_t(c["per_rank"][r]["wait_ns"]);
    for (size_t l = 0; l < n; ++l) row += int64_t(im["waited_for_ns"][r][l]);
    EXPECT_EQ(row, waited) << "rank " << r;
    EXPECT_EQ(int64_t(im["waited_for_ns"][r][r]), 0) << "no rank waits for itself";
    all += waited;
  }
  int64_t in_groups = 0;
  for (const json& c : im["collectives"]) {
    for (const json& g : c["groups"]) in_groups += int64_t(g["wait_ns"]);
  }
  EXPECT_EQ(in_groups, all);
  if (im["grid"].is_null()) {
    EXPECT_TRUE(im["ring_waits"].empty());
    return;
  }
  EXPECT_EQ(int(im["grid"]["rows"]) * int(im["grid"]["cols"]), int(n));
  int64_t in_rings = 0;
  for (const json& w : im["ring_waits"]) in_rings += int64_t(w["wait_ns"]);
  EXPECT_EQ(in_rings, all);
}

// The 2 x 2 capture: its grid from cpfold's command line, the rank that arrived last named with its
// place, and each ring's waiting said. At N = 256 every rank's host launches about as slowly as
// rank 3's (the replay's launch edges), so bringing rank 3 on time is predicted to gain under 5 %:
// the verdict names no consistent straggler, and says where rank 3 sits.
TEST(ReportGrid, TwoByTwoNamesTheStragglersPlaceAndTheRings) {
  json j = ReportJson(RealExport("cpfold-trunk-2x2"));
  const json& im = j["imbalance"];
  EXPECT_EQ(im["grid"], (json{{"rows", 2}, {"cols", 2}, {"source", "command line: --cp0 2 --cp1 2"}}));
  EXPECT_EQ(im["straggler_rank"], 3);
  EXPECT_NE(j["verdict"]["summary"].get<std::string>().find("No consistent straggler: rank 3 (row 1, col 1)"),
            std::string::npos)
      << j["verdict"]["summary"];
  std::vector<std::string> rings;
  for (const json& w : im["ring_waits"]) rings.push_back(w["ring"]);
  EXPECT_EQ(rings, (std::vector<std::string>{"row 0 ring", "row 1 ring", "column 0 ring", "column 1 ring", "whole grid",
                                             "across rings"}));
}

INSTANTIATE_TEST_SUITE_P(RealExports, ReportReal, ::testing::ValuesIn(RealExportNames()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

// Terminal manners (issue 20): the text readout of a real 4-rank export fits 120 columns when
// written to a file or a pipe (tables shorten names and put free text under its row, prose
// wraps), and --wide keeps every line whole, with the same numbers.
TEST(ReportText, FitsOneHundredTwentyColumnsAndWideKeepsLinesWhole) {
  const std::string db = RealExport("cpfold-trunk-2x2");
  CliResult fit = RunCli({"report", db});
  CliResult wide = RunCli({"report", "--wide", db});
  ASSERT_EQ(fit.rc, 0) << fit.err;
  ASSERT_EQ(wide.rc, 0) << wide.err;
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  };
  size_t longest = 0, wide_longest = 0;
  for (const auto& l : lines(fit.out)) {
    size_t cols = 0;
    for (unsigned char c : l) cols += (c & 0xC0) != 0x80;
    EXPECT_LE(cols, 120u) << l;
    longest = std::max(longest, cols);
  }
  for (const auto& l : lines(wide.out)) wide_longest = std::max(wide_longest, l.size());
  EXPECT_GT(wide_longest, 200u) << "--wide keeps the long lines (notes, the module table's comm by kind)";
  // Same words, only the line breaks and the table layout differ: every number of the verdict is there.
  for (const char* number : {"212.626", "258.127", "1.0%"}) {
    EXPECT_NE(fit.out.find(number), std::string::npos) << number;
    EXPECT_NE(wide.out.find(number), std::string::npos) << number;
  }
}

}  // namespace
}  // namespace cpprof::testing
