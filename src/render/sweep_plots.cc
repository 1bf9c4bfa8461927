// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/sweep_plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "render/html_escape.h"

namespace cpprof::render {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

bool Ran(const model::SweepPoint& p) { return p.status == "ok"; }
bool Captured(const model::SweepPoint& p) { return Ran(p) && p.capture_status == "ok"; }

const model::SweepModule* FindModule(const model::SweepPoint& p, const std::string& path) {
  for (const auto& m : p.modules) {
    if (m.path == path) return &m;
  }
  return nullptr;
}

int Ranks(const std::string& grid) {
  size_t x = grid.find('x');
  if (x == std::string::npos) return 1;
  return std::max(1, std::atoi(grid.substr(0, x).c_str())) * std::max(1, std::atoi(grid.substr(x + 1).c_str()));
}

std::string Esc(const std::string& s) { return EscapeHtml(s); }

std::string Num(double v) { return fmt::format("{:.4g}", v); }

}  // namespace

std::string ShortModulePath(const std::string& path) {
  size_t first = path.find('/'), last = path.rfind('/');
  if (first == std::string::npos) return path;
  return path.substr(0, first) + "/" + path.substr(last + 1);
}

std::vector<std::string> PlotModules(const model::SweepResult& r, const std::string& grid, size_t max_modules) {
  // path -> (name, time at the largest N that has it, that N)
  std::map<std::string, std::pair<int, double>> at_largest;
  bool any_cost = false;
  for (const auto& p : r.points) {
    if (p.grid != grid || !Captured(p)) continue;
    for (const auto& m : p.modules) any_cost = any_cost || !m.cost_key.empty();
  }
  for (const auto& p : r.points) {
    if (p.grid != grid || !Captured(p)) continue;
    for (const auto& m : p.modules) {
      bool pick = any_cost ? !m.cost_key.empty() : (m.leaf && !m.is_group && m.name.front() != '[');
      if (!pick || m.ms <= 0) continue;
      auto& e = at_largest[m.path];
      if (p.n >= e.first) e = {p.n, m.ms};
    }
  }
  std::vector<std::pair<std::string, std::pair<int, double>>> v(at_largest.begin(), at_largest.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    if (a.second.first != b.second.first) return a.second.first > b.second.first;
    if (a.second.second != b.second.second) return a.second.second > b.second.second;
    return a.first < b.first;
  });
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size() && i < max_modules; ++i) out.push_back(v[i].first);
  return out;
}

