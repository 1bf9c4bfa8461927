// `cpprof stats --format csv` against the CSVs that nsys's own `nsys stats` printed for the
// committed real exports (tests/data/real/<name>/<name>_<report>.csv, or .csv.xz when big):
// byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace cpprof::testing {
namespace {

struct Case {
  std::string export_name;
  std::string report;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const auto& name : RealExportNames()) {
    for (const char* report :
         {"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "nvtx_sum", "nvtx_gpu_proj_sum",
          "cuda_api_sum", "osrt_sum", "cuda_api_gpu_sum", "cuda_gpu_trace", "nvtx_kern_sum"}) {
      cases.push_back({name, report});
    }
  }
  return cases;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.export_name << " " << c.report; }

class StatsGolden : public ::testing::TestWithParam<Case> {};

TEST_P(StatsGolden, MatchesNsysCsv) {
  const Case& c = GetParam();
  std::string expected_path = DataPath("real/" + c.export_name + "/" + c.export_name + "_" + c.report + ".csv");
  ASSERT_TRUE(std::filesystem::exists(expected_path) || std::filesystem::exists(expected_path + ".xz"))
      << expected_path;
  std::string expected = ReadFileOrXz(expected_path);
  CliResult r = RunCli({"stats", "--report", c.report, "--format", "csv", RealExport(c.export_name)});
  ASSERT_EQ(r.rc, 0) << r.err;
  // nsys writes an empty file for a report without data (and says SKIPPED on its console).
  if (expected.empty()) {
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("SKIPPED"), std::string::npos);
    return;
  }
  EXPECT_EQ(r.out, expected);
}

INSTANTIATE_TEST_SUITE_P(RealExports, StatsGolden, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           std::string n = p.param.export_name + "_" + p.param.report;
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

// `--timeunit` against nsys's own `nsys stats --timeunit UNIT --format csv` output, made on the
// GPU machine by tools/device/stats_options_golden.sh and committed beside the nsec CSVs as
// tests/data/real/<name>/<name>-<unit>_<report>.csv. Skipped until they are committed.
TEST(StatsTimeUnitGolden, MatchesNsysCsv) {
  int compared = 0;
  for (const auto& name : RealExportNames()) {
    for (const char* unit : {"usec", "msec", "sec"}) {
      for (const char* report :
           {"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "nvtx_sum", "nvtx_gpu_proj_sum"}) {
        std::string expected_path =
            DataPath("real/" + name + "/" + name + "-" + unit + "_" + std::string(report) + ".csv");
        if (!std::filesystem::exists(expected_path) && !std::filesystem::exists(expected_path + ".xz")) continue;
        std::string expected = ReadFileOrXz(expected_path);
        CliResult r = RunCli({"stats", "--report", report, "--format", "csv", "--timeunit", unit, RealExport(name)});
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_EQ(r.out, expected) << expected_path;
        ++compared;
      }
    }
  }
  if (compared == 0) {
    GTEST_SKIP() << "no nsys --timeunit CSVs committed yet (tests/data/real/<name>/<name>-usec_<report>.csv): run "
                    "tools/device/stats_options_golden.sh on the GPU machine";
  }
}

// The NVTX reports make their rows as they print them (one per distinct range text) and format
// them on all cores: the same CSV on one thread and on sixteen, and the same rows in every format.
TEST(StatsLazyTables, SameRowsOnOneThreadAndInEveryFormat) {
  const std::string name = "cpfold-train-1x2";
  for (const char* report : {"nvtx_sum", "nvtx_gpu_proj_sum"}) {
    std::string expected = ReadFileOrXz(DataPath("real/" + name + "/" + name + "_" + std::string(report) + ".csv"));
    size_t csv_rows = static_cast<size_t>(std::count(expected.begin(), expected.end(), '\n')) - 1;
    ASSERT_GT(csv_rows, 1000u) << report;  // enough rows for several blocks of lines per thread

    ::setenv("CPPROF_THREADS", "1", 1);
    CliResult one = RunCli({"stats", "--report", report, "--format", "csv", RealExport(name)});
    ::setenv("CPPROF_THREADS", "16", 1);  // NVTX read in parts by 4 readers, keyed on a thread of its own
    CliResult sixteen = RunCli({"stats", "--report", report, "--format", "csv", RealExport(name)});
    ::setenv("CPPROF_NVTX_PART_ROWS", "997", 1);  // 252 parts
    CliResult small_parts = RunCli({"stats", "--report", report, "--format", "csv", RealExport(name)});
    ::unsetenv("CPPROF_NVTX_PART_ROWS");
    ::unsetenv("CPPROF_THREADS");
    ASSERT_EQ(one.rc, 0) << one.err;
    EXPECT_EQ(one.out, expected) << report;
    ASSERT_EQ(sixteen.rc, 0) << sixteen.err;
    EXPECT_EQ(sixteen.out, expected) << report;
    ASSERT_EQ(small_parts.rc, 0) << small_parts.err;
    EXPECT_EQ(small_parts.out, expected) << report << " in small parts";

    CliResult json = RunCli({"stats", "--report", report, "--format", "json", RealExport(name)});
    ASSERT_EQ(json.rc, 0) << json.err;
    nlohmann::ordered_json rows = nlohmann::ordered_json::parse(json.out);
    ASSERT_TRUE(rows.is_array());
    EXPECT_EQ(rows.size(), csv_rows) << report;
    const std::string total = std::string(report) == "nvtx_sum" ? "Total Time (ns)" : "Total Proj Time (ns)";
    for (const auto& row : rows) ASSERT_TRUE(row.at(total).is_number_integer()) << row.dump();

    CliResult table = RunCli({"stats", "--report", report, "--format", "table", RealExport(name)});
    ASSERT_EQ(table.rc, 0) << table.err;
    EXPECT_EQ(static_cast<size_t>(std::count(table.out.begin(), table.out.end(), '\n')), csv_rows + 2)
        << report;  // the header and its rule, then one line a row
  }
}

}  // namespace
}  // namespace cpprof::testing
