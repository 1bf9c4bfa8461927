// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/sweep_plots.h"

#include <gtest/gtest.h>

#include <cmath>

namespace cpprof::render {
namespace {

model::SweepPoint Pt(const std::string& grid, int n, double median_s, double tri_ms, double pt_ms, double exposed,
                     int64_t peak) {
  model::SweepPoint p;
  p.grid = grid;
  p.n = n;
  p.status = "ok";
  p.capture_status = "ok";
  p.median_iter_s = median_s;
  p.exposed_transfer_share = exposed;
  p.peak_mem_bytes = {peak, peak - 1};
  p.peak_mem_kind = "cuda_max_allocated";
  model::SweepModule g{"trunk", "trunk", 0, true, false, true, tri_ms + pt_ms, 0, 0, "", -1, -1};
  model::SweepModule t{"TriangleMultiplicationOutgoing.forward",
                       "trunk/TriangleMultiplicationOutgoing.forward",
                       1,
                       false,
                       true,
                       true,
                       tri_ms,
                       0,
                       0,
                       "TriangleMultiplicationOutgoing",
                       50,
                       5};
  model::SweepModule q{"PairTransition.forward",
                       "trunk/PairTransition.forward",
                       1,
                       false,
                       true,
                       false,
                       pt_ms,
                       0,
                       0,
                       "PairTransition",
                       20,
                       2};
  p.modules = {g, t, q};
  return p;
}

model::SweepResult Result() {
  model::SweepResult r;
  r.spec.sizes = {512, 1024, 2048};
  r.spec.grids = {"1x2", "1x1"};
  r.machine.gpu_name = "NVIDIA H200";
  r.machine.gpu_memory_bytes = 143771LL * 1024 * 1024;
  r.points = {Pt("1x1", 512, 0.010, 4, 1, 0, 1LL << 30), Pt("1x1", 1024, 0.080, 32, 4, 0, 4LL << 30),
              Pt("1x2", 512, 0.008, 2, 0.5, 0.10, 1LL << 29), Pt("1x2", 1024, 0.050, 16, 2, 0.05, 2LL << 30)};
  model::SweepPoint oom;
  oom.grid = "1x1";
  oom.n = 2048;
  oom.status = "oom";
  r.points.push_back(oom);
  model::SweepFit a, b;
  a.grid = "1x2";
  a.largest_ok = 1024;
  b.grid = "1x1";
  b.largest_ok = 1024;
  b.first_oom = 2048;
  r.fits = {a, b};
  return r;
}

const Plot& Find(const std::vector<Plot>& plots, const std::string& id) {
  for (const auto& p : plots) {
    if (p.id == id) return p;
  }
  static Plot none;
  ADD_FAILURE() << "no plot " << id;
  return none;
}

const PlotSeries& Series(const Plot& p, const std::string& name) {
  for (const auto& s : p.series) {
    if (s.name == name) return s;
  }
  static PlotSeries none;
  ADD_FAILURE() << "no series " << name << " in " << p.id;
  return none;
}

TEST(SweepPlots, EveryPlotIsThereInOrder) {
  std::vector<std::string> ids;
  for (const auto& p : SweepPlots(Result())) ids.push_back(p.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"plot-module-time-1x2", "plot-module-time-1x1", "plot-speedup",
                                           "plot-efficiency", "plot-exposed-transfer", "plot-memory", "plot-largest"}));
}

TEST(SweepPlots, ModuleTimesWithTheModelsSlopes) {
  auto plots = SweepPlots(Result());
  const Plot& p = Find(plots, "plot-module-time-1x1");
  EXPECT_TRUE(p.log_x && p.log_y);
  // The modules the cost model knows (the group row is not drawn), largest first.
  EXPECT_EQ(PlotModules(Result(), "1x1"),
            (std::vector<std::string>{"trunk/TriangleMultiplicationOutgoing.forward", "trunk/PairTransition.forward"}));
  const PlotSeries& tri = Series(p, "trunk/TriangleMultiplicationOutgoing.forward");
  EXPECT_EQ(tri.xy, (std::vector<std::pair<double, double>>{{512, 4}, {1024, 32}}));
  const PlotSeries& iter = Series(p, "whole iteration (no profiler)");
  EXPECT_EQ(iter.xy, (std::vector<std::pair<double, double>>{{512, 10}, {1024, 80}}));  // the OOM point is left out
  // N^3 and N^2 through TriMul's first point, to the largest N drawn.
  const PlotSeries& n3 = Series(p, "N^3 slope (the model's triangle products)");
  EXPECT_TRUE(n3.reference);
  EXPECT_EQ(n3.xy, (std::vector<std::pair<double, double>>{{512, 4}, {1024, 32}}));
  const PlotSeries& n2 = Series(p, "N^2 slope (the model's pair-wise work)");
  EXPECT_EQ(n2.xy, (std::vector<std::pair<double, double>>{{512, 4}, {1024, 16}}));
}