namespace {

// The series of one module path on grid: its time at each N captured.
PlotSeries ModuleSeries(const model::SweepResult& r, const std::string& grid, const std::string& path) {
  PlotSeries s;
  s.name = ShortModulePath(path);
  for (const auto& pt : r.points) {
    if (pt.grid != grid || !Captured(pt)) continue;
    if (const auto* m = FindModule(pt, path); m && m->ms > 0) s.xy.push_back({pt.n, m->ms});
  }
  return s;
}

// The model's slopes (N^3, N^2) through the first point of the series that is largest there, out
// to the largest N of p's series and iter's.
void AddSlopes(const PlotSeries& iter, Plot& p) {
  const PlotSeries* anchor = nullptr;
  for (const auto& s : p.series) {
    if (!anchor || s.xy.front().second > anchor->xy.front().second) anchor = &s;
  }
  double x_max = 0;
  for (const auto& s : p.series) x_max = std::max(x_max, s.xy.back().first);
  if (!iter.xy.empty()) x_max = std::max(x_max, iter.xy.back().first);
  if (anchor && x_max > anchor->xy.front().first) {
    auto [x0, y0] = anchor->xy.front();
    for (int k : {3, 2}) {
      PlotSeries ref;
      ref.name = fmt::format("N^{} slope (the model's {})", k, k == 3 ? "triangle products" : "pair-wise work");
      ref.reference = true;
      ref.xy = {{x0, y0}, {x_max, y0 * std::pow(x_max / x0, k)}};
      p.series.push_back(ref);
    }
  }
}

// Time per module vs N on one grid (log-log), with the whole iteration and the model's slopes.
Plot ModuleTimePlot(const model::SweepResult& r, const std::string& grid) {
  Plot p;
  p.id = "plot-module-time-" + grid;
  p.title = fmt::format("Time per module vs N, grid {} (log-log)", grid);
  p.x_label = "N (tokens)";
  p.y_label = "ms per iteration";
  p.log_x = p.log_y = true;
  for (const auto& path : PlotModules(r, grid)) {
    PlotSeries s = ModuleSeries(r, grid, path);
    if (!s.xy.empty()) p.series.push_back(s);
  }
  PlotSeries iter;
  iter.name = "whole iteration (no profiler)";
  for (const auto& pt : r.points) {
    if (pt.grid == grid && Ran(pt) && pt.median_iter_s > 0) iter.xy.push_back({pt.n, pt.median_iter_s * 1000});
  }
  AddSlopes(iter, p);
  if (!iter.xy.empty()) p.series.insert(p.series.begin(), iter);
  if (p.series.empty()) {
    p.note = fmt::format("no point of grid {} ran with a capture: nothing to draw", grid);
  } else {
    p.note =
        "module times are GPU busy time per steady iteration from the nsys capture (mean over ranks); the "
        "whole iteration is the median of the timing run without the profiler";
  }
  return p;
}

// Each size's speedup and efficiency series over the grids (in order of ranks) against base: the
// sizes that ran on base and another grid.
void ScalingSeries(const model::SweepResult& r, const std::vector<std::string>& grids, const std::string& base,
                   Plot& speed, Plot& eff) {
  std::map<std::pair<std::string, int>, double> t;  // (grid, N) -> median s
  for (const auto& pt : r.points) {
    if (Ran(pt) && pt.median_iter_s > 0) t[{pt.grid, pt.n}] = pt.median_iter_s;
  }
  for (int n : r.spec.sizes) {
    auto b = t.find({base, n});
    if (b == t.end()) continue;
    PlotSeries s, e;
    s.name = e.name = fmt::format("N={}", n);
    for (size_t i = 0; i < grids.size(); ++i) {
      auto g = t.find({grids[i], n});
      if (g == t.end()) continue;
      double sp = b->second / g->second;
      s.xy.push_back({static_cast<double>(i), sp});
      e.xy.push_back({static_cast<double>(i), 100 * sp * Ranks(base) / Ranks(grids[i])});
    }
    if (s.xy.size() >= 2) {
      speed.series.push_back(s);
      eff.series.push_back(e);
    }
  }
}

// CP speedup and parallel efficiency vs grid, against 1x1 (else the grid with the fewest ranks).
void ScalingPlots(const model::SweepResult& r, std::vector<Plot>& plots) {
  std::vector<std::string> grids = r.spec.grids;
  std::stable_sort(grids.begin(), grids.end(),
                   [](const std::string& a, const std::string& b) { return Ranks(a) < Ranks(b); });
  std::string base = std::find(grids.begin(), grids.end(), "1x1") != grids.end() ? "1x1"
                     : grids.empty()                                             ? ""
                                                                                 : grids[0];
  Plot speed, eff;
  speed.id = "plot-speedup";
  speed.title = fmt::format("CP speedup vs grid (against {})", base);
  speed.y_label = "speedup";
  eff.id = "plot-efficiency";
  eff.title = fmt::format("Parallel efficiency vs grid (against {})", base);
  eff.y_label = "efficiency %";
  for (Plot* p : {&speed, &eff}) {
    p->x_label = "grid (ranks)";
    for (const auto& g : grids) p->categories.push_back(fmt::format("{} ({})", g, Ranks(g)));
  }
  if (grids.size() >= 2) ScalingSeries(r, grids, base, speed, eff);
  if (grids.size() < 2) {
    speed.note = eff.note =
        fmt::format("one grid only ({}): no speedup to draw; sweep several, e.g. --grids 1x1,1x2,2x2", base);
  } else if (speed.series.empty()) {
    speed.note = eff.note = fmt::format("no size ran on {} and another grid: no speedup to draw", base);
  } else {
    speed.note =
        fmt::format("speedup = the median iteration on {} / on the grid (timing runs without the profiler)", base);
    eff.note = fmt::format("efficiency = speedup x {} ranks / the grid's ranks; 100% is perfect scaling", Ranks(base));
  }
  plots.push_back(speed);
  plots.push_back(eff);
}

// Exposed transfer share vs N, one series per grid.
Plot ExposedTransferPlot(const model::SweepResult& r) {
  Plot x;
  x.id = "plot-exposed-transfer";
  x.title = "Exposed transfer share vs N";
  x.x_label = "N (tokens)";
  x.y_label = "% of the window";
  x.log_x = true;
  for (const auto& g : r.spec.grids) {
    PlotSeries s;
    s.name = g;
    for (const auto& pt : r.points) {
      if (pt.grid == g && Captured(pt) && pt.exposed_transfer_share >= 0) {
        s.xy.push_back({pt.n, 100 * pt.exposed_transfer_share});
      }
    }
    if (!s.xy.empty()) x.series.push_back(s);
  }
  x.note = x.series.empty() ? "no point ran with a capture: nothing to draw"
                            : "communication-only time during which data moved, mean over ranks, from the capture";
  return x;
}

// The largest rank's peak memory at each N of grid g (the timing run's, else the capture's); the
// kinds of peak used go to `kinds`.
PlotSeries MemorySeries(const model::SweepResult& r, const std::string& g, std::set<std::string>& kinds) {
  PlotSeries s;
  s.name = g + " (largest rank)";
  for (const auto& pt : r.points) {
    if (pt.grid != g || !Ran(pt)) continue;
    int64_t peak = -1;
    for (int64_t b : pt.peak_mem_bytes) peak = std::max(peak, b);
    if (peak < 0) {
      for (int64_t b : pt.capture_peak_mem_bytes) peak = std::max(peak, b);
      if (peak >= 0) kinds.insert("the capture's driver-level peak");
    } else if (!pt.peak_mem_kind.empty()) {
      kinds.insert(pt.peak_mem_kind);
    }
    if (peak >= 0) s.xy.push_back({pt.n, peak / kGiB});
  }
  return s;
}

// Peak memory per rank vs N, one series per grid, with the GPU's capacity.
Plot MemoryPlot(const model::SweepResult& r) {
  Plot m;
  m.id = "plot-memory";
  m.title = "Peak memory per rank vs N";
  m.x_label = "N (tokens)";
  m.y_label = "GiB";
  m.log_x = true;
  std::set<std::string> kinds;
  for (const auto& g : r.spec.grids) {
    PlotSeries s = MemorySeries(r, g, kinds);
    if (!s.xy.empty()) m.series.push_back(s);
  }
  if (r.machine.gpu_memory_bytes > 0) {
    m.hline = r.machine.gpu_memory_bytes / kGiB;
    m.hline_label =
        fmt::format("{} capacity {:.1f} GiB", r.machine.gpu_name.empty() ? "GPU" : r.machine.gpu_name, m.hline);
  }
  if (m.series.empty()) {
    m.note = "no point printed its peak memory: nothing to draw";
  } else {
    std::string k;
    for (const auto& s : kinds) k += (k.empty() ? "" : ", ") + s;
    m.note = fmt::format("the largest rank's peak per point ({})", k.empty() ? "source unknown" : k);
  }
  return m;
}

// The largest N that ran per grid (bars), with what ran out of memory and the predicted fill.
Plot LargestNPlot(const model::SweepResult& r) {
  Plot f;
  f.id = "plot-largest";
  f.title = "Largest N that fits per grid";
  f.x_label = "grid";
  f.y_label = "N (tokens)";
  f.bars = true;
  PlotSeries fit;
  fit.name = "largest N that ran";
  std::string notes;
  for (size_t i = 0; i < r.fits.size(); ++i) {
    f.categories.push_back(r.fits[i].grid);
    if (r.fits[i].largest_ok > 0) fit.xy.push_back({static_cast<double>(i), static_cast<double>(r.fits[i].largest_ok)});
    notes += fmt::format(
        "{}{}: {}{}{}", notes.empty() ? "" : "; ", r.fits[i].grid,
        r.fits[i].largest_ok ? fmt::format("N={}", r.fits[i].largest_ok) : std::string("none"),
        r.fits[i].first_oom ? fmt::format(" (N={} ran out of memory)", r.fits[i].first_oom) : "",
        r.fits[i].predicted_n ? fmt::format(", memory would fill the GPU at N = {}", r.fits[i].predicted_n) : "");
  }
  if (!fit.xy.empty()) f.series.push_back(fit);
  f.note = f.series.empty() ? "no size ran: nothing to draw" : notes;
  return f;
}

}  // namespace

