// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/replay.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace cpprof::analysis {
namespace {

using model::OpClass;

constexpr int64_t kMs = 1'000'000;

model::GpuOp Op(int64_t start_ms, int64_t end_ms, OpClass cls, uint16_t node = 1) {
  return {start_ms * kMs, static_cast<uint32_t>((end_ms - start_ms) * kMs), cls, 0, node};
}

model::IterationTime Iter(const std::string& name, int64_t start_ms, int64_t end_ms) {
  model::IterationTime it;
  it.name = name;
  it.start_ns = start_ms * kMs, it.end_ns = end_ms * kMs;
  it.in_window = true;
  return it;
}

const std::vector<ModuleTreeNode>& Nodes() {
  static const std::vector<ModuleTreeNode> nodes = {
      {"[unattributed]", "", -1, 0, false},
      {"TriangleMultiplicationOutgoing.forward", "cpfold:TriangleMultiplicationOutgoing.forward", -1, 0, false},
      {"Linear", "cpfold:Linear", 1, 1, false}};
  return nodes;
}

// Two ranks, one ring shift: rank 1 reaches it 10 ms late (a host gap), rank 0 waits for it.
//   rank 0: compute [0,10)  SendRecv [10,30)  compute [30,40)
//   rank 1: compute [0,10)  (idle)  SendRecv [20,30)  compute [30,40)
ReplayInput LateRing() {
  ReplayInput in;
  in.nodes = &Nodes();
  in.ranks = {{Op(0, 10, OpClass::kGemm, 2), Op(10, 30, OpClass::kSendRecv), Op(30, 40, OpClass::kGemm)},
              {Op(0, 10, OpClass::kGemm, 2), Op(20, 30, OpClass::kSendRecv), Op(30, 40, OpClass::kGemm)}};
  in.iterations = {Iter("iter1", 0, 40)};
  return in;
}

WhatIfEdit Edit(const std::string& text) {
  auto e = ParseWhatIf(text);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return e.ok() ? *e : WhatIfEdit{};
}

TEST(Replay, NoEditGivesBackTheMeasuredIteration) {
  model::Replay r = ReplayRun(LateRing(), {});
  ASSERT_TRUE(r.built) << r.why_not;
  EXPECT_EQ(r.replay_iter_median_ns, 40 * kMs);
  EXPECT_EQ(r.measured_iter_median_ns, 40 * kMs);
  EXPECT_TRUE(r.self_check_ok);
  EXPECT_EQ(r.graph.ops, 6);
  EXPECT_EQ(r.graph.nccl_instances, 1);
  EXPECT_EQ(r.graph.nccl_tied_ops, 2);
  EXPECT_EQ(r.graph.nccl_untied_ops, 0);
  EXPECT_EQ(r.graph.launches_untied, 6);
}

TEST(Replay, CriticalPathRunsThroughTheLateRankAndAddsUp) {
  model::Replay r = ReplayRun(LateRing(), {});
  ASSERT_EQ(r.iterations.size(), 1u);
  const auto& path = r.iterations[0].critical_path;
  int64_t sum = 0;
  for (const auto& s : path) sum += s.ns;
  EXPECT_EQ(sum, 40 * kMs);
  // rank 0's last compute (10), the transfer after rank 1 arrived (10), rank 1's host gap (10),
  // rank 1's first compute (10): rank 0's waiting is not on the path.
  auto find = [&](int rank, const std::string& kind) -> int64_t {
    for (const auto& s : path) {
      if (s.rank == rank && s.kind == kind) return s.ns;
    }
    return -1;
  };
  EXPECT_EQ(find(1, "host gap"), 10 * kMs);
  EXPECT_EQ(find(0, "transfer"), 10 * kMs);
  EXPECT_EQ(find(1, "compute"), 10 * kMs);
  EXPECT_EQ(find(0, "compute"), 10 * kMs);
  // In time: on rank 1 from 0 to 20 ms (its compute, then its host gap), then on rank 0 (the
  // transfer once rank 1 arrived, then its compute): contiguous, adding up to the iteration. A tie
  // between two kinds names the first by name.
  const auto& t = r.iterations[0].path;
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].rank, 1);
  EXPECT_EQ(t[0].start_ns, 0);
  EXPECT_EQ(t[0].end_ns, 20 * kMs);
  EXPECT_EQ(t[0].kind, "compute");
  EXPECT_EQ(t[1].rank, 0);
  EXPECT_EQ(t[1].start_ns, 20 * kMs);
  EXPECT_EQ(t[1].end_ns, 40 * kMs);
}

