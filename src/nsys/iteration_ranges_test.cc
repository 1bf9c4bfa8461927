#include "nsys/iteration_ranges.h"

#include <gtest/gtest.h>

namespace cpprof::nsys {
namespace {

TEST(IterationRanges, NamesThatMarkIterations) {
  EXPECT_TRUE(IsIterationName(":iteration 0"));
  EXPECT_TRUE(IsIterationName("cpfold:iter1"));
  EXPECT_TRUE(IsIterationName(":cpfold:iter12"));
  EXPECT_TRUE(IsIterationName("train:Iter_3"));
  EXPECT_TRUE(IsIterationName("ITERATION-7"));
  EXPECT_FALSE(IsIterationName(":iteration"));
  EXPECT_FALSE(IsIterationName(":iterate 1"));
  EXPECT_FALSE(IsIterationName(":iter1.forward"));
  EXPECT_FALSE(IsIterationName("cpfold:iter1:Trunk.forward"));
  EXPECT_FALSE(IsIterationName(""));
}

}  // namespace
}  // namespace cpprof::nsys
