// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/clock_align.h"

#include <gtest/gtest.h>

#include <random>

namespace cpprof::analysis {
namespace {

using model::OpClass;
constexpr int64_t kUs = 1000, kMs = 1000 * kUs;

// `n` collectives of `kind` on process `gpid`, every `period` from `first_end`, ends jittered by
// up to `jitter` (the exit skew between ranks).
void AddCollectives(ClockInput& in, int64_t gpid, OpClass kind, int n, int64_t first_end, int64_t period,
                    int64_t jitter, std::mt19937& rng) {
  std::uniform_int_distribution<int64_t> j(-jitter, jitter);
  for (int i = 0; i < n; ++i) {
    int64_t end = first_end + i * period + (jitter ? j(rng) : 0);
    in.comm.push_back({gpid, end - 200 * kUs, end, kind});
  }
}

TEST(ClockAlign, RefinesTheRecordedStartsByCollectiveEnds) {
  std::mt19937 rng(7);
  // Truth: export 1's session started 5 ms after export 0's; its recorded start says 5.8 ms
  // (a host clock 0.8 ms fast). Its timestamps count from its own start.
  std::vector<ClockInput> in(2);
  in[0].utc_start_ns = 1'000'000 * kMs;
  in[1].utc_start_ns = in[0].utc_start_ns + 5'800 * kUs;
  AddCollectives(in[0], 1, OpClass::kAllGather, 50, 100 * kMs, 3 * kMs, 3 * kUs, rng);
  AddCollectives(in[1], 2, OpClass::kAllGather, 50, 100 * kMs - 5 * kMs, 3 * kMs, 3 * kUs, rng);
  // Point-to-point ops do not count: their counts differ per rank.
  AddCollectives(in[1], 2, OpClass::kSendRecv, 7, 1 * kMs, 1 * kMs, 0, rng);
  auto out = AlignClocks(in);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].offset_ns, 0);
  EXPECT_NEAR(double(out[1].offset_ns), 5.0 * kMs, 5 * kUs);
  EXPECT_NEAR(double(out[1].refine_ns), -0.8 * kMs, 5 * kUs);
  EXPECT_EQ(out[1].matched_ops, 50);
  EXPECT_GE(out[1].residual_ns, 0);
  EXPECT_LE(out[1].residual_ns, 6 * kUs);
  EXPECT_EQ(out[1].method, "session start (UTC), refined by 50 collective ends");
}

TEST(ClockAlign, CountsCutByTheCaptureEdgesArePairedByTheBestShift) {
  std::mt19937 rng(1);
  std::vector<ClockInput> in(2);
  in[0].utc_start_ns = in[1].utc_start_ns = 42;
  // Export 1 started late and missed the first 3 of irregularly spaced collectives.
  int64_t t = 10 * kMs;
  std::vector<int64_t> ends;
  std::uniform_int_distribution<int64_t> gap(1 * kMs, 9 * kMs);
  for (int i = 0; i < 40; ++i) ends.push_back(t += gap(rng));
  for (size_t i = 0; i < ends.size(); ++i) {
    in[0].comm.push_back({1, ends[i] - kUs, ends[i], OpClass::kAllReduce});
    if (i >= 3) in[1].comm.push_back({2, ends[i] - kUs + 700 * kUs, ends[i] + 700 * kUs, OpClass::kAllReduce});
  }
  auto out = AlignClocks(in);
  EXPECT_EQ(out[1].refine_ns, -700 * kUs);
  EXPECT_EQ(out[1].residual_ns, 0);
  EXPECT_EQ(out[1].matched_ops, 37);
}

TEST(ClockAlign, PeriodicCollectivesKeepTheRecordedStartsPairing) {
  std::mt19937 rng(3);
  std::vector<ClockInput> in(2);
  in[0].utc_start_ns = 1;
  in[1].utc_start_ns = 1 + 150 * kUs;  // 150 us off, collectives every 1 ms exactly
  AddCollectives(in[0], 1, OpClass::kBroadcast, 30, 5 * kMs, kMs, 0, rng);
  AddCollectives(in[1], 2, OpClass::kBroadcast, 30, 5 * kMs - 150 * kUs + 40 * kUs, kMs, 0, rng);
  auto out = AlignClocks(in);
  EXPECT_EQ(out[1].refine_ns, -40 * kUs) << "not a whole period away";
}

TEST(ClockAlign, SaysWhatItCouldNotDo) {
  std::vector<ClockInput> in(3);
  in[0].utc_start_ns = 100;
  in[1].utc_start_ns = 250;
  in[2].utc_start_ns = 400;
  auto out = AlignClocks(in);
  EXPECT_EQ(out[1].offset_ns, 150);
  EXPECT_EQ(out[1].residual_ns, -1);
  EXPECT_EQ(out[1].method, "session start (UTC) only: no collective to refine it with");
  in[2].utc_start_ns = 0;
  out = AlignClocks(in);
  EXPECT_EQ(out[1].offset_ns, 0) << "without every start, none is used";
  EXPECT_EQ(out[2].method, "none: no session start recorded and no collective matched");
}

}  // namespace
}  // namespace cpprof::analysis