std::vector<Plot> SweepPlots(const model::SweepResult& r) {
  std::vector<Plot> plots;
  for (const auto& grid : r.spec.grids) plots.push_back(ModuleTimePlot(r, grid));
  ScalingPlots(r, plots);
  plots.push_back(ExposedTransferPlot(r));
  plots.push_back(MemoryPlot(r));
  plots.push_back(LargestNPlot(r));
  return plots;
}

namespace {

constexpr double kW = 640, kH = 320, kL = 64, kR = 16, kT = 14, kB = 46;
// The plot area: x from kX0 to kX1, y from kY0 (its bottom) up to kY1.
constexpr double kX0 = kL, kX1 = kW - kR, kY0 = kH - kB, kY1 = kT;
const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double Map(double v, double a, double b) const {
    double t = log ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : (v - lo) / (hi - lo);
    return a + t * (b - a);
  }
};

std::vector<double> LinearTicks(double lo, double hi) {
  double span = hi - lo;
  if (span <= 0) return {lo};
  double raw = span / 5, mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    t.push_back(std::abs(v) < 1e-12 ? 0 : v);
  return t;
}

std::vector<double> LogTicks(double lo, double hi) {
  std::vector<double> t;
  if (!(lo > 0) || !std::isfinite(lo) || !std::isfinite(hi)) return t;
  int a = static_cast<int>(std::floor(std::log10(lo))), b = static_cast<int>(std::ceil(std::log10(hi)));
  bool fine = b - a <= 2;
  for (int e = a; e <= b; ++e) {
    for (double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      double v = m * std::pow(10, e);
      if (v >= lo && v <= hi) t.push_back(v);
    }
  }
  return t;
}