TEST(Replay, RankOnTimeRemovesItsGapBeforeTheShift) {
  model::Replay r = ReplayRun(LateRing(), {Edit("rank 1:on-time")});
  ASSERT_EQ(r.what_ifs.size(), 1u);
  EXPECT_EQ(r.what_ifs[0].predicted_iter_median_ns, 30 * kMs);
  EXPECT_EQ(r.what_ifs[0].edited, 1);
  // Rank 0 is already on time: its gap is rank 1's, brought to nothing it did not have.
  model::Replay r0 = ReplayRun(LateRing(), {Edit("rank 0:on-time")});
  EXPECT_EQ(r0.what_ifs[0].predicted_iter_median_ns, 40 * kMs);
}

TEST(Replay, ComputeScaledByModuleGlobAndRank) {
  // Both ranks' compute halved: the late rank still sleeps 10 ms, so 5 + 10 + 10 + 5.
  model::Replay all = ReplayRun(LateRing(), {Edit("TriangleMultiplication*:compute*1/2")});
  EXPECT_EQ(all.what_ifs[0].predicted_iter_median_ns, 30 * kMs);
  // Only the child module on rank 1 (its first op): rank 1 arrives 5 ms earlier.
  model::Replay one = ReplayRun(LateRing(), {Edit("rank 1:Lin*:compute*0.5")});
  EXPECT_EQ(one.what_ifs[0].predicted_iter_median_ns, 35 * kMs);
  EXPECT_EQ(one.what_ifs[0].edited, 1);
}

TEST(Replay, TransferScaledKeepsTheLastArrival) {
  model::Replay r = ReplayRun(LateRing(), {Edit("*:transfer*2")});
  EXPECT_EQ(r.what_ifs[0].predicted_iter_median_ns, 50 * kMs);
}

TEST(Replay, OverlapLetsComputeRunAlongsideTheTransfer) {
  ReplayInput in;
  in.nodes = &Nodes();
  in.ranks = {{Op(0, 10, OpClass::kGemm), Op(10, 20, OpClass::kSendRecv), Op(20, 30, OpClass::kGemm)},
              {Op(0, 10, OpClass::kGemm), Op(10, 20, OpClass::kSendRecv), Op(20, 30, OpClass::kGemm)}};
  in.iterations = {Iter("iter1", 0, 30)};
  model::Replay r = ReplayRun(in, {Edit("TriangleMultiplicationOutgoing.forward:overlap")});
  EXPECT_EQ(r.replay_iter_median_ns, 30 * kMs);
  EXPECT_EQ(r.what_ifs[0].predicted_iter_median_ns, 20 * kMs);
}

TEST(Replay, OverlapPaysTheMeasuredOverlapTax) {
  // The same ring, its compute measured 50 % slower beside NCCL kernels: the 10 ms GEMM after the
  // shift now runs alongside its 10 ms transfer and takes 15 ms.
  ReplayInput in;
  in.nodes = &Nodes();
  in.ranks = {{Op(0, 10, OpClass::kGemm), Op(10, 20, OpClass::kSendRecv), Op(20, 30, OpClass::kGemm)},
              {Op(0, 10, OpClass::kGemm), Op(10, 20, OpClass::kSendRecv), Op(20, 30, OpClass::kGemm)}};
  in.iterations = {Iter("iter1", 0, 30)};
  in.overlap_tax.assign(Nodes().size(), 0.5);
  model::Replay r = ReplayRun(in, {Edit("TriangleMultiplicationOutgoing.forward:overlap")});
  EXPECT_EQ(r.replay_iter_median_ns, 30 * kMs);  // the tax only changes what the edit predicts
  EXPECT_EQ(r.what_ifs[0].predicted_iter_median_ns, 25 * kMs);
  EXPECT_NE(r.what_ifs[0].description.find("10.000 ms slower over the window and ranks: the measured overlap tax"),
            std::string::npos)
      << r.what_ifs[0].description;
}

