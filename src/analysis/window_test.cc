// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/window.h"

#include <gtest/gtest.h>

namespace cpprof::analysis {
namespace {

TEST(Window, MarkerNames) {
  EXPECT_EQ(IterationMarkerKind(":cpfold:iter1"), MarkerKind::kIteration);
  EXPECT_EQ(IterationMarkerKind(":cpfold:warmup0"), MarkerKind::kWarmup);
  EXPECT_EQ(IterationMarkerKind(":iteration 12"), MarkerKind::kIteration);
  EXPECT_EQ(IterationMarkerKind("PyTorch:ProfilerStep#3"), MarkerKind::kIteration);
  EXPECT_EQ(IterationMarkerKind(":Warm-Up_2"), MarkerKind::kWarmup);
  EXPECT_EQ(IterationMarkerKind(":step_7"), MarkerKind::kIteration);
  EXPECT_EQ(IterationMarkerKind(":iter"), MarkerKind::kNone);
  EXPECT_EQ(IterationMarkerKind(":12"), MarkerKind::kNone);
  EXPECT_EQ(IterationMarkerKind(":cpfold:TriMul.forward"), MarkerKind::kNone);
  EXPECT_EQ(IterationMarkerKind(":hyperstep3"), MarkerKind::kNone);
  EXPECT_EQ(IterationMarkerKind(":epoch 1"), MarkerKind::kNone);
}

std::vector<IterationMark> Marks() {
  // Two processes, one warm-up and three iterations each; rank 1 a little later. A "step" range
  // nested inside an iteration is not one.
  std::vector<IterationMark> m;
  for (int64_t pid : {1, 2}) {
    int64_t d = pid == 2 ? 5 : 0;
    m.push_back({":w:warmup0", pid, 100 + d, 200 + d, true});
    m.push_back({":w:iter1", pid, 300 + d, 400 + d, false});
    m.push_back({":w:step3", pid, 310 + d, 320 + d, false});
    m.push_back({":w:iter2", pid, 500 + d, 620 + d, false});
    m.push_back({":w:iter3", pid, 700 + d, 790 + d, false});
  }
  return m;
}

TEST(Window, SteadyLeavesWarmupOutAndSpansTheRest) {
  auto w = ChooseWindow(Marks(), "iteration ranges such as ':w:warmup0'", "steady");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->kind, "steady");
  EXPECT_FALSE(w->whole_capture);
  EXPECT_EQ(w->start_ns, 300);
  EXPECT_EQ(w->end_ns, 795);
  ASSERT_EQ(w->iterations.size(), 4u);  // the nested step is not an iteration
  EXPECT_TRUE(w->iterations[0].warmup);
  EXPECT_FALSE(w->iterations[0].in_window);
  EXPECT_EQ(w->iter_median_ns, 105);  // 105, 125, 95
  EXPECT_EQ(w->iter_min_ns, 95);
  EXPECT_EQ(w->iter_max_ns, 125);
  EXPECT_NE(w->description.find("steady state, 3 of 4 iterations"), std::string::npos) << w->description;
}

TEST(Window, FirstIterationIsWarmupWhenNoneIsNamedSo) {
  std::vector<IterationMark> m{
      {":iteration 0", 1, 0, 50, false}, {":iteration 1", 1, 60, 80, false}, {":iteration 2", 1, 90, 100, false}};
  auto w = ChooseWindow(m, "x", "steady");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->start_ns, 60);
  EXPECT_EQ(w->end_ns, 100);
  EXPECT_NE(w->description.find("the first left out as warm-up"), std::string::npos) << w->description;
}

TEST(Window, OtherSpecs) {
  auto all = ChooseWindow(Marks(), "x", "all");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->whole_capture);
  auto it = ChooseWindow(Marks(), "x", "iter:2");
  ASSERT_TRUE(it.ok());
  EXPECT_EQ(it->start_ns, 500);
  EXPECT_EQ(it->end_ns, 625);
  auto t = ChooseWindow(Marks(), "x", "0.0000003:500ms");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->start_ns, 300);
  EXPECT_EQ(t->end_ns, 500'000'000);
  EXPECT_EQ(ChooseWindow(Marks(), "x", "iter:9").status().code(), ExitCode::kUsage);
  EXPECT_EQ(ChooseWindow(Marks(), "x", "iter:x").status().code(), ExitCode::kUsage);
  EXPECT_EQ(ChooseWindow(Marks(), "x", "5:4").status().code(), ExitCode::kUsage);
  EXPECT_EQ(ChooseWindow(Marks(), "x", "nonsense").status().code(), ExitCode::kUsage);
  auto none = ChooseWindow({}, "", "steady");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->whole_capture);
  EXPECT_NE(none->description.find("no iteration ranges were found"), std::string::npos);
}

}  // namespace
}  // namespace cpprof::analysis
