// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/timeline.h"

#include <gtest/gtest.h>

#include <random>

#include "analysis/rank_summary.h"
#include "analysis/test_ops.h"

namespace cpprof::analysis {
namespace {

using model::OpClass;

using test_ops::Op;
using test_ops::Work;

struct Built {
  std::vector<model::TimelineLane> lanes;
  model::RankTimeline tl;
  model::RankSummary summary;
};

// Node tree: 0 [unattributed]; 1 top-level (row 0); 2 child of 1 (row 1); 3 another top-level (row 2).
Built Build(model::ProcessGpuWork& w, int max_bins, bool modules = false) {
  Built b;
  model::GpuNames names;
  b.summary = SummarizeRank(w, names, 0);
  b.lanes = TimelineLanes({b.summary});
  TimelineInput in;
  in.lanes = &b.lanes;
  in.first_start = b.summary.first_start;
  in.last_end = b.summary.last_end;
  in.max_bins = max_bins;
  if (modules) {
    in.level0_row = {-1, 0, 0, 2};
    in.level1_row = {-1, -1, 1, -1};
  }
  b.tl = BuildRankTimeline(w, in);
  return b;
}

const model::RankLane* Lane(const Built& b, const std::string& name) {
  for (const auto& l : b.tl.lanes) {
    if (b.lanes[l.lane].name == name) return &l;
  }
  return nullptr;
}

// Bins within the span, by start, disjoint, busy within bounds and adding up to the union.
void ExpectSane(const Built& b, int max_bins) {
  for (const auto& l : b.tl.lanes) {
    int64_t busy = 0, last_end = INT64_MIN;
    EXPECT_LE(static_cast<int>(l.bins.size()), max_bins);
    for (const auto& bin : l.bins) {
      EXPECT_GE(bin.start, b.summary.first_start);
      EXPECT_LE(bin.end, b.summary.last_end);
      EXPECT_LT(bin.start, bin.end);
      EXPECT_GE(bin.start, last_end);
      EXPECT_GT(bin.busy_ns, 0);
      EXPECT_LE(bin.busy_ns, bin.end - bin.start);
      last_end = bin.end;
      busy += bin.busy_ns;
    }
    EXPECT_EQ(busy, l.union_ns) << b.lanes[l.lane].name;
  }
}

TEST(Timeline, LanesGroupComputeOneLanePerNcclKindAndMemory) {
  auto w = Work({{0, 10, OpClass::kGemm},
                 {5, 20, OpClass::kElementwise},
                 {10, 35, OpClass::kSendRecv},
                 {30, 40, OpClass::kGemm},
                 {40, 45, OpClass::kMemcpy},
                 {50, 52, OpClass::kMemset}});
  Built b = Build(w, 100);
  ASSERT_EQ(b.lanes.size(), 3u);
  EXPECT_EQ(b.lanes[0].name, "compute");
  EXPECT_EQ(b.lanes[1].name, "SendRecv");
  EXPECT_EQ(b.lanes[2].name, "memcpy/memset");

  const model::RankLane* compute = Lane(b, "compute");
  ASSERT_NE(compute, nullptr);
  EXPECT_FALSE(compute->downsampled);
  ASSERT_EQ(compute->bins.size(), 2u);
  EXPECT_EQ(compute->bins[0].start, 0);
  EXPECT_EQ(compute->bins[0].end, 20);
  EXPECT_EQ(compute->bins[0].busy_ns, 20);
  EXPECT_EQ(compute->bins[0].cls, OpClass::kElementwise) << "15 ns of elementwise beat 10 of GEMM";
  EXPECT_EQ(compute->bins[1].start, 30);
  EXPECT_EQ(compute->bins[1].cls, OpClass::kGemm);
  EXPECT_EQ(compute->ops, 3);
  EXPECT_EQ(compute->union_ns, 30);
  EXPECT_EQ(Lane(b, "SendRecv")->union_ns, b.summary.classes[static_cast<int>(OpClass::kSendRecv)].union_ns);
  EXPECT_EQ(Lane(b, "memcpy/memset")->bins.size(), 2u);
  ExpectSane(b, 100);
}

TEST(Timeline, DownsamplesIntoAtMostMaxBinsAndKeepsTheUnion) {
  std::mt19937 rng(7);
  std::vector<Op> ops;
  int64_t t = 1000;
  for (int i = 0; i < 20000; ++i) {
    int64_t d = 1 + rng() % 50;
    ops.push_back({t, t + d, i % 3 ? OpClass::kGemm : OpClass::kElementwise});
    if (i % 7 == 0) ops.push_back({t, t + 300, OpClass::kAllGather});  // overlapping, long
    t += d + rng() % 20;
  }
  auto w = Work(ops);
  Built b = Build(w, 500);
  const model::RankLane* compute = Lane(b, "compute");
  ASSERT_NE(compute, nullptr);
  EXPECT_TRUE(compute->downsampled);
  EXPECT_GT(compute->intervals, 500);
  EXPECT_LE(compute->bins.size(), 500u);
  EXPECT_EQ(compute->union_ns, b.summary.classes[static_cast<int>(OpClass::kGemm)].union_ns +
                                   b.summary.classes[static_cast<int>(OpClass::kElementwise)].union_ns)
      << "GEMM and elementwise never overlap here";
  EXPECT_EQ(Lane(b, "AllGather")->union_ns, b.summary.classes[static_cast<int>(OpClass::kAllGather)].union_ns);
  ExpectSane(b, 500);
}

TEST(Timeline, ModuleRunsFollowTheModuleOfConsecutiveOps) {
  // Row 1 (child of top-level row 0) twice, then row 2; unattributed work in between does not
  // end a run; the gap before row 2 ends row 0's run.
  auto w = Work({{0, 10, OpClass::kGemm, 2},
                 {10, 12, OpClass::kGemm, 0},
                 {11, 20, OpClass::kGemm, 2},
                 {20, 30, OpClass::kGemm, 1},
                 {100, 110, OpClass::kGemm, 3},
                 {105, 400, OpClass::kSendRecv, 0}});
  Built b = Build(w, 40, true);  // slices of 10 ns: gaps up to 10 ns join runs
  ASSERT_EQ(b.tl.module_runs[0].size(), 2u);
  EXPECT_EQ(b.tl.module_runs[0][0].start, 0);
  EXPECT_EQ(b.tl.module_runs[0][0].end, 30);
  EXPECT_EQ(b.tl.module_runs[0][0].row, 0);
  EXPECT_EQ(b.tl.module_runs[0][1].row, 2);
  ASSERT_EQ(b.tl.module_runs[1].size(), 1u);
  EXPECT_EQ(b.tl.module_runs[1][0].end, 20);
  EXPECT_EQ(b.tl.module_runs[1][0].row, 1);
  EXPECT_FALSE(b.tl.modules_downsampled[0]);
}

TEST(Timeline, ManyModuleRunsAreBinnedAndDoNotOverlap) {
  std::vector<Op> ops;
  for (int i = 0; i < 10000; ++i)
    ops.push_back({i * 10, i * 10 + 8 + (i % 5 == 0 ? 30 : 0), OpClass::kGemm, static_cast<uint16_t>(i % 2 ? 2 : 3)});
  auto w = Work(ops);
  Built b = Build(w, 200, true);
  EXPECT_TRUE(b.tl.modules_downsampled[0]);
  EXPECT_LE(b.tl.module_runs[0].size(), 200u);
  int64_t last = INT64_MIN;
  for (const auto& r : b.tl.module_runs[0]) {
    EXPECT_GE(r.start, last);
    EXPECT_LT(r.start, r.end);
    last = r.end;
  }
  ExpectSane(b, 200);
}

TEST(Timeline, ZeroLengthOpsCountButAddNoBins) {
  auto w = Work({{5, 5, OpClass::kGemm}, {10, 20, OpClass::kGemm}});
  Built b = Build(w, 10);
  const model::RankLane* compute = Lane(b, "compute");
  ASSERT_NE(compute, nullptr);
  EXPECT_EQ(compute->ops, 2);
  EXPECT_EQ(compute->bins.size(), 1u);
  ExpectSane(b, 10);
}

}  // namespace
}  // namespace cpprof::analysis
