// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/module_sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "analysis/rank_summary.h"
#include "analysis/test_ops.h"

namespace cpprof::analysis {
namespace {

using model::OpClass;

using test_ops::Op;
using test_ops::Work;

constexpr OpClass kGemm = OpClass::kGemm, kSend = OpClass::kSendRecv, kGather = OpClass::kAllGather;

// Node tree used below: 0 [unattributed]; 1 group; 2 child of 1; 3 child of 2; 4 another root.
const std::vector<int> kParents = {-1, -1, 1, 2, -1};

TEST(ModuleSweep, OverlappingModulesShareTimeAndRowsAddUp) {
  // Node 2 computes [0,100); node 3 sends [50,150); node 4 computes [120,130).
  auto w = Work({{0, 100, kGemm, 2}, {50, 150, kSend, 3}, {120, 130, kGemm, 4}});
  RankModuleTimes t = SweepModules(w, kParents, true);
  EXPECT_EQ(t.busy_ns, 150);
  // [0,50) node 2; [50,100) shared 2/3; [100,120) node 3; [120,130) shared 3/4; [130,150) node 3.
  EXPECT_EQ(t.nodes[2].own_ns, 75);
  EXPECT_EQ(t.nodes[3].own_ns, 70);
  EXPECT_EQ(t.nodes[4].own_ns, 5);
  EXPECT_EQ(t.nodes[2].busy_ns, 145);  // own + node 3
  EXPECT_EQ(t.nodes[1].busy_ns, 145);
  EXPECT_EQ(t.nodes[1].busy_ns + t.nodes[4].busy_ns + t.nodes[0].busy_ns, t.busy_ns);
  // Communication of node 3 counts in its ancestors' unions; hidden where compute ran: [50,100)
  // and [120,130).
  for (int n : {1, 2, 3}) {
    EXPECT_EQ(t.nodes[n].comm_ns, 100) << n;
    EXPECT_EQ(t.nodes[n].hidden_ns, 60) << n;
    EXPECT_EQ(t.nodes[n].comm_kind_ns[static_cast<int>(kSend)], 100) << n;
  }
  EXPECT_EQ(t.nodes[4].comm_ns, 0);
  EXPECT_EQ(t.hidden_ns[static_cast<int>(kSend)], 60);
  EXPECT_EQ(t.nodes[1].ops, 2);
  ASSERT_EQ(t.comm_ops[static_cast<int>(kSend)].size(), 1u);
}

TEST(ModuleSweep, IdenticalTouchingZeroLengthAndLongOps) {
  auto w = Work({{10, 20, kGemm, 2},
                 {10, 20, kGemm, 4},                         // identical interval, other module: half each
                 {20, 30, kGather, 2},                       // touches: no overlap
                 {25, 25, kGemm, 4},                         // zero length: counted as an op, adds no time
                 {40, 40 + (int64_t{5} << 32), kGemm, 3}});  // longer than 32 bits of ns
  RankModuleTimes t = SweepModules(w, kParents, false);
  EXPECT_EQ(t.busy_ns, 20 + (int64_t{5} << 32));
  EXPECT_EQ(t.nodes[4].own_ns, 5);
  EXPECT_EQ(t.nodes[4].ops, 2);
  EXPECT_EQ(t.nodes[2].own_ns, 15);
  EXPECT_EQ(t.nodes[3].own_ns, int64_t{5} << 32);
  EXPECT_EQ(t.nodes[2].comm_ns, 10);
  EXPECT_EQ(t.nodes[2].hidden_ns, 0);                          // the gemm ended when the gather started
  EXPECT_TRUE(t.comm_ops[static_cast<int>(kGather)].empty());  // not collected
}

TEST(ModuleSweep, PhasesAddUpToBusy) {
  auto w = Work({{0, 10, kGemm, 1, 0}, {5, 15, kGemm, 1, 1}, {20, 30, kGemm, 4, 2}});
  RankModuleTimes t = SweepModules(w, kParents, false);
  EXPECT_TRUE(t.has_backward);
  EXPECT_EQ(t.phase_busy_ns[0] + t.phase_busy_ns[1] + t.phase_busy_ns[2], t.busy_ns);
  EXPECT_EQ(t.phase_busy_ns[0], 8);  // [0,5) + half of [5,10)
  EXPECT_EQ(t.phase_busy_ns[1], 7);
  EXPECT_EQ(t.phase_busy_ns[2], 10);
}

TEST(ModuleSweep, BackwardPartOfEachModule) {
  // Node 2: forward [0,10), backward [20,30) and [25,35); node 3 (child of 2): backward [40,50)
  // while node 4 runs forward [45,50); node 2 forward and backward at once [60,70).
  auto w = Work({{0, 10, kGemm, 2, 0},
                 {20, 30, kGemm, 2, 1},
                 {25, 35, kGemm, 2, 1},
                 {40, 50, kGemm, 3, 1},
                 {45, 50, kGemm, 4, 0},
                 {60, 70, kGemm, 2, 0},
                 {60, 70, kGemm, 2, 1}});
  RankModuleTimes t = SweepModules(w, kParents, false);
  EXPECT_EQ(t.nodes[3].backward_ns, 8);  // [40,45) + half of [45,50)
  EXPECT_EQ(t.nodes[3].busy_ns, 8);
  EXPECT_EQ(t.nodes[2].own_ns, 35);               // [0,10) + [20,35) + [60,70)
  EXPECT_EQ(t.nodes[2].backward_ns, 15 + 5 + 8);  // its own backward, half of [60,70), and node 3's
  EXPECT_EQ(t.nodes[1].backward_ns, 28);          // the group includes its subtree
  EXPECT_EQ(t.nodes[4].backward_ns, 0);
}

TEST(RoundShares, AddsUpExactly) {
  EXPECT_EQ(RoundShares({1.0 / 3, 1.0 / 3, 1.0 / 3}, 1), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(RoundShares({2.5, 2.5}, 5), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(RoundShares({}, 0), (std::vector<int64_t>{}));
  auto v = RoundShares({1e12 / 7, 6e12 / 7}, 1000000000000);
  EXPECT_EQ(v[0] + v[1], 1000000000000);
}

// Against brute force over a time grid: random ops of random classes, modules and streams, in a
// shuffled order (so chunks are sorted and merged).
TEST(ModuleSweep, MatchesBruteForceOnRandomOps) {
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::vector<Op> ops;
    int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      int64_t s = rng() % 200, d = rng() % 30;
      OpClass c = (rng() % 3 == 0) ? (rng() % 2 ? kSend : kGather) : kGemm;
      ops.push_back({s, s + d, c, static_cast<uint16_t>(rng() % kParents.size()), static_cast<uint8_t>(rng() % 3)});
    }
    auto w = Work(ops);
    RankModuleTimes t = SweepModules(w, kParents, true);

    int64_t busy = 0;
    std::vector<double> own(kParents.size(), 0), backward(kParents.size(), 0);
    std::vector<int64_t> comm(kParents.size(), 0), hidden(kParents.size(), 0);
    for (int64_t x = 0; x < 240; ++x) {
      std::map<int, int> nodes, backward_ops;
      bool compute = false;
      std::vector<bool> comm_in(kParents.size(), false);
      for (const auto& o : ops) {
        if (o.start <= x && x < o.end) {
          ++nodes[o.node];
          if (o.phase == static_cast<uint8_t>(model::Phase::kBackward)) ++backward_ops[o.node];
          if (model::IsComm(o.cls)) {
            for (int p = o.node; p >= 0; p = kParents[p]) comm_in[p] = true;
          } else {
            compute = true;
          }
        }
      }
      if (nodes.empty()) continue;
      ++busy;
      for (auto& [node, cnt] : nodes) {
        double share = 1.0 / static_cast<double>(nodes.size());
        own[node] += share;
        // A module running forward and backward work at once gives half of its share to each.
        if (backward_ops[node]) backward[node] += backward_ops[node] == cnt ? share : share / 2;
      }
      for (size_t p = 0; p < kParents.size(); ++p) {
        comm[p] += comm_in[p];
        hidden[p] += comm_in[p] && compute;
      }
    }
    ASSERT_EQ(t.busy_ns, busy) << round;
    int64_t top = 0;
    for (size_t p = 0; p < kParents.size(); ++p) {
      EXPECT_NEAR(static_cast<double>(t.nodes[p].own_ns), own[p], 1.0) << round << " node " << p;
      double backward_inclusive = 0;  // over p's subtree (a child's id is larger than its parent's)
      for (size_t q = 0; q < kParents.size(); ++q) {
        for (int a = static_cast<int>(q); a >= 0; a = kParents[a]) {
          if (a == static_cast<int>(p)) backward_inclusive += backward[q];
        }
      }
      EXPECT_NEAR(static_cast<double>(t.nodes[p].backward_ns), backward_inclusive, 3.0) << round << " node " << p;
      EXPECT_LE(t.nodes[p].backward_ns, t.nodes[p].busy_ns);
      EXPECT_EQ(t.nodes[p].comm_ns, comm[p]) << round << " node " << p;
      EXPECT_EQ(t.nodes[p].hidden_ns, hidden[p]) << round << " node " << p;
      if (kParents[p] < 0) top += t.nodes[p].busy_ns;
    }
    EXPECT_EQ(top, busy) << round;
    // The per-rank summary from this sweep equals the one from its own pass.
    model::GpuNames names;
    model::RankSummary one = SummarizeRankFromSweep(w, names, 0, t), two = SummarizeRank(w, names, 0);
    EXPECT_EQ(one.busy_ns, two.busy_ns);
    EXPECT_EQ(one.both_ns, two.both_ns);
    EXPECT_EQ(one.comm_ns, two.comm_ns);
    EXPECT_EQ(one.span_ns, two.span_ns);
    for (int c = 0; c < model::kNumOpClasses; ++c) {
      EXPECT_EQ(one.classes[c].union_ns, two.classes[c].union_ns) << round << " class " << c;
      EXPECT_EQ(one.classes[c].sum_ns, two.classes[c].sum_ns);
      EXPECT_EQ(one.classes[c].instances, two.classes[c].instances);
    }
  }
}

}  // namespace
}  // namespace cpprof::analysis

