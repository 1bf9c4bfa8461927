// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Modules from Python backtraces on real exports (issue 35 item 5; tests/data/real-bt/, made on
// an H100 by tools/testdata/make_cpfold_exports.sh's `backtrace` step): the same cpfold trunk
// captured with --python-backtrace=cuda, once with the functions-trace JSON (NVTX module ranges:
// the reference) and once without (no module range at all). From the second's backtraces and the
// model's source as captured (source.tar.xz), the readout must build the same module rows, each
// within 5 % of the reference's GPU time, and say how.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "golden/module_rows.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::json;

json Report(const std::string& name, const std::vector<std::string>& extra = {}) {
  return ReportOfRealExport(name, "real-bt", extra);
}

// The model's source as the capture saw it, extracted once.
const std::string& SourceRoot() {
  static const std::string root = ExtractedData("real-bt/source.tar.xz", "bt-source");
  return root;
}

TEST(PythonBacktraces, ModuleRowsMatchTheFunctionsTraceCapture) {
  const json reference = Report("cpfold-bt-json-1x1");
  const json built = Report("cpfold-bt-1x1", {"--source-root", SourceRoot()});
  const auto want = ModuleBusyByName(reference), got = ModuleBusyByName(built);
  ASSERT_GE(want.size(), 20u);
  for (const auto& [name, ns] : want) {
    auto it = got.find(name);
    ASSERT_NE(it, got.end()) << name << " is a row of the reference but not of the backtraces' tree";
    EXPECT_NEAR(static_cast<double>(it->second), static_cast<double>(ns), 0.05 * static_cast<double>(ns)) << name;
  }
  // Every launch is under a named module in both (the reference's [unattributed] is 1 us).
  EXPECT_GT(built["modules"]["named_module_share_per_rank"][0].get<double>(), 0.999);
  const json& b = built["modules"]["grouping"]["python_backtraces"];
  EXPECT_EQ(b["backtraces"], 1131);
  EXPECT_GT(b["used"].get<int>(), 1100);
  EXPECT_EQ(b["in_nvtx_modules"], 0);
  EXPECT_EQ(b["source_files_read"], 8);
  EXPECT_EQ(b["frames_not_matching_source"], 0);
  EXPECT_TRUE(b["source_files_missing"].empty());
  // Efficiency from the shapes under the backtraces' rows, as under the NVTX ones.
  ASSERT_TRUE(built["efficiency"]["computed"].get<bool>());
  EXPECT_EQ(built["efficiency"]["dims_origin"]["N"], reference["efficiency"]["dims_origin"]["N"]);
}

TEST(PythonBacktraces, NvtxModuleRangesKeepTheirLaunches) {
  // With the JSON, every backtrace is inside a module range, which decides.
  const json j = Report("cpfold-bt-json-1x1", {"--source-root", SourceRoot()});
  const json& b = j["modules"]["grouping"]["python_backtraces"];
  EXPECT_EQ(b["backtraces"], 1131);
  EXPECT_EQ(b["used"], 0);
  EXPECT_EQ(b["in_nvtx_modules"], 1131 - 6);  // 6 launches run at module level (cpfold.run's main)
  for (const json& m : j["modules"]["rows"]) {
    EXPECT_EQ(m["range"].get<std::string>().rfind("Python backtrace:", 0), std::string::npos) << m["range"];
  }
}

TEST(PythonBacktraces, TheTextReadoutSaysWhereRowsCameFrom) {
  CliResult r =
      RunCli({"report", "--no-replay", RealExport("cpfold-bt-1x1", "real-bt"), "--source-root", SourceRoot()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("Coverage (GPU busy time attributed to a named module): rank 0 100.0%."), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Modules from Python backtraces"), std::string::npos);
  EXPECT_NE(r.out.find("named Class.method from 8 source files"), std::string::npos);
  EXPECT_NE(r.out.find("TriangleMultiplicationOutgoing.forward"), std::string::npos);
}

}  // namespace
}  // namespace cpprof::testing
