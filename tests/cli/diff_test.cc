// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// `cpprof diff` on the built binary: the sanity verdict on real exports (the same workload with
// and without annotations; a different workload), thresholds as exit codes, usage errors.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace cpprof::testing {
namespace {

constexpr int kCheckFailed = 3, kUsage = 2, kBadInput = 4;

TEST(Diff, SanitySameWorkWhenOnlyAnnotationsAndOptionsChanged) {
  // cpwork-trace: --trace cuda,nvtx; cpwork-full: + functions trace, autograd ranges,
  // backtraces, memory usage, osrt. Same workload: the GPU work must be the same.
  CliResult r = RunBinary({"diff", "--sanity", RealExport("cpwork-trace"), RealExport("cpwork-full")});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("sanity: SAME GPU work:", 0), 0u) << r.out;
  // The options differ, and the diff says so with both option strings (one line each).
  EXPECT_NE(r.out.find("\nwarning: the two captures were made with different nsys options"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  A: --trace cuda,nvtx "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  B: --trace cuda,nvtx,osrt "), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4) << r.out;
}

// The same cpfold trunk captured with the fast and the full option set on 2 x H200: the same
// GPU work, though driver-level peak memory and the timings differ.
TEST(Diff, SanityPassesForTheSameWorkUnderDifferentOptionSets) {
  CliResult r = RunBinary({"diff", "--sanity", RealExport("cpfold-opts-fast-1x2"), RealExport("cpfold-opts-full-1x2")});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("sanity: SAME GPU work:", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("over the whole capture"), std::string::npos) << r.out;
  // A real change fails, and the line names the check that failed.
  r = RunBinary({"diff", "--sanity", RealExport("cpfold-ring-1x2"), RealExport("cpfold-ring-1x2-slow")});
  EXPECT_EQ(r.rc, kCheckFailed) << r.out;
  EXPECT_EQ(r.out.rfind("sanity: GPU work DIFFERS: kernel check failed:", 0), 0u) << r.out;
  // Memory alone: rank 1's driver-level peak differs by 1.0% between the two option sets, so a
  // 0.1% tolerance fails the memory check, and only that one.
  r = RunBinary({"diff", "--sanity", "--mem-tolerance", "0.1", RealExport("cpfold-opts-fast-1x2"),
                 RealExport("cpfold-opts-full-1x2")});
  EXPECT_EQ(r.rc, kCheckFailed) << r.out;
  EXPECT_NE(r.out.find("memory check failed: rank 1 peak memory -1.0% (tolerance 0.1%)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("kernel check failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the kernels match"), std::string::npos) << r.out;
}

TEST(Diff, SanityDiffersForAnotherWorkload) {
  CliResult r = RunBinary({"diff", "--sanity", RealExport("cpwork-trace"), RealExport("cpwork-train")});
  EXPECT_EQ(r.rc, kCheckFailed) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("sanity: GPU work DIFFERS:", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("kernel names only in B"), std::string::npos);
  EXPECT_NE(r.out.find("rank 0: "), std::string::npos) << "details follow the line";
}

TEST(Diff, SameExportIsSameWithMemoryCompared) {
  CliResult r = RunBinary({"diff", "--format", "json", RealExport("cpwork-train"), RealExport("cpwork-train")});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["same_work"]);
  EXPECT_TRUE(j["memory_compared"]);
  EXPECT_TRUE(j["regressions"].empty());
  for (const auto& k : j["kernels"]) EXPECT_EQ(k["marker"], "[ = ]");
  for (const auto& m : j["modules"]) EXPECT_EQ(m["a_ns"], m["b_ns"]);
}

TEST(Diff, ThresholdsTurnRegressionsIntoExitCode3) {
  // trace -> train: the training step adds backward compute, far beyond 5%.
  CliResult r = RunBinary({"diff", RealExport("cpwork-trace"), RealExport("cpwork-train"), "--max-time-delta", "5"});
  EXPECT_EQ(r.rc, kCheckFailed) << r.out << r.err;
  EXPECT_NE(r.out.find("REGRESSIONS:"), std::string::npos);
  EXPECT_NE(r.out.find("GPU compute time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("over --max-time-delta 5.0%"), std::string::npos);
  // Waiting is not a regression of the work: rank 1 made late by 2 ms per ring shift more than
  // doubles rank 0's busy time, all of it waiting; compute is the same, so the gate passes.
  r = RunBinary({"diff", RealExport("cpfold-ring-1x2"), RealExport("cpfold-ring-1x2-delay"), "--max-time-delta", "5"});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("A waiting  B waiting"), std::string::npos) << r.out;
  // A generous threshold passes, and the markers are fixed width.
  r = RunBinary({"diff", RealExport("cpwork-trace"), RealExport("cpwork-full"), "--max-time-delta", "100000"});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("[ = ]"), std::string::npos);
  EXPECT_NE(r.out.find("[NEW]"), std::string::npos) << "modules exist only in the annotated run";
  // Memory: peak not captured in cpwork-trace: said on stderr, not a regression.
  r = RunBinary({"diff", RealExport("cpwork-trace"), RealExport("cpwork-full"), "--max-mem-delta", "1"});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.err.find("peak memory was not captured in both"), std::string::npos) << r.err;
}