// The axes' ranges: categories, else the series' points (and the capacity line) with a margin.
void ChooseAxes(const Plot& p, Axis& ax, Axis& ay) {
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const auto& se : p.series) {
    for (auto [x, y] : se.xy) {
      if ((p.log_x && x <= 0) || (p.log_y && y <= 0)) continue;
      xmin = std::min(xmin, x), xmax = std::max(xmax, x), ymin = std::min(ymin, y), ymax = std::max(ymax, y);
    }
  }
  if (p.hline > 0) ymin = std::min(ymin, p.hline), ymax = std::max(ymax, p.hline);
  bool categorical = !p.categories.empty();
  ax.log = p.log_x && !categorical;
  ay.log = p.log_y;
  if (categorical) {
    ax.lo = -0.5, ax.hi = static_cast<double>(p.categories.size()) - 0.5;
  } else if (xmin > xmax) {
    ax.lo = 1, ax.hi = 2;
  } else if (ax.log) {
    ax.lo = xmin / 1.2, ax.hi = xmax * 1.2;
  } else {
    double pad = xmax > xmin ? (xmax - xmin) * 0.05 : 1;
    ax.lo = xmin - pad, ax.hi = xmax + pad;
  }
  if (ymin > ymax) {
    ay.lo = ay.log ? 1 : 0, ay.hi = ay.log ? 10 : 1;
  } else if (ay.log) {
    ay.lo = ymin / 1.5, ay.hi = ymax * 1.5;
  } else {
    ay.lo = std::min(0.0, ymin), ay.hi = ymax > 0 ? ymax * 1.12 : 1;
  }
}

// The x ticks: each category, else the series' x values (reference lines left out), at most
// about 8 of them.
std::vector<std::pair<double, std::string>> XTicks(const Plot& p) {
  std::vector<std::pair<double, std::string>> xt;
  if (!p.categories.empty()) {
    for (size_t i = 0; i < p.categories.size(); ++i) xt.push_back({static_cast<double>(i), p.categories[i]});
    return xt;
  }
  std::set<double> xs;
  for (const auto& se : p.series) {
    if (se.reference) continue;
    for (auto [x, y] : se.xy) xs.insert(x);
  }
  size_t every = xs.size() > 8 ? (xs.size() + 7) / 8 : 1, i = 0;
  for (double x : xs) {
    if (i++ % every == 0) xt.push_back({x, Num(x)});
  }
  return xt;
}

