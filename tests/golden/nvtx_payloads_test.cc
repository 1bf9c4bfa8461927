// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// NVTX extended payloads on real exports (tests/data/real-bt/, made on an H100 by
// tools/testdata/make_cpfold_exports.sh's `backtrace` step): nsys 2025.3.1 exports NCCL's
// communicator ids, ranks and message sizes, and the Python backtraces' frames, only when asked
// (`nsys export --include-json true`). With them the ranks come from NCCL; without them the
// readout says how to get them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::json;

json Report(const std::string& name, const std::string& folder = "real-bt") {
  CliResult r = RunCli({"report", "--format", "json", RealExport(name, folder)});
  EXPECT_EQ(r.rc, 0) << r.err;
  return json::parse(r.out);
}

const json* Diagnostic(const json& j, const std::string& id) {
  for (const json& d : j["diagnostics"]) {
    if (d["id"] == id) return &d;
  }
  return nullptr;
}

TEST(NvtxPayloads, RanksComeFromNcclsJsonPayloads) {
  // The same capture exported twice: by `nsys profile --export sqlite` and by `nsys export
  // --include-json true`.
  json with = Report("nccl-payloads"), without = Report("nccl-payloads-default");
  EXPECT_EQ(with["ranks"]["method"], "NCCL NVTX payloads (ncclCommInitRank: Rank, No. of ranks)");
  EXPECT_EQ(without["ranks"]["method"], "device order (the export has no NCCL rank payloads)");
  EXPECT_EQ(Diagnostic(with, "nvtx-payloads-not-exported"), nullptr);
  const json* d = Diagnostic(without, "nvtx-payloads-not-exported");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ((*d)["detail"],
            "NCCL's communicator ids, ranks and message sizes (15 NCCL ranges) are not in the export: the "
            ".nsys-rep holds them, but nsys exports them to SQLite only when asked.");
  EXPECT_NE((*d)["fix"].get<std::string>().find("nsys export --type sqlite --include-json true"), std::string::npos);
}

TEST(NvtxPayloads, PythonBacktracesWithoutTheirFramesAreSaid) {
  // cpfold-opts-full-1x2 (--python-backtrace=cuda, exported by nsys profile): the marks are
  // there, their frames are not.
  json old = Report("cpfold-opts-full-1x2", "real");
  const json* d = Diagnostic(old, "nvtx-payloads-not-exported");
  ASSERT_NE(d, nullptr);
  EXPECT_NE((*d)["detail"].get<std::string>().find("and the Python backtraces' frames (5443 backtraces)"),
            std::string::npos)
      << (*d)["detail"];
  // Exported with --include-json: the frames are in, nothing to say; CPU sampling was on, so
  // the backtraces were collected at all.
  for (const std::string name : {"cpfold-bt-1x1", "cpfold-bt-json-1x1"}) {
    json j = Report(name);
    EXPECT_EQ(Diagnostic(j, "nvtx-payloads-not-exported"), nullptr) << name;
    EXPECT_EQ(Diagnostic(j, "python-backtraces-inert"), nullptr) << name;
    EXPECT_TRUE(j["capture"]["python_backtraces"].get<bool>()) << name;
  }
}

}  // namespace
}  // namespace cpprof::testing
