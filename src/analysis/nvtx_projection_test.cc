#include "analysis/nvtx_projection.h"

#include <gtest/gtest.h>

namespace cpprof::analysis {
namespace {

TEST(NvtxParents, TightestContainerOnTheSameThread) {
  std::vector<NvtxRange> r = {
      {0, 100, 1},   // 0: root
      {10, 90, 1},   // 1: in 0
      {20, 30, 1},   // 2: in 1 (tighter than 0)
      {20, 30, 2},   // 3: other thread: no parent
      {5, 95, 1},    // 4: between 0 and 1
      {85, 120, 1},  // 5: crosses 0 and 1 (start/end style): no container
  };
  auto p = NvtxParents(r);
  EXPECT_EQ(p, (std::vector<int64_t>{-1, 4, 1, -1, 0, -1}));
}

TEST(NvtxParents, IdenticalRangesContainEachOther) {
  auto p = NvtxParents({{0, 10, 1}, {0, 10, 1}});
  EXPECT_EQ(p[0], 1);
  EXPECT_EQ(p[1], 0);
}

TEST(ProjectRanges, OpsBelongToEveryEnclosingRangeOfTheLaunchingThread) {
  std::vector<NvtxRange> r = {{0, 100, 1}, {10, 50, 1}, {60, 70, 1}, {0, 100, 2}};
  std::vector<Launch> l = {
      {1, 20, 25, 1000, 1100, 7},  // in 0 and 1
      {1, 21, 24, 1000, 1150, 7},  // the driver call of the same launch: counted once
      {1, 55, 58, 1200, 1300, 8},  // in 0 only
      {1, 95, 105, 1400, 1500, 9}, // crosses the end of 0: in no range
      {3, 20, 25, 1600, 1700, 10}, // another thread without ranges
  };
  auto p = ProjectRanges(r, l);
  ASSERT_TRUE(p[0].projected);
  EXPECT_EQ(p[0].proj_start, 1000);
  EXPECT_EQ(p[0].proj_end, 1300);
  EXPECT_EQ(p[0].launches, 2);
  EXPECT_EQ(p[0].level, 0);
  EXPECT_EQ(p[0].children, 1);  // range 1 is projected; range 2 is not
  ASSERT_TRUE(p[1].projected);
  EXPECT_EQ(p[1].proj_end - p[1].proj_start, 150);
  EXPECT_EQ(p[1].launches, 1);
  EXPECT_EQ(p[1].level, 1);
  EXPECT_FALSE(p[2].projected);
  EXPECT_EQ(p[2].level, 1);
  EXPECT_FALSE(p[3].projected);  // thread 2 launched nothing
}

TEST(ProjectRanges, CyclesHaveNoLevel) {
  auto p = ProjectRanges({{0, 10, 1}, {0, 10, 1}, {2, 3, 1}}, {{1, 2, 3, 5, 6, 1}});
  EXPECT_EQ(p[0].level, -1);
  EXPECT_EQ(p[1].level, -1);
  EXPECT_EQ(p[2].level, -1);  // its ancestors never reach a root
  EXPECT_EQ(p[2].launches, 1);
}

}  // namespace
}  // namespace cpprof::analysis
