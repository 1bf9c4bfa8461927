// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// `cpprof stats --merge`: one table per report over several exports, the table nsys prints for
// one export holding all of their rows. Real multi-process captures are split into one export
// per process (as per-rank capture writes them, each with its own session clock); --merge over
// the parts must give, byte for byte, the CSV that nsys's own `nsys stats` printed for the whole
// export.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace cpprof::testing {
namespace {

constexpr const char* kReports[] = {"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
                                    "nvtx_sum",          "nvtx_gpu_proj_sum",     "nvtx_kern_sum"};
constexpr int64_t kMs = 1'000'000;

std::string NsysCsv(const std::string& name, const std::string& report) {
  return ReadFileOrXz(DataPath("real/" + name + "/" + name + "_" + report + ".csv"));
}

// The parts of a real export, one per process, each after the first started later (its times
// smaller) as its own nsys would have: the merge must not depend on the exports' clocks.
std::vector<std::string> Parts(const std::string& name) {
  SplitOptions split;
  split.start_later_ns = {0, 3 * kMs, 5 * kMs, 7 * kMs};
  return SplitPerProcess(RealExport(name), TempDir() + "/stats-merge/" + name, split);
}

CliResult Stats(std::vector<std::string> args, const std::vector<std::string>& exports) {
  args.insert(args.begin(), "stats");
  args.insert(args.end(), exports.begin(), exports.end());
  return RunCli(args);
}

class StatsMergeGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(StatsMergeGolden, PartsMergedAreTheWholeExportAsNsysPrintsIt) {
  const std::string name = GetParam();
  std::vector<std::string> parts = Parts(name);
  ASSERT_GE(parts.size(), 2u);
  for (const char* report : kReports) {
    const std::string expected = NsysCsv(name, report);
    ASSERT_FALSE(expected.empty()) << report;
    CliResult merged = Stats({"--merge", "--report", report, "--format", "csv"}, parts);
    ASSERT_EQ(merged.rc, 0) << merged.err;
    EXPECT_EQ(merged.out, expected) << name << " " << report;
    // Not the first part's table alone: each part has fewer instances than the whole.
    CliResult first = Stats({"--report", report, "--format", "csv"}, {parts[0]});
    ASSERT_EQ(first.rc, 0) << first.err;
    EXPECT_NE(first.out, expected) << name << " " << report;
  }
  // The parts in another order: the same tables (rows are ordered by value, then by name).
  std::vector<std::string> reversed(parts.rbegin(), parts.rend());
  CliResult forward = Stats({"--merge", "--report", "cuda_gpu_kern_sum,nvtx_gpu_proj_sum", "--format", "csv"}, parts);
  CliResult backward =
      Stats({"--merge", "--report", "cuda_gpu_kern_sum,nvtx_gpu_proj_sum", "--format", "csv"}, reversed);
  ASSERT_EQ(forward.rc, 0) << forward.err;
  EXPECT_EQ(forward.out, backward.out);
}

INSTANTIATE_TEST_SUITE_P(RealExports, StatsMergeGolden,
                         ::testing::Values("cpfold-trunk-2x2", "cpfold-ring-1x2", "cpfold-train-1x2"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

// Per-rank captures number their NVTX domains each in its own order: ranges are grouped across
// exports by the domain's name, not its id.
TEST(StatsMerge, RangesGroupByDomainNameNotId) {
  const std::string name = "cpfold-trunk-2x2";
  std::vector<std::string> parts = SplitPerProcess(RealExport(name), TempDir() + "/stats-merge-domains");
  ASSERT_EQ(parts.size(), 4u);
  for (size_t i = 1; i < parts.size(); ++i) {  // ids 1, 2, 3 become 3i+1.. in export i: no two exports alike
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(parts[i].c_str(), &db), SQLITE_OK);
    const std::string sql =
        "UPDATE NVTX_EVENTS SET domainId = domainId + " + std::to_string(3 * i) + " WHERE domainId != 0";
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    ASSERT_GT(sqlite3_changes(db), 0);
    sqlite3_close(db);
  }
  for (const char* report : {"nvtx_sum", "nvtx_gpu_proj_sum"}) {
    CliResult merged = Stats({"--merge", "--report", report, "--format", "csv"}, parts);
    ASSERT_EQ(merged.rc, 0) << merged.err;
    EXPECT_EQ(merged.out, NsysCsv(name, report)) << report;
  }
}

// Without --merge, several exports print each export's tables in turn, headed by its path, as
// `nsys stats` does: unchanged by the merge.
TEST(StatsMerge, DefaultIsEachExportInTurn) {
  std::vector<std::string> parts = Parts("cpfold-ring-1x2");
  ASSERT_EQ(parts.size(), 2u);
  const std::vector<std::string> args = {"--report", "cuda_gpu_kern_sum,nvtx_sum", "--format", "csv"};
  CliResult both = Stats(args, parts);
  ASSERT_EQ(both.rc, 0) << both.err;
  std::string expected;
  for (size_t i = 0; i < parts.size(); ++i) {
    CliResult one = Stats(args, {parts[i]});
    ASSERT_EQ(one.rc, 0) << one.err;
    expected += (i ? "\n==> " : "==> ") + parts[i] + " <==\n" + one.out;
  }
  EXPECT_EQ(both.out, expected);
  CliResult merged = Stats({"--merge", "--report", "cuda_gpu_kern_sum,nvtx_sum", "--format", "csv"}, parts);
  ASSERT_EQ(merged.rc, 0) << merged.err;
  EXPECT_EQ(merged.out.find("==>"), std::string::npos) << merged.out;
}

// --merge of one export is plain `stats`, in every format and with every report.
// The count column (column 2) of each row of a CSV, by its last cell (the name).
std::map<std::string, int64_t> CountsByName(const std::string& csv) {
  std::map<std::string, int64_t> out;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    size_t a = line.find(',') + 1, b = line.find(',', a) + 1, c = line.find(',', b);
    out[line.substr(line.rfind(',') + 1)] += std::stoll(line.substr(b, c - b));
  }
  return out;
}

// cuda_api_sum and cuda_api_gpu_sum over the parts (the split drops the processes without kernels,
// so nsys's whole-export table is not the reference): each name's count is the sum of the parts'.
TEST(StatsMerge, CallSumsAddUpOverTheParts) {
  std::vector<std::string> parts = Parts("cpfold-ring-1x2");
  ASSERT_GE(parts.size(), 2u);
  for (const char* report : {"cuda_api_sum", "cuda_api_gpu_sum"}) {
    CliResult merged = Stats({"--merge", "--report", report, "--format", "csv"}, parts);
    ASSERT_EQ(merged.rc, 0) << merged.err;
    std::map<std::string, int64_t> want;
    for (const auto& part : parts) {
      CliResult one = Stats({"--report", report, "--format", "csv"}, {part});
      ASSERT_EQ(one.rc, 0) << one.err;
      for (const auto& [name, n] : CountsByName(one.out)) want[name] += n;
    }
    EXPECT_GT(want.size(), 10u) << report;
    EXPECT_EQ(CountsByName(merged.out), want) << report;
  }
}

// A trace has no merged table (each export's GPU ops on its own clock): refused, saying what to
// run instead.
TEST(StatsMerge, GpuTraceIsRefused) {
  std::vector<std::string> parts = Parts("cpfold-ring-1x2");
  CliResult r = Stats({"--merge", "--report", "cuda_gpu_trace", "--format", "csv"}, parts);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("cuda_gpu_trace lists one export's GPU ops on its own clock: it has no --merge table. Run it "
                       "without --merge"),
            std::string::npos)
      << r.err;
}