namespace cpprof::analysis {
namespace {

// The same ops stored in another order and other chunks (as another number of reading threads,
// or a window cut from ops in memory, stores them) sweep to the same numbers, also where ops start
// together: which module a gap's idle goes to, and the order of the communication ops that are
// matched across ranks.
TEST(ModuleSweep, StorageOrderAndChunksDoNotChangeTheResult) {
  std::mt19937 rng(7);
  auto layout = [&](std::vector<test_ops::Op> ops) {
    std::shuffle(ops.begin(), ops.end(), rng);
    model::ProcessGpuWork w;
    for (size_t at = 0; at < ops.size();) {  // parts of random sizes, each in chunks of its own
      size_t n = std::min(ops.size() - at, size_t{1} + rng() % 300);
      model::ProcessGpuWork part = test_ops::Work({ops.begin() + at, ops.begin() + at + n});
      w.ops.Append(std::move(part.ops));
      w.long_ops.insert(w.long_ops.end(), part.long_ops.begin(), part.long_ops.end());
      at += n;
    }
    return w;
  };
  for (int round = 0; round < 30; ++round) {
    std::vector<test_ops::Op> ops;
    for (int i = 0; i < 600; ++i) {
      int64_t s = 1000 * (rng() % 150), d = 100 * (rng() % 4);  // many ops start together
      model::OpClass c = rng() % 3 == 0 ? (rng() % 2 ? kSend : kGather) : kGemm;
      ops.push_back({s, s + d, c, static_cast<uint16_t>(rng() % kParents.size()), static_cast<uint8_t>(rng() % 3)});
    }
    model::ProcessGpuWork a = layout(ops), b = layout(ops);
    RankModuleTimes ta = SweepModules(a, kParents, true), tb = SweepModules(b, kParents, true);
    for (size_t n = 0; n < kParents.size(); ++n) {
      EXPECT_EQ(ta.nodes[n].host_idle_ns, tb.nodes[n].host_idle_ns) << "round " << round << " node " << n;
    }
    for (int c = 0; c < model::kNumOpClasses; ++c) {
      ASSERT_EQ(ta.comm_ops[c].size(), tb.comm_ops[c].size());
      for (size_t i = 0; i < ta.comm_ops[c].size(); ++i) {
        EXPECT_EQ(ta.comm_ops[c][i].node, tb.comm_ops[c][i].node) << "round " << round << " class " << c << " op " << i;
      }
    }
  }
}

}  // namespace
}  // namespace cpprof::analysis
