// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/comm_match.h"

#include <gtest/gtest.h>

#include <random>

#include "analysis/test_ops.h"
#include "analysis/verdict.h"

namespace cpprof::analysis {
namespace {

using model::OpClass;
constexpr OpClass kSend = OpClass::kSendRecv, kGather = OpClass::kAllGather, kGemm = OpClass::kGemm;
constexpr int64_t kUs = 1000, kMs = 1000 * kUs;

using test_ops::Op;
using test_ops::Work;

// Sweeps and matches a few ranks, as BuildReport does.
struct Matched {
  std::vector<model::ProcessGpuWork> work;
  std::vector<RankModuleTimes> sweeps;
  CommMatch match;
  std::vector<int> parent;

  Matched(const std::vector<std::vector<Op>>& ranks, std::vector<int> parents = {-1}) : parent(std::move(parents)) {
    for (const auto& r : ranks) work.push_back(Work(r));
    for (auto& w : work) sweeps.push_back(SweepModules(w, parent, true));
    std::vector<const RankModuleTimes*> ptrs;
    for (const auto& s : sweeps) ptrs.push_back(&s);
    match = MatchComm(ptrs);
    for (size_t r = 0; r < work.size(); ++r) SplitRankComm(sweeps[r], r, parent, match, sweeps[r].nodes);
  }
  const model::CollectiveStats& Kind(OpClass c) const {
    for (const auto& k : match.kinds) {
      if (k.kind == c) return k;
    }
    ADD_FAILURE() << "no kind " << model::Name(c);
    return match.kinds.front();
  }
};

// Worked by hand: two ranks, three ring shifts. Rank 1 arrives 10 ms late at every shift; the
// transfer takes 1 ms once both are there.
TEST(CommMatch, LateRankIsTheStragglerAndTheOtherWaits) {
  std::vector<Op> r0, r1;
  for (int i = 0; i < 3; ++i) {
    int64_t t = i * 20 * kMs;
    r0.push_back({t, t + 11 * kMs, kSend});             // arrives at t, waits 10 ms, transfers 1 ms
    r1.push_back({t + 10 * kMs, t + 11 * kMs, kSend});  // arrives last, transfers 1 ms
  }
  Matched run({r0, r1});
  const auto& k = run.Kind(kSend);
  EXPECT_EQ(k.instances, 3);
  EXPECT_EQ(k.per_rank[0].wait_ns, 30 * kMs);
  EXPECT_EQ(k.per_rank[0].transfer_ns, 3 * kMs);
  EXPECT_EQ(k.per_rank[1].wait_ns, 0);
  EXPECT_EQ(k.per_rank[1].transfer_ns, 3 * kMs);
  EXPECT_EQ(k.per_rank[1].last_arrivals, 3);
  EXPECT_EQ(k.per_rank[1].caused_wait_ns, 30 * kMs);
  EXPECT_EQ(k.per_rank[0].caused_wait_ns, 0);
  EXPECT_EQ(k.start_spread_max_ns, 10 * kMs);
  // No compute: every transfer is exposed.
  EXPECT_EQ(k.per_rank[0].exposed_transfer_ns, 3 * kMs);
  std::vector<model::RankSummary> ranks(2);
  ranks[0].busy_ns = 33 * kMs, ranks[1].busy_ns = 3 * kMs;
  ranks[1].rank = 1;
  model::Imbalance im = SummarizeImbalance(ranks, run.match.kinds);
  EXPECT_EQ(im.straggler_rank, 1);  // the late one, though rank 0 is the busiest
  EXPECT_EQ(im.busiest_rank, 0);
  EXPECT_EQ(im.straggler_caused_wait_ns, 30 * kMs);
  EXPECT_EQ(im.straggler_last_arrivals, 3);
  // Who waited for whom: rank 0 waited its 30 ms for rank 1, in the instances of ranks {0, 1}.
  EXPECT_EQ(k.per_rank[0].waited_for_ns, (std::vector<int64_t>{0, 30 * kMs}));
  EXPECT_TRUE(k.per_rank[1].waited_for_ns.empty());
  EXPECT_EQ(im.waited_for_ns, (std::vector<std::vector<int64_t>>{{0, 30 * kMs}, {0, 0}}));
  ASSERT_EQ(k.groups.size(), 1u);
  EXPECT_EQ(k.groups[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(k.groups[0].instances, 3);
  EXPECT_EQ(k.groups[0].wait_ns, 30 * kMs);
  EXPECT_EQ(k.groups[0].waited_for_ns, (std::vector<int64_t>{0, 30 * kMs}));
}

// Four ranks in two pairs that shift at different moments (two rings), and one collective of all
// four: each instance's waiting goes to the group of its ranks, by the rank that came last.
TEST(CommMatch, WaitsAreKeptPerGroupOfRanks) {
  std::vector<std::vector<Op>> r(4);
  // Ring {0, 1} at 0 ms: rank 1 is 2 ms late. Ring {2, 3} at 5 ms: rank 2 is 3 ms late.
  r[0].push_back({0, 3 * kMs, kSend});
  r[1].push_back({2 * kMs, 3 * kMs, kSend});
  r[2].push_back({8 * kMs, 9 * kMs, kSend});
  r[3].push_back({5 * kMs, 9 * kMs, kSend});
  // An AllGather of all four at 20 ms: rank 3 arrives 1 ms after the others.
  for (int k = 0; k < 4; ++k) r[k].push_back({(k == 3 ? 21 : 20) * kMs, 22 * kMs, kGather});
  Matched run(r);
  const auto& send = run.Kind(kSend);
  ASSERT_EQ(send.groups.size(), 2u);
  EXPECT_EQ(send.groups[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(send.groups[0].waited_for_ns, (std::vector<int64_t>{0, 2 * kMs, 0, 0}));
  EXPECT_EQ(send.groups[1].ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(send.groups[1].waited_for_ns, (std::vector<int64_t>{0, 0, 3 * kMs, 0}));
  const auto& gather = run.Kind(kGather);
  ASSERT_EQ(gather.groups.size(), 1u);
  EXPECT_EQ(gather.groups[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(gather.groups[0].wait_ns, 3 * kMs);  // ranks 0, 1 and 2 waited 1 ms each
  EXPECT_EQ(gather.groups[0].waited_for_ns, (std::vector<int64_t>{0, 0, 0, 3 * kMs}));
}

// A window's edges: rank 0's ring shift runs 2..14 ms and the window ends at 10 ms; rank 1
// arrives at 13 ms, after the window. Matched over the whole ops, rank 0 waits from 2 to 13 ms,
// so its 8 ms inside the window are all waiting, and rank 1 (outside) is the last arrival. A
// second shift straddles the window's start (rank 0 from -3 ms, rank 1 from 1 ms to 2 ms).
TEST(CommMatch, AnInstanceTheWindowCutsIsSplitWholeThenClipped) {
  const int64_t ws = 0, we = 10 * kMs;
  std::vector<std::vector<Op>> ranks{{{ws, 2 * kMs, kSend}, {2 * kMs, we, kSend}}, {{1 * kMs, 2 * kMs, kSend}}};
  std::vector<model::ProcessGpuWork> work;
  for (const auto& r : ranks) work.push_back(Work(r));
  work[0].edge_comm_ops = {{{-3 * kMs, 2 * kMs}, kSend, 0, true}, {{2 * kMs, 14 * kMs}, kSend, 0, true}};
  work[1].edge_comm_ops = {{{13 * kMs, 14 * kMs}, kSend, 0, false}, {{40 * kMs, 41 * kMs}, kSend, 0, false}};
  KeepNearEdges(work, {ws, we});
  EXPECT_EQ(work[1].edge_comm_ops.size(), 1u) << "40 ms is farther from the window than the longest cut op";
  std::vector<RankModuleTimes> sweeps;
  for (auto& w : work) {
    sweeps.push_back(StartSweep(w, 1, true));
    sweeps.back().window_start = ws, sweeps.back().window_end = we;
    SweepModules(w, {-1}, sweeps.back());
  }
  std::vector<const RankModuleTimes*> ptrs{&sweeps[0], &sweeps[1]};
  CommMatch m = MatchComm(ptrs);
  const auto& k = m.kinds.at(0);
  EXPECT_EQ(k.instances, 2);
  EXPECT_EQ(k.edge_instances, 2);
  // First shift: rank 0 waits -3..1 ms (1 ms inside), transfers 1..2; rank 1 transfers 1..2.
  // Second: rank 0 waits 2..10 (all of its 8 ms inside); rank 1's op is outside the window.
  EXPECT_EQ(k.per_rank[0].wait_ns, 9 * kMs);
  EXPECT_EQ(k.per_rank[0].transfer_ns, 1 * kMs);
  EXPECT_EQ(k.per_rank[0].unmatched_ops, 0);
  EXPECT_EQ(k.per_rank[1].ops, 1);
  EXPECT_EQ(k.per_rank[1].transfer_ns, 1 * kMs);
  EXPECT_EQ(k.per_rank[1].last_arrivals, 2);
  EXPECT_EQ(k.per_rank[1].caused_wait_ns, 9 * kMs);
  EXPECT_EQ(m.splits[static_cast<int>(kSend)][0][1].transfer_start, we);
}

// Cannon's initial skew: rank 1 runs an extra shift with no partner, so counts differ (3 vs 2);
// matching by position would pair the wrong ops, matching by time does not.
TEST(CommMatch, UnequalCountsMatchByTimeAndLeaveTheExtraOpUnmatched) {
  std::vector<Op> r0{{10 * kMs, 12 * kMs, kSend}, {20 * kMs, 25 * kMs, kSend}};
  std::vector<Op> r1{{0, 1 * kMs, kSend}, {11 * kMs, 12 * kMs + 10 * kUs, kSend}, {24 * kMs, 25 * kMs, kSend}};
  Matched run({r0, r1});
  const auto& k = run.Kind(kSend);
  EXPECT_EQ(k.per_rank_count, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(k.instances, 2);
  EXPECT_EQ(k.per_rank[1].unmatched_ops, 1);
  EXPECT_EQ(k.per_rank[1].unmatched_ns, 1 * kMs);
  // Instance 1: rank 1 arrives 1 ms late; instance 2: 4 ms late.
  EXPECT_EQ(k.per_rank[0].wait_ns, 1 * kMs + 4 * kMs);
  EXPECT_EQ(k.per_rank[0].transfer_ns, 1 * kMs + 1 * kMs);
  EXPECT_EQ(k.per_rank[1].wait_ns, 0);
  EXPECT_EQ(k.per_rank[1].last_arrivals, 2);
  for (const auto& p : k.per_rank) EXPECT_EQ(p.wait_ns + p.transfer_ns + p.unmatched_ns, p.time_ns);
}

// A collective of three ranks where each arrives last once.
TEST(CommMatch, CollectiveLastArrivalRotates) {
  std::vector<std::vector<Op>> ranks(3);
  for (int i = 0; i < 3; ++i) {
    int64_t t = i * 10 * kMs;
    for (int r = 0; r < 3; ++r) {
      int64_t arrive = t + (r == i ? 2 * kMs : r * 100 * kUs);
      ranks[r].push_back({arrive, t + 2 * kMs + 500 * kUs, kGather});
    }
  }
  Matched run(ranks);
  const auto& k = run.Kind(kGather);
  EXPECT_EQ(k.instances, 3);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(k.per_rank[r].last_arrivals, 1) << r;
    EXPECT_EQ(k.per_rank[r].transfer_ns, 3 * 500 * kUs) << r;
  }
}

// Transfer under compute is hidden; only the part with no compute is exposed. Module nodes get
// the splits (own op's node and its ancestors).
TEST(CommMatch, ExposedTransferAndModules) {
  // Node 1 (a root) has child 2. Rank 0: a send [0, 10) ms, waiting until 6 ms (rank 1 arrives
  // then), transfer [6, 10); compute [8, 9) hides 1 ms of it.
  std::vector<Op> r0{{0, 10 * kMs, kSend, 2}, {8 * kMs, 9 * kMs, kGemm, 1}};
  std::vector<Op> r1{{6 * kMs, 10 * kMs + 5 * kUs, kSend, 2}};
  Matched run({r0, r1}, {-1, -1, 1});
  const auto& k = run.Kind(kSend);
  EXPECT_EQ(k.per_rank[0].wait_ns, 6 * kMs);
  EXPECT_EQ(k.per_rank[0].transfer_ns, 4 * kMs);
  EXPECT_EQ(k.per_rank[0].exposed_transfer_ns, 3 * kMs);
  const auto& n0 = run.sweeps[0].nodes;
  EXPECT_EQ(n0[2].wait_ns, 6 * kMs);
  EXPECT_EQ(n0[1].wait_ns, 6 * kMs);  // the parent includes its child's
  EXPECT_EQ(n0[2].exposed_transfer_ns, 3 * kMs);
  const auto& n1 = run.sweeps[1].nodes;
  EXPECT_EQ(n1[2].last_arrivals, 1);
  EXPECT_EQ(n1[2].caused_wait_ns, 6 * kMs);
  EXPECT_EQ(n1[1].caused_wait_ns, 6 * kMs);
}

TEST(CommMatch, OverlapOfOverlappingIntervals) {
  std::vector<model::Interval> segments{{0, 20}, {30, 40}};
  std::vector<model::Interval> ivs{{0, 50}, {8, 12}, {15, 35}, {41, 45}};
  EXPECT_EQ(Overlap(segments, ivs), (std::vector<int64_t>{30, 4, 10, 0}));
  // A long interval first does not hide the later ones' segments.
  std::vector<model::Interval> many;
  for (int64_t i = 0; i < 100; ++i) many.push_back({i * 10, i * 10 + 5});
  std::vector<model::Interval> two{{0, 1000}, {500, 505}};
  EXPECT_EQ(Overlap(many, two), (std::vector<int64_t>{500, 5}));
}

// The sweep records where compute and communication ran at once.
TEST(CommMatch, SweepRecordsHiddenSegments) {
  auto w = Work({{0, 10, kGemm}, {5, 20, kSend}, {15, 30, kGemm}, {40, 50, kGemm}});
  RankModuleTimes t = SweepModules(w, {-1}, true);
  EXPECT_EQ(t.hidden_segments, (std::vector<model::Interval>{{5, 10}, {15, 20}}));
}

// Random SPMD rings: whatever the lateness, every op's split adds up and the matched instances
// are the shifts (one op per rank each).
TEST(CommMatch, RandomRingsAddUp) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    const int ranks = 2 + static_cast<int>(rng() % 3), shifts = 1 + static_cast<int>(rng() % 20);
    std::vector<std::vector<Op>> ops(ranks);
    int64_t t = 0;
    for (int s = 0; s < shifts; ++s) {
      int64_t last = 0;
      std::vector<int64_t> arrive(ranks);
      for (int r = 0; r < ranks; ++r) last = std::max(last, arrive[r] = t + static_cast<int64_t>(rng() % (5 * kMs)));
      for (int r = 0; r < ranks; ++r) {
        ops[r].push_back({arrive[r], last + 200 * kUs + static_cast<int64_t>(rng() % (5 * kUs)), kSend});
      }
      t = last + 2 * kMs;
    }
    Matched run(ops);
    const auto& k = run.Kind(kSend);
    EXPECT_EQ(k.instances, shifts);
    int64_t waited = 0, caused = 0;
    for (const auto& p : k.per_rank) {
      EXPECT_EQ(p.wait_ns + p.transfer_ns + p.unmatched_ns, p.time_ns);
      EXPECT_EQ(p.unmatched_ops, 0);
      waited += p.wait_ns;
      caused += p.caused_wait_ns;
    }
    EXPECT_EQ(waited, caused);  // every wait is caused by the instance's last arrival
  }
}

}  // namespace
}  // namespace cpprof::analysis