TEST(StatsMerge, OneExportIsPlainStats) {
  const std::string real = RealExport("cpfold-opts-full-1x2");
  for (const char* format : {"csv", "table", "json"}) {
    CliResult plain = Stats({"--format", format}, {real});
    CliResult merged = Stats({"--merge", "--format", format}, {real});
    ASSERT_EQ(plain.rc, 0) << plain.err;
    ASSERT_EQ(merged.rc, 0) << merged.err;
    EXPECT_FALSE(plain.out.empty());
    EXPECT_EQ(merged.out, plain.out) << format;
    EXPECT_EQ(merged.err, plain.err) << format;
  }
}

// -o PREFIX with --merge: one file per report for all the exports; the files equal the console.
TEST(StatsMerge, OutputPrefixWritesOneSetOfFiles) {
  std::vector<std::string> parts = Parts("cpfold-ring-1x2");
  const std::string dir = TempDir() + "/stats-merge-out";
  std::filesystem::create_directories(dir);
  CliResult r = Stats({"--merge", "-r", "cuda_gpu_kern_sum,nvtx_sum", "-o", dir + "/run"}, parts);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(ReadFile(dir + "/run_cuda_gpu_kern_sum.csv"), NsysCsv("cpfold-ring-1x2", "cuda_gpu_kern_sum"));
  EXPECT_EQ(ReadFile(dir + "/run_nvtx_sum.csv"), NsysCsv("cpfold-ring-1x2", "nvtx_sum"));
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 2u);
}

