// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A model that is not ours (issue 35 item 6): boltz-cp's serial Pairformer (the public
// NVIDIA-Digital-Bio/boltz-cp code, fp32, one H100), captured as a user would with `cpprof profile
// --preset full` (tests/data/real-boltz/README.md), once with the functions-trace JSON and once
// without. From the capture alone the readout finds the sizes and the dtype, and from the Python
// backtraces of the second it builds the module tree the first's NVTX ranges show. The model's
// source is not in this repository: its skeleton (class and def lines at their line numbers,
// tools/testdata/source_skeleton.py) is what --source-root reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "golden/module_rows.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::json;

json Report(const std::string& name, const std::vector<std::string>& extra = {}) {
  return ReportOfRealExport(name, "real-boltz", extra);
}

const std::string& Skeleton() {
  static const std::string root =
      ExtractedData("real-boltz/source-skeleton.tar.xz", "boltz-skeleton") + "/boltz-cp/src";
  return root;
}

TEST(BoltzCp, SizesAndDtypeFromTheCaptureAlone) {
  const json e = Report("boltz-pf-json")["efficiency"];
  ASSERT_TRUE(e["computed"].get<bool>()) << e.dump(2);
  EXPECT_EQ(e["dtype"], "fp32");
  const std::string dims = e["dims"];
  EXPECT_EQ(dims.rfind("N=256,c_z=128,", 0), 0u) << dims;
  EXPECT_NE(dims.find("tri_mul_hidden=128"), std::string::npos) << dims;
  EXPECT_NE(dims.find("grid=1x1"), std::string::npos) << dims;
  const json& origin = e["dims_origin"];
  EXPECT_EQ(origin["N"].get<std::string>().rfind("shapes: ", 0), 0u) << origin.dump(2);
  EXPECT_EQ(origin["c_z"].get<std::string>().rfind("shapes: ", 0), 0u);
  EXPECT_EQ(origin["blocks"], "command line: --blocks 2");
  // FFMA: fp32 on the SIMT path, all of the GEMM time.
  EXPECT_NE(origin["dtype"].get<std::string>().find("fp32 100 % (SIMT GEMM (FFMA)"), std::string::npos);
  for (const json& m : e["modules"]) {
    EXPECT_LE(m["percent_of_peak"].get<double>(), 100) << m.dump();
    EXPECT_EQ(m["impossible"], "") << m.dump();
  }
}

TEST(BoltzCp, BacktraceTreeMatchesTheFunctionsTraceRows) {
  const json reference = Report("boltz-pf-json", {"--source-root", Skeleton()});
  const json built = Report("boltz-pf-bt", {"--source-root", Skeleton()});
  const auto want = ModuleBusyByName(reference), got = ModuleBusyByName(built);
  // The JSON names 5 classes (its discovery could not import the rest: boltz-cp's own
  // find_spec("cuequivariance_torch...") raises without cuequivariance); the backtraces name the rest
  // in both captures.
  for (const char* name : {"TriangleMultiplicationOutgoing.forward", "TriangleMultiplicationIncoming.forward",
                           "Transition.forward", "AttentionPairBias.forward", "TriangleAttention.forward"}) {
    EXPECT_TRUE(want.count(name)) << name;
  }
  int64_t busy = 0;
  for (const json& r : built["per_rank"]) busy += r["busy_ns"].get<int64_t>();
  for (const auto& [name, ns] : want) {
    // The reference's Pairformer rows hold only what its NVTX ranges left to the backtraces.
    if (name.rfind("Pairformer", 0) == 0) continue;
    auto it = got.find(name);
    ASSERT_NE(it, got.end()) << name << " is a row of the reference but not of the backtraces' tree";
    // Within 5 % of the row, or of 0.5 % of the GPU time for a small row (AttentionPairBias: 1.77 ms
    // under its NVTX range, 1.51 ms from backtraces: the layer norm before it goes to the caller).
    const double tolerance = std::max(0.05 * static_cast<double>(ns), 0.005 * static_cast<double>(busy));
    EXPECT_NEAR(static_cast<double>(it->second), static_cast<double>(ns), tolerance) << name;
  }
  // The whole tree from the backtraces alone, every frame matching the source's skeleton (the
  // signatures black wrapped over lines included).
  for (const char* name : {"PairformerModule.forward", "PairformerLayer.forward"}) {
    EXPECT_GT(got.count(name) ? got.at(name) : 0, 0.99 * static_cast<double>(busy)) << name;
  }
  const json& b = built["modules"]["grouping"]["python_backtraces"];
  EXPECT_EQ(b["frames_not_matching_source"], 0);
  EXPECT_EQ(b["source_files_missing"], json::array({"tools/device/boltz_pairformer.py"}));
  for (const json* j : {&reference, &built}) {
    EXPECT_GT((*j)["modules"]["named_module_share_per_rank"][0].get<double>(), 0.999);
  }
}

}  // namespace
}  // namespace cpprof::testing