TEST(SweepPlots, SpeedupAndEfficiencyAgainstTheOneByOneGrid) {
  auto plots = SweepPlots(Result());
  const Plot& s = Find(plots, "plot-speedup");
  EXPECT_EQ(s.categories, (std::vector<std::string>{"1x1 (1)", "1x2 (2)"})) << "by ranks";
  const PlotSeries& n1024 = Series(s, "N=1024");
  ASSERT_EQ(n1024.xy.size(), 2u);
  EXPECT_DOUBLE_EQ(n1024.xy[0].second, 1.0);
  EXPECT_DOUBLE_EQ(n1024.xy[1].second, 0.080 / 0.050);
  const Plot& e = Find(plots, "plot-efficiency");
  EXPECT_DOUBLE_EQ(Series(e, "N=1024").xy[1].second, 100 * 0.080 / 0.050 / 2);
  EXPECT_DOUBLE_EQ(Series(e, "N=512").xy[1].second, 100 * 0.010 / 0.008 / 2);
  // One grid only: the plots are there, with a note instead of lines.
  model::SweepResult one = Result();
  one.spec.grids = {"1x1"};
  std::vector<Plot> one_plots = SweepPlots(one);
  const Plot& s1 = Find(one_plots, "plot-speedup");
  EXPECT_TRUE(s1.series.empty());
  EXPECT_EQ(s1.note, "one grid only (1x1): no speedup to draw; sweep several, e.g. --grids 1x1,1x2,2x2");
}

TEST(SweepPlots, TransferMemoryAndLargest) {
  auto plots = SweepPlots(Result());
  const Plot& x = Find(plots, "plot-exposed-transfer");
  EXPECT_EQ(Series(x, "1x2").xy, (std::vector<std::pair<double, double>>{{512, 10}, {1024, 5}}));
  const Plot& m = Find(plots, "plot-memory");
  EXPECT_EQ(Series(m, "1x1 (largest rank)").xy, (std::vector<std::pair<double, double>>{{512, 1}, {1024, 4}}));
  EXPECT_NEAR(m.hline, 140.4, 0.01);
  EXPECT_EQ(m.hline_label, "NVIDIA H200 capacity 140.4 GiB");
  const Plot& f = Find(plots, "plot-largest");
  EXPECT_TRUE(f.bars);
  EXPECT_EQ(f.categories, (std::vector<std::string>{"1x2", "1x1"}));
  EXPECT_EQ(Series(f, "largest N that ran").xy, (std::vector<std::pair<double, double>>{{0, 1024}, {1, 1024}}));
  EXPECT_EQ(f.note, "1x2: N=1024; 1x1: N=1024 (N=2048 ran out of memory)");
  model::SweepResult p = Result();
  p.fits[0].predicted_n = 4096;
  std::vector<Plot> pp = SweepPlots(p);
  EXPECT_EQ(Find(pp, "plot-largest").note,
            "1x2: N=1024, memory would fill the GPU at N = 4096; 1x1: N=1024 (N=2048 ran out of memory)");
}

TEST(SweepPlots, SvgDrawsEverySeriesAndTheCapacity) {
  auto plots = SweepPlots(Result());
  std::string svg = PlotSvg(Find(plots, "plot-memory"));
  EXPECT_NE(svg.find("viewBox=\"0 0 640 320\""), std::string::npos);
  EXPECT_NE(svg.find("data-series=\"1x1 (largest rank)\""), std::string::npos);
  EXPECT_NE(svg.find("data-hline=\"1\""), std::string::npos);
  std::string t = PlotSvg(Find(plots, "plot-module-time-1x1"));
  EXPECT_NE(t.find("stroke-dasharray=\"4 4\""), std::string::npos) << "the reference slopes are dashed";
  EXPECT_EQ(t.find("nan"), std::string::npos);
  EXPECT_EQ(t.find("inf"), std::string::npos);
  // A plot with nothing to draw is still a valid, empty frame.
  Plot empty;
  empty.title = "x";
  empty.log_x = empty.log_y = true;
  std::string e = PlotSvg(empty);
  EXPECT_EQ(e.find("nan"), std::string::npos);
  EXPECT_NE(e.find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace cpprof::render
