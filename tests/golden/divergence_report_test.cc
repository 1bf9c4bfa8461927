// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The divergence diagnostic through the whole report, on a hand-made export of the toy user
// model's divergent variant (tests/data/sql/divergent_counts.sql), whose iterations carry the
// NVTX names cpprof_workload.iteration gives them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::json;

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

TEST(DivergenceReport, TheToysDivergentVariantIsFlaggedWithTheFix) {
  std::string db = SqlFixture("divergent_counts");
  CliResult r = RunCli({"report", "--format", "json", db});
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  // cpprof_workload's iteration names give the steady window, its warm-up left out.
  EXPECT_EQ(j["window"]["kind"], "steady");
  EXPECT_EQ(j["window"]["start_ns"], 1000000);
  const json* div = nullptr;
  for (const json& d : j["diagnostics"]) {
    if (d["id"] == "divergent-control-flow") div = &d;
  }
  ASSERT_NE(div, nullptr) << j["diagnostics"].dump(1);
  EXPECT_EQ((*div)["severity"], "warning");
  EXPECT_CONTAINS((*div)["detail"].get<std::string>(), "AllReduce: rank 0 2, rank 1 4.");
  EXPECT_EQ((*div)["detail"].get<std::string>().find("SendRecv"), std::string::npos);
  EXPECT_CONTAINS((*div)["fix"].get<std::string>(), "cpprof_workload.broadcast_counts");
  CliResult text = RunCli({"report", "--wide", db});
  EXPECT_CONTAINS(text.out + text.err, "likely divergent control flow");

  // The ring fixture is not: its rank 1 ran one unmatched SendRecv more (2 and 3 in the window),
  // within the one op a window's edge may cut.
  CliResult ring = RunCli({"report", "--format", "json", SqlFixture("ring_straggler")});
  ASSERT_EQ(ring.rc, 0) << ring.err;
  EXPECT_EQ(ring.out.find("divergent-control-flow"), std::string::npos);
}

}  // namespace
}  // namespace cpprof::testing
