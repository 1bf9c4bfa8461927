// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The plots of sweep.html: their data (pure, from model::SweepResult, unit-tested) and one inline
// SVG per plot (no script, nothing fetched). Each plot says in a note when it has nothing to draw
// (one grid only: no speedup), so every plot is always present.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/sweep.h"

namespace cpprof::render {

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> xy;  // x ascending (categorical plots: x = category index)
  bool reference = false;                     // a dashed reference line (the model's N^3 / N^2 slopes)
};

struct Plot {
  std::string id;  // the figure's element id ("plot-module-time")
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;
  bool bars = false;                    // categorical bars (largest N per grid)
  std::vector<std::string> categories;  // categorical x labels (x = index)
  std::vector<PlotSeries> series;
  double hline = 0;  // a horizontal line (the device's memory), 0: none
  std::string hline_label;
  std::string note;  // shown under the plot; when series is empty, why
};

// One plot of time per module vs N per grid (log-log, the model's N^3 and N^2 slopes through the
// largest module's first point), CP speedup and parallel efficiency vs grid (per N, against the
// 1x1 grid or, without one, the grid with the fewest ranks), exposed transfer share vs N, peak
// memory per rank vs N with the device's capacity, largest N per grid.
std::vector<Plot> SweepPlots(const model::SweepResult& r);

// The modules a time-vs-N plot draws for one grid: those the cost model knows (else the leaf
// rows), the `max_modules` largest at the largest N, then by name.
std::vector<std::string> PlotModules(const model::SweepResult& r, const std::string& grid, size_t max_modules = 6);

std::string PlotSvg(const Plot& p);

// A module path shortened for a legend or a table row: its group and its own name
// ("trunk/TriangleMultiplicationOutgoing.forward" for
// "trunk/Trunk.forward/.../TriangleMultiplicationOutgoing.forward").
std::string ShortModulePath(const std::string& path);

}  // namespace cpprof::render