TEST(Replay, LaunchGapsRemoved) {
  // One rank, ten 1 ms kernels 50 us apart: CUDA graphs would save 9 x 50 us.
  ReplayInput in;
  std::vector<model::GpuOp> ops;
  for (int i = 0; i < 10; ++i) ops.push_back({i * 1'050'000, 1'000'000, OpClass::kGemm, 0, 0});
  in.ranks = {ops};
  in.iterations = {Iter("iter1", 0, 0)};
  in.iterations[0].end_ns = 9 * 1'050'000 + 1'000'000;
  model::Replay r = ReplayRun(in, {Edit("launch-gaps:0")});
  EXPECT_EQ(r.replay_iter_median_ns, in.iterations[0].end_ns);
  EXPECT_EQ(r.what_ifs[0].predicted_iter_median_ns, 10 * kMs);
  EXPECT_EQ(r.what_ifs[0].edited, 9);
}

TEST(Replay, ConcurrentStreamKeepsItsLaunchDistance) {
  // rank 0: a long kernel [0,20) and, launched 5 ms after it on another stream, [5,10).
  // Halving the long kernel leaves the short one where its launch put it.
  ReplayInput in;
  in.nodes = &Nodes();
  in.ranks = {{Op(0, 20, OpClass::kGemm, 2), Op(5, 10, OpClass::kElementwise, 1), Op(20, 22, OpClass::kGemm, 1)}};
  in.iterations = {Iter("iter1", 0, 22)};
  model::Replay r = ReplayRun(in, {Edit("Linear:compute*0.5")});
  EXPECT_EQ(r.graph.after_start, 1);
  EXPECT_EQ(r.what_ifs[0].predicted_iter_median_ns, 12 * kMs);
}

TEST(Replay, UnmatchedNcclOpsAreCountedNotGuessed) {
  ReplayInput in;
  in.ranks = {{Op(0, 10, OpClass::kSendRecv, 0)}, {Op(20, 30, OpClass::kAllGather, 0)}};
  in.iterations = {Iter("iter1", 0, 30)};
  model::Replay r = ReplayRun(in, {});
  EXPECT_EQ(r.graph.nccl_instances, 0);
  EXPECT_EQ(r.graph.nccl_untied_ops, 2);
  EXPECT_TRUE(r.self_check_ok);
}

TEST(Replay, NoSteadyIterationSaysWhy) {
  ReplayInput in;
  in.ranks = {{Op(0, 10, OpClass::kGemm)}};
  model::Replay r = ReplayRun(in, {});
  EXPECT_FALSE(r.built);
  EXPECT_NE(r.why_not.find("no steady iteration"), std::string::npos);
}

TEST(Replay, CandidatesRankedByPredictedGain) {
  model::Replay r = ReplayRun(LateRing(), {});
  ASSERT_GE(r.opportunities.size(), 3u);
  EXPECT_EQ(r.opportunities[0].edit, "rank 1:on-time");
  for (size_t i = 1; i < r.opportunities.size(); ++i) {
    EXPECT_LE(r.opportunities[i - 1].predicted_iter_median_ns, r.opportunities[i].predicted_iter_median_ns);
  }
}

// The launch edges (analysis/replay.h): times in microseconds.
constexpr int64_t kUs = 1'000;

model::GpuOp OpUs(int64_t start_us, int64_t end_us, OpClass cls, uint16_t node) {
  return {start_us * kUs, static_cast<uint32_t>((end_us - start_us) * kUs), cls, 0, node};
}