// A report that some exports lack adds no rows from them; one that every export lacks is
// SKIPPED with each export's reason.
TEST(StatsMerge, ExportsWithoutTheDataAddNothing) {
  const std::string dir = TempDir() + "/stats-merge-bare";
  std::vector<std::string> parts = SplitPerProcess(RealExport("cpfold-ring-1x2"), dir);
  ASSERT_EQ(parts.size(), 2u);
  // The second process's export without its kernels (as a rank whose capture held none).
  const std::string bare = dir + "/bare.sqlite";
  std::filesystem::copy_file(parts[1], bare);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(bare.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);

  CliResult first = Stats({"-r", "cuda_gpu_kern_sum", "-f", "csv"}, {parts[0]});
  CliResult merged = Stats({"--merge", "-r", "cuda_gpu_kern_sum", "-f", "csv"}, {parts[0], bare});
  ASSERT_EQ(merged.rc, 0) << merged.err;
  EXPECT_EQ(merged.out, first.out);
  EXPECT_EQ(merged.err, "");

  // Both exports without kernels (two captures: one given twice is refused as not one run).
  const std::string bare0 = dir + "/bare0.sqlite";
  std::filesystem::copy_file(parts[0], bare0);
  ASSERT_EQ(sqlite3_open(bare0.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  CliResult none = Stats({"--merge", "-r", "cuda_gpu_kern_sum", "-f", "csv"}, {bare0, bare});
  ASSERT_EQ(none.rc, 0) << none.err;
  EXPECT_EQ(none.out, "");
  EXPECT_EQ(none.err, "SKIPPED: " + bare0 + " does not contain CUDA kernel data.\nSKIPPED: " + bare +
                          " does not contain CUDA kernel data.\n");
}

// Usage: --merge names one set of files, so '-o .' (named after one export) is refused.
TEST(StatsMerge, OutputDotIsRefused) {
  std::vector<std::string> parts = Parts("cpfold-ring-1x2");
  CliResult r = Stats({"--merge", "-o", "."}, parts);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--merge writes one set of files for all the exports: give -o PREFIX"), std::string::npos)
      << r.err;
}

// Exports that are not from one run are refused as `report` refuses them (one rule:
// pipeline::CheckSameRun), with the reason, exit 2, nothing printed or written; --force merges them.
TEST(StatsMerge, ExportsOfDifferentRunsAreRefusedUnlessForced) {
  std::vector<std::string> ring = SplitPerProcess(RealExport("cpfold-ring-1x2"), TempDir() + "/stats-runs/ring");
  std::vector<std::string> e2e = SplitPerProcess(RealExport("cpfold-e2e-1x2"), TempDir() + "/stats-runs/e2e");
  const std::string dir = TempDir() + "/stats-runs/out";
  std::filesystem::create_directories(dir);
  CliResult other = RunBinary({"stats", "--merge", "-r", "cuda_gpu_kern_sum", "-o", dir + "/run", ring[0], e2e[1]});
  EXPECT_EQ(other.rc, 2);
  EXPECT_EQ(other.out, "");
  EXPECT_EQ(other.err.rfind("cpprof: error: stats: '" + ring[0] + "' and '" + e2e[1] +
                                "' are not from one run: they profiled different commands (",
                            0),
            0u)
      << other.err;
  EXPECT_NE(other.err.find("Give the exports of one run, or --force\n"), std::string::npos) << other.err;
  EXPECT_EQ(std::count(other.err.begin(), other.err.end(), '\n'), 1) << other.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/run_cuda_gpu_kern_sum.csv"));
  // The same refusal as report's.
  CliResult report = RunBinary({"report", ring[0], e2e[1]});
  EXPECT_EQ(report.rc, 2);
  EXPECT_EQ(report.err.substr(report.err.find(": '")), other.err.substr(other.err.find(": '"))) << report.err;

  // One run's exports, the second started 20 minutes later: refused for the start times.
  SplitOptions late;
  late.start_later_ns = {0, 1'200'000 * kMs};
  std::vector<std::string> apart =
      SplitPerProcess(RealExport("cpfold-ring-1x2"), TempDir() + "/stats-runs/apart", late);
  CliResult later = RunBinary({"stats", "--merge", "-r", "cuda_gpu_kern_sum", apart[0], apart[1]});
  EXPECT_EQ(later.rc, 2);
  EXPECT_EQ(later.out, "");
  EXPECT_EQ(later.err, "cpprof: error: stats: '" + apart[0] + "' and '" + apart[1] +
                           "' are not from one run: their captures started 1200 s apart (more than 600 s). Give the "
                           "exports of one run, or --force\n");

  // --force: merged, the table over both exports' rows.
  CliResult forced =
      RunBinary({"stats", "--merge", "--force", "-r", "cuda_gpu_kern_sum", "-f", "csv", ring[0], e2e[1]});
  ASSERT_EQ(forced.rc, 0) << forced.err;
  EXPECT_NE(forced.out.find("Time (%)"), std::string::npos) << forced.out;
  CliResult one = RunBinary({"stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", ring[0]});
  ASSERT_EQ(one.rc, 0) << one.err;
  EXPECT_GT(forced.out.size(), one.out.size());
  CliResult forced_late = RunBinary({"stats", "--merge", "--force", "-r", "cuda_gpu_kern_sum", apart[0], apart[1]});
  EXPECT_EQ(forced_late.rc, 0) << forced_late.err;
  // Without --merge each export is its own table, as nsys: no refusal.
  CliResult each = RunBinary({"stats", "-r", "cuda_gpu_kern_sum", ring[0], e2e[1]});
  EXPECT_EQ(each.rc, 0) << each.err;
}

}  // namespace
}  // namespace cpprof::testing
