// `cpprof stats --format csv` against the CSVs that nsys's own `nsys stats` printed for the
// committed real exports (tests/data/real/<name>/<name>_<report>.csv, or .csv.xz when big):
// byte for byte.
#include <gtest/gtest.h>

#include <filesystem>

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
         {"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "nvtx_sum", "nvtx_gpu_proj_sum"}) {
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

}  // namespace
}  // namespace cpprof::testing