TEST(Diff, IterationGateCatchesALateRank) {
  // The same compute, a 2.2x longer steady iteration: rank 1 is late before every ring shift.
  CliResult r =
      RunBinary({"diff", RealExport("cpfold-ring-1x2"), RealExport("cpfold-ring-1x2-delay"), "--max-iter-delta", "10"});
  EXPECT_EQ(r.rc, kCheckFailed) << r.out << r.err;
  EXPECT_NE(r.out.find("median steady iteration +121.7% (68.705 -> 152.350 ms), over --max-iter-delta 10.0%: "
                       "rank 1 is still the straggler"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("waiting for peers grew by"), std::string::npos) << r.out;
  // The same run on both sides passes.
  r = RunBinary({"diff", RealExport("cpfold-ring-1x2"), RealExport("cpfold-ring-1x2"), "--max-iter-delta", "10"});
  EXPECT_EQ(r.rc, 0) << r.out;
}

// A row whose time moved by more than 10 % is never "[ = ] same", whatever its count: rank 1 made
// late turns SendRecv's waiting into time (the same 216 kernels) and the modules that hold it.
TEST(Diff, ARowWhoseTimeMovedIsNotSame) {
  CliResult r =
      RunBinary({"diff", "--format", "json", RealExport("cpfold-ring-1x2"), RealExport("cpfold-ring-1x2-delay")});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  size_t checked = 0;
  for (const char* table : {"kernels", "classes", "modules"}) {
    for (const auto& row : j[table]) {
      const double a = row["a_ns"].get<double>(), b = row["b_ns"].get<double>();
      if (row["marker"] == "[NEW]" || row["marker"] == "[DEL]") continue;
      const bool moved = std::abs(b - a) >= 10e3 && std::abs(b - a) > 0.10 * a;
      // A module's count (its GPU ops) does not decide its marker: its time does.
      const bool same_count = std::string(table) == "modules" || row["a_count"] == row["b_count"];
      if (moved && same_count) {
        EXPECT_EQ(row["marker"], b > a ? "[ + ]" : "[ - ]") << table << ": " << row.dump();
        ++checked;
      }
      if (!moved && same_count) {
        EXPECT_EQ(row["marker"], "[ = ]") << table << ": " << row.dump();
      }
    }
  }
  EXPECT_GE(checked, 2u) << "SendRecv and a module at least";
  CliResult text = RunBinary({"diff", RealExport("cpfold-ring-1x2"), RealExport("cpfold-ring-1x2-delay")});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("[ + ] / [ - ] time up"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("comm     SendRecv"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("[ = ]       216     216"), std::string::npos) << text.out;
}

TEST(Diff, UsageAndBadInput) {
  EXPECT_EQ(RunBinary({"diff", RealExport("cpwork-trace")}).rc, kUsage);
  CliResult r = RunBinary({"diff", RealExport("cpwork-trace"), "/nonexistent.sqlite"});
  EXPECT_EQ(r.rc, kBadInput);
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
}  // namespace cpprof::testing