model::HostLaunch LaunchUs(int64_t us, uint32_t thread = 0) { return {us * kUs, thread}; }

int64_t Predicted(const ReplayInput& in, const std::string& edit) {
  model::Replay r = ReplayRun(in, {Edit(edit)});
  EXPECT_TRUE(r.self_check_ok);
  return r.what_ifs.empty() ? -1 : r.what_ifs[0].predicted_iter_median_ns;
}

// One rank whose host launches a 2 ms kernel every 10 ms: the GPU waits for each launch.
ReplayInput HostPaced(bool with_launches) {
  ReplayInput in;
  in.nodes = &Nodes();
  for (int k = 0; k < 4; ++k)
    in.ranks.resize(1), in.ranks[0].push_back(OpUs(k * 10'000 + 1'000, k * 10'000 + 3'000, OpClass::kGemm, 2));
  if (with_launches) in.launches = {{LaunchUs(0), LaunchUs(10'000), LaunchUs(20'000), LaunchUs(30'000)}};
  if (with_launches) in.syncs = {{}};
  in.iterations = {Iter("iter1", 0, 33)};  // to the last kernel's end
  return in;
}

TEST(ReplayLaunches, ALaunchBoundOpWaitsForItsCallNotForFasterKernels) {
  model::Replay r = ReplayRun(HostPaced(true), {});
  EXPECT_EQ(r.graph.launches_tied, 4);
  EXPECT_EQ(r.graph.launch_bound, 4);
  EXPECT_EQ(r.replay_iter_median_ns, 33 * kMs);
  // The host sets the pace: halving the kernels leaves each launch where it was; only the last
  // kernel's own millisecond is gained.
  EXPECT_EQ(Predicted(HostPaced(true), "Linear:compute*0.5"), 32 * kMs);
  // Without the calls, each op kept its measured gap after the one before: a gain that is not there.
  EXPECT_EQ(Predicted(HostPaced(false), "Linear:compute*0.5"), 29 * kMs);
  // The host's own time before the launches halved too: the calls at 0, 5, 10 and 15 ms.
  EXPECT_EQ(Predicted(HostPaced(true), "Linear:time*0.5"), 17 * kMs);
  // What CUDA graphs give: every call at once (no sync between them), the kernels back to back.
  EXPECT_EQ(Predicted(HostPaced(true), "launch-gaps:0"), 9 * kMs);
  // The critical path is the host's, and adds up.
  const auto& path = r.iterations.at(0).critical_path;
  int64_t sum = 0, host = 0;
  for (const auto& s : path) sum += s.ns, host += s.kind == "host" ? s.ns : 0;
  EXPECT_EQ(sum, 33 * kMs);
  EXPECT_EQ(host, 31 * kMs);  // all but the last kernel: the host's calls and their latency
}

// The host launches a 10 ms kernel A, waits for it in a sync, then launches B.
ReplayInput SyncAfterLongKernel(bool with_sync) {
  ReplayInput in;
  in.nodes = &Nodes();
  in.ranks = {{OpUs(1'000, 11'000, OpClass::kGemm, 2), OpUs(13'000, 15'000, OpClass::kGemm, 1)}};
  in.launches = {{LaunchUs(0), LaunchUs(12'000)}};
  in.syncs = {{}};
  if (with_sync) in.syncs[0].push_back({500 * kUs, 11'050 * kUs, 0});
  in.iterations = {Iter("iter1", 0, 16)};
  return in;
}

TEST(ReplayLaunches, ASyncCarriesTheGpusGainToTheHostsLaterLaunches) {
  model::Replay r = ReplayRun(SyncAfterLongKernel(true), {});
  EXPECT_EQ(r.graph.syncs_tied, 1);
  EXPECT_EQ(r.replay_iter_median_ns, 16 * kMs);
  // A halved: it ends at 6 ms, the sync returns 50 us later, B's launch 0.95 ms after that.
  EXPECT_EQ(Predicted(SyncAfterLongKernel(true), "Linear:compute*0.5"), 11 * kMs);
  // No sync: B's call stays where it was measured, and so does B.
  EXPECT_EQ(Predicted(SyncAfterLongKernel(false), "Linear:compute*0.5"), 16 * kMs);
  // The path: A, the sync's return, the host's time to B's launch, B.
  std::map<std::string, int64_t> kinds;
  for (const auto& s : r.iterations.at(0).critical_path) kinds[s.kind] += s.ns;
  EXPECT_EQ(kinds["sync"], 50 * kUs);
  EXPECT_EQ(kinds["compute"], 12 * kMs);
  EXPECT_EQ(kinds["sync"] + kinds["host"] + kinds["compute"] + kinds["host gap"], 16 * kMs);
}

// LateRing with its calls: rank 1's host calls its SendRecv late (the GPU idle for it); each
// rank's host launched its last GEMM early (GPU-bound).
ReplayInput LateRingLaunched() {
  ReplayInput in = LateRing();
  in.launches = {{LaunchUs(0), LaunchUs(9'990), LaunchUs(10'500)}, {LaunchUs(0), LaunchUs(19'990), LaunchUs(20'500)}};
  in.syncs = {{}, {}};
  return in;
}

TEST(ReplayLaunches, OnTimeMovesTheLateRanksHostAndItsLaterLaunches) {
  model::Replay r = ReplayRun(LateRingLaunched(), {});
  EXPECT_EQ(r.graph.launch_bound, 1);  // rank 1's SendRecv (the first GEMMs start at the window's start: no gap)
  EXPECT_EQ(r.replay_iter_median_ns, 40 * kMs);
  // Rank 1 arrives at 10 ms: the transfer ends at 20, both GEMMs after it at 30.
  EXPECT_EQ(Predicted(LateRingLaunched(), "rank 1:on-time"), 30 * kMs);
}

TEST(WhatIfParse, Forms) {
  WhatIfEdit e = Edit("TriangleMultiplication*:compute*1/3");
  EXPECT_EQ(e.kind, WhatIfEdit::Kind::kCompute);
  EXPECT_EQ(e.glob, "TriangleMultiplication*");
  EXPECT_DOUBLE_EQ(e.factor, 1.0 / 3);
  EXPECT_EQ(e.rank, -1);
  e = Edit("rank 1:Tri*:transfer*0.5");
  EXPECT_EQ(e.kind, WhatIfEdit::Kind::kTransfer);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(Edit("rank 3:on-time").kind, WhatIfEdit::Kind::kOnTime);
  EXPECT_EQ(Edit("launch-gaps:0").kind, WhatIfEdit::Kind::kLaunchGaps);
  EXPECT_EQ(Edit("Attention*:overlap").kind, WhatIfEdit::Kind::kOverlap);
  e = Edit("TriangleMultiplication*:gemm*1/6");
  EXPECT_EQ(e.kind, WhatIfEdit::Kind::kGemm);
  EXPECT_DOUBLE_EQ(e.factor, 1.0 / 6);
}

TEST(WhatIfParse, ErrorsSayTheForms) {
  for (const char* bad : {"compute*2", "X:compute*two", "X:compute*1/0", "rank x:on-time", "X:faster", "rank 1"}) {
    auto e = ParseWhatIf(bad);
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.status().message().find("'rank R:on-time'"), std::string::npos) << e.status().message();
  }
}

TEST(GlobMatch, StarsAndQuestionMarks) {
  EXPECT_TRUE(GlobMatch("Tri*", "TriangleMultiplicationOutgoing.forward"));
  EXPECT_TRUE(GlobMatch("*Outgoing*", "TriangleMultiplicationOutgoing.forward"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("a?c", "abc"));
  EXPECT_FALSE(GlobMatch("a?c", "ac"));
  EXPECT_FALSE(GlobMatch("Tri", "Triangle"));
  EXPECT_TRUE(GlobMatch("*a*b", "xaxxb"));
}

}  // namespace
}  // namespace cpprof::analysis
