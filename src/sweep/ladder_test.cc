// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "sweep/ladder.h"

#include <gtest/gtest.h>

namespace cpprof::sweep {
namespace {

model::SweepPoint P(const std::string& grid, int n, const std::string& status, const std::string& origin = "ladder") {
  model::SweepPoint p;
  p.grid = grid;
  p.n = n;
  p.status = status;
  p.origin = origin;
  return p;
}

model::SweepSpec Spec(std::vector<int> sizes, std::vector<std::string> grids) {
  model::SweepSpec s;
  s.sizes = std::move(sizes);
  s.grids = std::move(grids);
  return s;
}

std::string Str(const std::optional<NextPoint>& n) {
  return n ? n->grid + " " + std::to_string(n->n) + " " + n->origin : "done";
}

TEST(SweepMatrix, SizesAndGrids) {
  auto s = ParseSizes("2048, 512,1024,512");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (std::vector<int>{512, 1024, 2048}));
  EXPECT_EQ(ParseSizes("512,,1024").status().message(),
            "--n: '' is not a positive size. Give token counts separated by commas, e.g. --n 512,1024,2048");
  EXPECT_FALSE(ParseSizes("0").ok());
  auto g = ParseGrids("1x2,1x1,1x2,2x2");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(*g, (std::vector<std::string>{"1x2", "1x1", "2x2"}));
  EXPECT_FALSE(ParseGrids("2").ok());
  EXPECT_FALSE(ParseGrids("0x2").ok());
  EXPECT_FALSE(ParseGrids("1x2x3").ok());
}

TEST(SweepMatrix, TemplateFillsThePlaceholders) {
  TemplateValues v{1024, 1, 2, 5, 1, "bf16"};
  auto a = ExpandTemplate(
      "-m pkg.run --n-token {n} --grid {grid} --cp0 {cp0} --cp1 {cp1} --ranks={ranks} "
      "--iters {iters} --warmup {warmup} --dtype {dtype} --name 'a b {n}'",
      v);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(*a, (std::vector<std::string>{"-m", "pkg.run", "--n-token", "1024", "--grid", "1x2", "--cp0", "1", "--cp1",
                                          "2", "--ranks=2", "--iters", "5", "--warmup", "1", "--dtype", "bf16",
                                          "--name", "a b 1024"}));
  EXPECT_EQ(ExpandTemplate("-m x --n {n} {nn}", v).status().message(),
            "--arg-template: unknown placeholder '{nn}'. Use {n}, {grid}, {cp0}, {cp1}, {ranks}, {iters}, {warmup}, "
            "{dtype}");
  EXPECT_NE(ExpandTemplate("-m x --size 5", v).status().message().find("has no {n}"), std::string::npos);
  EXPECT_NE(ExpandTemplate("-m x --n {n} 'open", v).status().message().find("unclosed"), std::string::npos);
  EXPECT_NE(ExpandTemplate("--n {n}", v).status().message().find("must start with '-m MODULE'"), std::string::npos);
  v.dtype = "";
  EXPECT_NE(ExpandTemplate("-m x --n {n} --dtype {dtype}", v).status().message().find("give --dtype"),
            std::string::npos);
}

TEST(SweepLadder, EachGridsSizesUpwardsThenDone) {
  model::SweepSpec s = Spec({512, 1024}, {"1x1", "1x2"});
  std::vector<model::SweepPoint> pts;
  EXPECT_EQ(Str(Next(s, pts)), "1x1 512 ladder");
  pts.push_back(P("1x1", 512, "ok"));
  EXPECT_EQ(Str(Next(s, pts)), "1x1 1024 ladder");
  pts.push_back(P("1x1", 1024, "failed"));  // a failure that is not OOM does not stop the ladder
  EXPECT_EQ(Str(Next(s, pts)), "1x2 512 ladder");
  pts.push_back(P("1x2", 512, "ok"));
  pts.push_back(P("1x2", 1024, "ok"));
  EXPECT_EQ(Str(Next(s, pts)), "done");
}

TEST(SweepLadder, TheFirstOutOfMemoryStopsTheGridsLadder) {
  model::SweepSpec s = Spec({512, 1024, 2048, 4096}, {"1x1", "1x2"});
  std::vector<model::SweepPoint> pts = {P("1x1", 512, "ok"), P("1x1", 1024, "oom")};
  EXPECT_EQ(Str(Next(s, pts)), "1x2 512 ladder");
  pts.push_back(P("1x2", 512, "timeout"));  // a timeout stops it too
  EXPECT_EQ(Str(Next(s, pts)), "done");
  AddSkipped(s, pts);
  SortPoints(s, pts);
  ASSERT_EQ(pts.size(), 8u);
  EXPECT_EQ(pts[2].n, 2048);
  EXPECT_EQ(pts[2].status, "skipped");
  EXPECT_EQ(pts[2].detail, "not run: N=1024 on 1x1 ran out of GPU memory");
  EXPECT_EQ(pts[5].detail, "not run: N=512 on 1x2 passed --timeout");
  auto fits = Fits(s, pts);
  ASSERT_EQ(fits.size(), 2u);
  EXPECT_EQ(fits[0].largest_ok, 512);
  EXPECT_EQ(fits[0].first_oom, 1024);
  EXPECT_EQ(fits[0].how, "the ladder: the last size that ran before the first out-of-memory");
  EXPECT_EQ(fits[1].largest_ok, 0);
  EXPECT_EQ(fits[1].how, "no size ran");
}

TEST(SweepLadder, LargestBisectsToTheStep) {
  model::SweepSpec s = Spec({512, 1024, 2048}, {"1x1"});
  s.largest = true;
  s.step = 256;
  std::vector<model::SweepPoint> pts = {P("1x1", 512, "ok"), P("1x1", 1024, "ok"), P("1x1", 2048, "oom")};
  EXPECT_EQ(Str(Next(s, pts)), "1x1 1536 bisection");
  pts.push_back(P("1x1", 1536, "ok", "bisection"));
  EXPECT_EQ(Str(Next(s, pts)), "1x1 1792 bisection");
  pts.push_back(P("1x1", 1792, "oom", "bisection"));
  EXPECT_EQ(Str(Next(s, pts)), "done");  // 1536 .. 1792 is one step
  auto fits = Fits(s, pts);
  EXPECT_EQ(fits[0].largest_ok, 1536);
  EXPECT_EQ(fits[0].first_oom, 1792);
  EXPECT_EQ(fits[0].how, "bisection between the last fit and the first out-of-memory to a step of 256");
  // A bisection point that fails otherwise ends the search there.
  std::vector<model::SweepPoint> q = {P("1x1", 512, "ok"), P("1x1", 1024, "ok"), P("1x1", 2048, "oom"),
                                      P("1x1", 1536, "failed", "bisection")};
  EXPECT_EQ(Str(Next(s, q)), "done");
  // Without --largest the ladder's answer stands.
  s.largest = false;
  EXPECT_EQ(Str(Next(s, pts)), "done");
}

TEST(SweepLadder, LargestDoublesPastTheLadderUpToMaxN) {
  model::SweepSpec s = Spec({512, 1024}, {"1x1"});
  s.largest = true;
  s.step = 256;
  std::vector<model::SweepPoint> pts = {P("1x1", 512, "ok"), P("1x1", 1024, "ok")};
  EXPECT_EQ(Str(Next(s, pts)), "done") << "no doubling without --max-n";
  s.max_n = 3000;
  EXPECT_EQ(Str(Next(s, pts)), "1x1 2048 doubling");
  pts.push_back(P("1x1", 2048, "ok", "doubling"));
  EXPECT_EQ(Str(Next(s, pts)), "1x1 3000 doubling");
  pts.push_back(P("1x1", 3000, "oom", "doubling"));
  EXPECT_EQ(Str(Next(s, pts)), "1x1 2304 bisection");
  EXPECT_EQ(Fits(s, pts)[0].first_oom, 3000);
}

TEST(SweepLadder, TheMemorysGrowthPredictsWhereItFillsTheGpu) {
  model::SweepSpec s = Spec({512, 1024, 2048}, {"1x1"});
  std::vector<model::SweepPoint> pts = {P("1x1", 512, "ok"), P("1x1", 1024, "ok"), P("1x1", 2048, "ok")};
  const int64_t gib = 1LL << 30;
  pts[0].peak_mem_bytes = {gib / 2};
  pts[1].peak_mem_bytes = {2 * gib};
  pts[2].peak_mem_bytes = {8 * gib, 7 * gib};  // the largest rank counts
  pts[2].peak_mem_kind = "cuda_max_allocated";
  auto f = Fits(s, pts, 128 * gib);
  EXPECT_EQ(f[0].predicted_n, 8192);  // N^2 from 2048: 8 GiB x (8192 / 2048)^2 = 128 GiB
  EXPECT_EQ(f[0].predicted_how,
            "the largest rank's peak memory (cuda_max_allocated) grows as N^2.00 between N=1024 and N=2048: it would "
            "reach the GPU's 128.0 GiB at N = 8192 (an extrapolation, not a run)");
  EXPECT_EQ(Fits(s, pts)[0].predicted_n, 0) << "capacity unknown";
  pts[2].peak_mem_bytes = {2 * gib};
  EXPECT_EQ(Fits(s, pts, 128 * gib)[0].predicted_n, 0) << "not growing";
}

TEST(SweepLadder, OutOfMemoryIsToldFromTheOutput) {
  EXPECT_TRUE(LooksLikeOutOfMemory("", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB"));
  EXPECT_TRUE(LooksLikeOutOfMemory("", "RuntimeError: CUDA error: out of memory"));
  EXPECT_TRUE(LooksLikeOutOfMemory("", "CUDA_ERROR_OUT_OF_MEMORY"));
  EXPECT_TRUE(LooksLikeOutOfMemory("[rank0]: torch.cuda.OutOfMemoryError: ...", ""));
  EXPECT_FALSE(LooksLikeOutOfMemory("", "RuntimeError: NCCL error: unhandled system error"));
}

TEST(SweepLadder, SteadyIsTheMedianOfTheSlowestRankPerIteration) {
  std::vector<IterLine> lines = {{0, 0, true, 9.0},  {1, 0, true, 8.0},  {0, 1, false, 1.0}, {1, 1, false, 1.5},
                                 {0, 2, false, 3.0}, {1, 2, false, 2.0}, {0, 3, false, 2.5}, {1, 3, false, 0.5}};
  SteadyTimes t = Steady(lines);
  EXPECT_EQ(t.warmup, 1);
  EXPECT_EQ(t.iter_s, (std::vector<double>{1.5, 3.0, 2.5}));
  EXPECT_DOUBLE_EQ(t.median_s, 2.5);
  lines.push_back({0, 4, false, 4.0});
  EXPECT_DOUBLE_EQ(Steady(lines).median_s, 2.75);  // even count: the mean of the middle two
  EXPECT_DOUBLE_EQ(Steady({}).median_s, 0);
}

TEST(SweepLadder, SpecChangeNamesWhatDiffers) {
  model::SweepSpec a = Spec({512}, {"1x1"}), b = a;
  EXPECT_EQ(SpecChange(a, b), "");
  b.grids = {"1x1", "1x2"};
  b.dtype = "bf16";
  EXPECT_EQ(SpecChange(a, b), "--dtype was '', now 'bf16'; --grids was '1x1', now '1x1,1x2'");
}

}  // namespace
}  // namespace cpprof::sweep
