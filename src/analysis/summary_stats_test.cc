#include "analysis/summary_stats.h"

#include <gtest/gtest.h>

namespace cpprof::analysis {
namespace {

TEST(Summarize, OddEvenAndSingle) {
  std::vector<int64_t> v{5, 1, 3};
  Summary s = Summarize(v);
  EXPECT_EQ(s.total, 9);
  EXPECT_EQ(s.count, 3);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.stdev, 2.0);  // sample standard deviation

  std::vector<int64_t> e{4832, 4373893};  // ncclAllReduce in the real cpwork-trace export
  s = Summarize(e);
  EXPECT_DOUBLE_EQ(s.median, 2189362.5);
  EXPECT_NEAR(s.stdev, 3089392.7, 0.05);

  std::vector<int64_t> one{7};
  s = Summarize(one);
  EXPECT_DOUBLE_EQ(s.stdev, 0.0);
  EXPECT_DOUBLE_EQ(s.median, 7.0);

  std::vector<int64_t> none;
  EXPECT_EQ(Summarize(none).count, 0);
}

TEST(Summarize, EvenMedianIsMeanOfMiddles) {
  std::vector<int64_t> v{10, 1, 7, 3};
  EXPECT_DOUBLE_EQ(Summarize(v).median, 5.0);
}

// Values taken several times each: the summary of the expanded list, bit for bit while each run
// is short (fed one by one), within rounding when a run is long (added in one step).
TEST(SummarizeRepeated, IsTheSummaryOfTheExpandedList) {
  for (int64_t times : {int64_t{1}, int64_t{3}, kExactRepeats, kExactRepeats + 1, int64_t{100000}}) {
    std::vector<std::pair<int64_t, int64_t>> runs = {{250, times}, {17, 1}, {900, times}, {40, 2}};
    std::vector<int64_t> expanded;
    for (const auto& [v, n] : runs) expanded.insert(expanded.end(), static_cast<size_t>(n), v);
    const Summary want = Summarize(expanded);
    const Summary got = SummarizeRepeated(runs);
    EXPECT_EQ(got.total, want.total) << times;
    EXPECT_EQ(got.count, want.count) << times;
    EXPECT_EQ(got.min, want.min) << times;
    EXPECT_EQ(got.max, want.max) << times;
    EXPECT_DOUBLE_EQ(got.mean, want.mean) << times;
    EXPECT_DOUBLE_EQ(got.median, want.median) << times;
    if (times <= kExactRepeats) {
      EXPECT_EQ(got.stdev, want.stdev) << times;
    } else {
      EXPECT_NEAR(got.stdev, want.stdev, want.stdev * 1e-12) << times;
    }
  }
  std::vector<std::pair<int64_t, int64_t>> none;
  EXPECT_EQ(SummarizeRepeated(none).count, 0);
}

}  // namespace
}  // namespace cpprof::analysis
