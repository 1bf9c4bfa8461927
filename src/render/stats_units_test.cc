// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/stats_units.h"

#include <gtest/gtest.h>

namespace cpprof::render {
namespace {

TEST(ParseTimeUnit, LongestPrefixAsNsys) {
  EXPECT_EQ(ParseTimeUnit("nsec"), TimeUnit::kNsec);
  EXPECT_EQ(ParseTimeUnit("nano"), TimeUnit::kNsec);
  EXPECT_EQ(ParseTimeUnit("usec"), TimeUnit::kUsec);
  EXPECT_EQ(ParseTimeUnit("us"), TimeUnit::kUsec);
  EXPECT_EQ(ParseTimeUnit("micro"), TimeUnit::kUsec);
  EXPECT_EQ(ParseTimeUnit("msec"), TimeUnit::kMsec);
  EXPECT_EQ(ParseTimeUnit("milli"), TimeUnit::kMsec);
  EXPECT_EQ(ParseTimeUnit("ms"), TimeUnit::kMsec);
  EXPECT_EQ(ParseTimeUnit("sec"), TimeUnit::kSec);
  EXPECT_EQ(ParseTimeUnit("s"), TimeUnit::kSec);
  EXPECT_EQ(ParseTimeUnit("seconds"), TimeUnit::kSec);
  EXPECT_EQ(ParseTimeUnit("m"), std::nullopt);  // msec or microseconds
  EXPECT_EQ(ParseTimeUnit("mi"), std::nullopt);
  EXPECT_EQ(ParseTimeUnit("hours"), std::nullopt);
  EXPECT_EQ(ParseTimeUnit(""), std::nullopt);
  EXPECT_EQ(ParseTimeUnit("usecs"), std::nullopt);
}

TEST(ShiftDecimal, AsNsysPrintsIt) {
  EXPECT_EQ(ShiftDecimal("31123908", 3), "31123.908");
  EXPECT_EQ(ShiftDecimal("160432.5", 3), "160.433");
  EXPECT_EQ(ShiftDecimal("1000", 3), "1.000");
  EXPECT_EQ(ShiftDecimal("0", 3), "0.000");
  EXPECT_EQ(ShiftDecimal("4608", 6), "0.0046");
  EXPECT_EQ(ShiftDecimal("5", 9), "0.0000");
  EXPECT_EQ(ShiftDecimal("-4.0", 3), "-0.004");
  EXPECT_EQ(ShiftDecimal("1508108216", 9), "1.5081");
  EXPECT_EQ(ShiftDecimal("9223372036854775807", 9), "9223372036.8548");
  // The cells nsys 2025.3.1 printed (tests/data/real/*-{usec,msec}_*.csv): through a double times
  // the factor, not in decimal digits: an exact half can go either way.
  EXPECT_EQ(ShiftDecimal("1610403350", 6), "1610.4033") << "cpwork-train nvtx_gpu_proj_sum ':iteration 0' Max";
  EXPECT_EQ(ShiftDecimal("3882.5", 3), "3.883") << "cpwork-train kern_sum softmax_warp_backward Avg";
  EXPECT_EQ(ShiftDecimal("142.5", 3), "0.143") << "cpwork-train kern_sum StdDev";
  EXPECT_EQ(ShiftDecimal("48450.5", 3), "48.450");
  EXPECT_EQ(ShiftDecimal("99999.5", 3), "99.999");
  EXPECT_EQ(ShiftDecimal("nan", 3), "nan");
  EXPECT_EQ(ShiftDecimal("1e+16", 3), "1e+16");
  EXPECT_EQ(ShiftDecimal("", 3), "");
  EXPECT_EQ(ShiftDecimal("12.5", 0), "12.5");
}

TEST(ApplyTimeUnit, RenamesAndConvertsTimeColumnsOnly) {
  model::StatsTable t;
  t.columns = {{"Time (%)"}, {"Total Time (ns)"}, {"Instances"}, {"Avg (ns)"}, {"Name", false}};
  t.rows = {{"39.1", "31123908", "194", "160432.5", "kernel (ns)"}};
  ApplyTimeUnit(t, TimeUnit::kUsec);
  EXPECT_EQ(t.columns[0].header, "Time (%)");
  EXPECT_EQ(t.columns[1].header, "Total Time (us)");
  EXPECT_EQ(t.columns[3].header, "Avg (us)");
  EXPECT_EQ(t.columns[4].header, "Name");
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"39.1", "31123.908", "194", "160.433", "kernel (ns)"}));
}

TEST(ApplyTimeUnit, LazyRowsConvertedAsTheyAreMade) {
  model::StatsTable t;
  t.columns = {{"Total Time (ns)"}, {"Range", false}};
  t.lazy_count = 2;
  t.lazy_row = [](size_t i, std::vector<std::string>& cells) { cells = {std::to_string(1500 * (i + 1)), "r"}; };
  ApplyTimeUnit(t, TimeUnit::kSec);
  EXPECT_EQ(t.columns[0].header, "Total Time (sec)");
  std::vector<std::string> got;
  t.ForEachRow([&](const std::vector<std::string>& r) { got.push_back(r[0]); });
  EXPECT_EQ(got, (std::vector<std::string>{"0.0000", "0.0000"}));
}

TEST(ApplyTimeUnit, NanosecondsLeaveTheTable) {
  model::StatsTable t;
  t.columns = {{"Total Time (ns)"}};
  t.rows = {{"12"}};
  ApplyTimeUnit(t, TimeUnit::kNsec);
  EXPECT_EQ(t.columns[0].header, "Total Time (ns)");
  EXPECT_EQ(t.rows[0][0], "12");
}

}  // namespace
}  // namespace cpprof::render