// The frame: the plot area, its grid lines with their ticks' labels, the axes' labels and the
// capacity line.
std::string FrameSvg(const Plot& p, const Axis& ax, const Axis& ay) {
  std::string s = fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fff\" stroke=\"#999\"/>\n",
                              kX0, kY1, kX1 - kX0, kY0 - kY1);
  std::vector<double> yt = ay.log ? LogTicks(ay.lo, ay.hi) : LinearTicks(ay.lo, ay.hi);
  for (double v : yt) {
    double y = ay.Map(v, kY0, kY1);
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eee\"/><text x=\"{:.1f}\" "
        "y=\"{:.1f}\" text-anchor=\"end\" font-size=\"11\">{}</text>\n",
        kX0, y, kX1, y, kX0 - 4, y + 4, Num(v));
  }
  for (const auto& [v, label] : XTicks(p)) {
    double x = ax.Map(v, kX0, kX1);
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eee\"/><text x=\"{:.1f}\" "
        "y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\">{}</text>\n",
        x, kY1, x, kY0, x, kY0 + 15, Esc(label));
  }
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\n",
                   (kX0 + kX1) / 2, kH - 8, Esc(p.x_label));
  s += fmt::format(
      "<text x=\"14\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 14 {:.1f})\">{}"
      "</text>\n",
      (kY0 + kY1) / 2, (kY0 + kY1) / 2, Esc(p.y_label));
  if (p.hline > 0) {
    double y = ay.Map(p.hline, kY0, kY1);
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#b00\" stroke-dasharray=\"6 3\" "
        "data-hline=\"1\"/><text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"11\" fill=\"#b00\">{}"
        "</text>\n",
        kX0, y, kX1, y, kX1 - 4, y - 4, Esc(p.hline_label));
  }
  return s;
}

// One series of a bar plot: a bar per point, its value above it.
std::string BarsSvg(const Plot& p, const PlotSeries& se, const char* c, const Axis& ax, const Axis& ay) {
  std::string s;
  double slot = (kX1 - kX0) / std::max<size_t>(1, p.categories.size());
  for (auto [x, y] : se.xy) {
    double cx = ax.Map(x, kX0, kX1), top = ay.Map(y, kY0, kY1);
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" data-series=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\">{}</text>\n",
        cx - slot * 0.3, top, slot * 0.6, kY0 - top, c, Esc(se.name), cx, top - 4, Num(y));
  }
  return s;
}

// One series of a line plot: the line, and a dot with its value per point (not for reference
// lines); points a log axis cannot show are left out.
std::string LineSvg(const Plot& p, const PlotSeries& se, const char* c, const Axis& ax, const Axis& ay) {
  std::string pts;
  for (auto [x, y] : se.xy) {
    if ((ax.log && x <= 0) || (ay.log && y <= 0)) continue;
    pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", ax.Map(x, kX0, kX1), ay.Map(y, kY0, kY1));
  }
  std::string s =
      fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{} points=\"{}\" data-series=\"{}\"/>\n", c,
                  se.reference ? 1 : 2, se.reference ? " stroke-dasharray=\"4 4\"" : "", pts, Esc(se.name));
  if (se.reference) return s;
  const bool categorical = !p.categories.empty();
  for (auto [x, y] : se.xy) {
    if ((ax.log && x <= 0) || (ay.log && y <= 0)) continue;
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}: {} at {}</title></circle>\n",
                     ax.Map(x, kX0, kX1), ay.Map(y, kY0, kY1), c, Esc(se.name), Num(y),
                     categorical ? Esc(p.categories[static_cast<size_t>(x)]) : Num(x));
  }
  return s;
}

// The legend, as HTML (it wraps on a narrow page); none for bars.
std::string LegendHtml(const Plot& p) {
  if (p.series.empty() || p.bars) return "";
  std::string s = "<ul class=\"legend\">";
  size_t color = 0;
  for (const auto& se : p.series) {
    const char* c = se.reference ? "#777" : kColors[color++ % std::size(kColors)];
    s += fmt::format("<li><span class=\"swatch{}\" style=\"border-color:{}\"></span>{}</li>",
                     se.reference ? " ref" : "", c, Esc(se.name));
  }
  s += "</ul>\n";
  return s;
}

}  // namespace

std::string PlotSvg(const Plot& p) {
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\" "
      "class=\"plot\">\n",
      kW, kH, Esc(p.title));
  Axis ax, ay;
  ChooseAxes(p, ax, ay);
  s += FrameSvg(p, ax, ay);
  size_t color = 0;
  for (const auto& se : p.series) {
    const char* c = se.reference ? "#777" : kColors[color++ % std::size(kColors)];
    s += p.bars ? BarsSvg(p, se, c, ax, ay) : LineSvg(p, se, c, ax, ay);
  }
  s += "</svg>\n";
  s += LegendHtml(p);
  return s;
}

}  // namespace cpprof::render
