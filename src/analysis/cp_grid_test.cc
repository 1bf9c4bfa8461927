// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/cp_grid.h"

#include <gtest/gtest.h>

namespace cpprof::analysis {
namespace {

constexpr int64_t kMs = 1'000'000;

model::CollectiveStats::Group G(std::vector<int> ranks, std::vector<int64_t> waited_for) {
  model::CollectiveStats::Group g;
  g.ranks = std::move(ranks);
  g.waited_for_ns = std::move(waited_for);
  for (int64_t w : g.waited_for_ns) g.wait_ns += w;
  g.instances = 1;
  return g;
}

model::Report GridRun(int rows, int cols) {
  model::Report r;
  r.ranks.resize(static_cast<size_t>(rows * cols));
  r.grid = GridFor(rows, cols, "--dims", r.ranks.size());
  return r;
}

// 2 x 2 (cpfold: rank = row x 2 + col; rows {0, 1} and {2, 3}, columns {0, 2} and {1, 3}):
// each group's waiting goes to the ring its ranks share; all four ranks are the whole grid; a
// pair on no common ring (0 and 3) can only be two rings matched as one instance.
TEST(CpGrid, WaitsGoToTheRingTheirInstanceWasOn) {
  model::Report r = GridRun(2, 2);
  model::CollectiveStats send, gather;
  send.groups = {G({0, 1}, {0, 5 * kMs, 0, 0}), G({2, 3}, {0, 0, 0, 1 * kMs}), G({1, 3}, {0, 0, 0, 7 * kMs}),
                 G({0, 3}, {2 * kMs, 0, 0, 0})};
  gather.groups = {G({0, 1, 2, 3}, {0, 0, 4 * kMs, 0})};
  r.imbalance.collectives = {send, gather};
  const auto rings = RingWaits(r);
  ASSERT_EQ(rings.size(), 5u);
  EXPECT_EQ(rings[0].ring, "row 0 ring");
  EXPECT_EQ(rings[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(rings[0].wait_ns, 5 * kMs);
  EXPECT_EQ(rings[0].most_waited_for, 1);
  EXPECT_EQ(rings[1].ring, "row 1 ring");
  EXPECT_EQ(rings[1].most_waited_for, 3);
  EXPECT_EQ(rings[2].ring, "column 1 ring");  // column 0 ring had no waiting: left out
  EXPECT_EQ(rings[2].ranks, (std::vector<int>{1, 3}));
  EXPECT_EQ(rings[2].wait_ns, 7 * kMs);
  EXPECT_EQ(rings[3].ring, "whole grid");
  EXPECT_EQ(rings[3].most_waited_for, 2);
  EXPECT_EQ(rings[4].ring, "across rings");
  EXPECT_EQ(rings[4].wait_ns, 2 * kMs);
  EXPECT_EQ(rings[4].most_waited_for, 0);
  EXPECT_EQ(r.grid.Place(3), " (row 1, col 1)");
}

// A 1 x q grid has one ring: every pair of ranks is on it, and the whole grid is that ring.
TEST(CpGrid, OneDimensionalGridHasOneRing) {
  model::Report r = GridRun(1, 3);
  model::CollectiveStats send;
  send.groups = {G({0, 1}, {0, 2 * kMs, 0}), G({0, 1, 2}, {0, 0, 1 * kMs})};
  r.imbalance.collectives = {send};
  const auto rings = RingWaits(r);
  ASSERT_EQ(rings.size(), 1u);
  EXPECT_EQ(rings[0].ring, "the ring");
  EXPECT_EQ(rings[0].wait_ns, 3 * kMs);
  EXPECT_EQ(rings[0].most_waited_for, 1);
  EXPECT_EQ(r.grid.Place(2), "") << "a 1-D grid's place adds nothing to the rank";
}

// A grid that does not fit the run's ranks is not used; without a grid there are no rings.
TEST(CpGrid, AGridMustFitTheRanks) {
  EXPECT_FALSE(GridFor(2, 2, "--dims", 2).known());
  EXPECT_FALSE(GridFor(0, 2, "--dims", 0).known());
  const model::CpGrid g = GridFor(2, 3, "cpfold's config line in run.log", 6);
  EXPECT_TRUE(g.two_d());
  EXPECT_EQ(g.row(4), 1);
  EXPECT_EQ(g.col(4), 1);
  model::Report r;
  r.ranks.resize(4);
  model::CollectiveStats send;
  send.groups = {G({0, 1}, {0, 2 * kMs, 0, 0})};
  r.imbalance.collectives = {send};
  EXPECT_TRUE(RingWaits(r).empty());
}

}  // namespace
}  // namespace cpprof::analysis
