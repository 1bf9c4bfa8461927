// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/sweep_render.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "render/html_escape.h"
#include "render/markdown_table.h"
#include "render/sweep_plots.h"

namespace cpprof::render {

namespace {

// What the points table's columns are, under it in sweep.md and sweep.html.
constexpr const char* kPointsNote =
    "median iteration = the median of the steady iterations of the timing run without the profiler (the slowest "
    "rank per iteration); peak per rank from the workload's own lines; exposed transfer and waiting: % of each "
    "rank's window in the nsys capture, mean over ranks.";

using nlohmann::ordered_json;
constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string ShellWord(const std::string& a) {
  bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_./=:,+%@").find(c) != std::string::npos;
  });
  if (plain) return a;
  std::string q = "'";
  for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string Command(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + ShellWord(a);
  return s;
}

ordered_json ModuleJson(const model::SweepModule& m) {
  ordered_json j;
  j["name"] = m.name;
  j["path"] = m.path;
  j["depth"] = m.depth;
  j["is_group"] = m.is_group;
  j["leaf"] = m.leaf;
  j["cp"] = m.cp;
  j["ms_per_iteration"] = m.ms;
  j["max_ms_per_iteration"] = m.max_ms;
  j["comm_ms_per_iteration"] = m.comm_ms;
  if (!m.cost_key.empty()) {
    j["cost_key"] = m.cost_key;
    j["achieved_tflops"] = m.tflops;
    j["percent_of_peak"] = m.percent_of_peak;
  }
  return j;
}

ordered_json Share(double v) { return v < 0 ? ordered_json(nullptr) : ordered_json(v); }

std::string Pct(double share) { return share < 0 ? "-" : fmt::format("{:.1f}", 100 * share); }

std::string PerRankGiB(const std::vector<int64_t>& v) {
  std::vector<std::string> s;
  for (int64_t b : v) s.push_back(b < 0 ? "-" : fmt::format("{:.2f}", b / kGiB));
  return fmt::format("{}", fmt::join(s, " / "));
}

// One table, printed as Markdown or HTML.
struct Table {
  std::vector<std::string> head;
  std::vector<bool> left;  // per column
  std::vector<std::vector<std::string>> rows;
  std::string id;
};

void PrintMd(const Table& t, std::ostream& out) {
  std::vector<bool> right;
  for (bool l : t.left) right.push_back(!l);
  PrintMarkdownTable(t.head, right, t.rows, out);
}

std::string Esc(const std::string& s) { return EscapeHtml(s); }

void PrintHtml(const Table& t, std::ostream& out) {
  out << "<div class=\"scroll\"><table" << (t.id.empty() ? "" : " id=\"" + t.id + "\"") << "><tr>";
  for (size_t i = 0; i < t.head.size(); ++i)
    out << "<th" << (t.left[i] ? " class=\"l\"" : "") << ">" << Esc(t.head[i]) << "</th>";
  out << "</tr>\n";
  for (const auto& r : t.rows) {
    out << "<tr>";
    for (size_t i = 0; i < r.size(); ++i)
      out << "<td" << (t.left[i] ? " class=\"l\"" : "") << ">" << Esc(r[i]) << "</td>";
    out << "</tr>\n";
  }
  out << "</table></div>\n";
}

Table FitsTable(const model::SweepResult& r) {
  Table t{{"grid", "largest N that ran", "first N out of memory", "how", "memory would fill the GPU at"},
          {true, false, false, true, true},
          {},
          "fits"};
  for (const auto& f : r.fits) {
    t.rows.push_back({f.grid, f.largest_ok ? std::to_string(f.largest_ok) : "-",
                      f.first_oom ? std::to_string(f.first_oom) : "-", f.how,
                      f.predicted_n ? fmt::format("N = {}: {}", f.predicted_n, f.predicted_how) : "-"});
  }
  return t;
}

Table PointsTable(const model::SweepResult& r) {
  Table t{{"grid", "N", "run", "status", "median iteration ms", "steady iterations", "peak GiB per rank",
           "exposed transfer %", "waiting %", "capture", "detail"},
          {true, false, true, true, false, false, false, false, false, true, true},
          {},
          "points"};
  for (const auto& p : r.points) {
    bool ran = p.status == "ok";
    bool cap = ran && p.capture_status == "ok";
    std::vector<int64_t> peaks = !p.peak_mem_bytes.empty() ? p.peak_mem_bytes : p.capture_peak_mem_bytes;
    std::string detail = p.detail;
    if (ran && p.capture_status != "ok" && !p.capture_detail.empty()) detail = p.capture_detail;
    t.rows.push_back({p.grid, std::to_string(p.n), p.origin, p.status,
                      ran && p.median_iter_s > 0 ? fmt::format("{:.3f}", p.median_iter_s * 1000) : "-",
                      ran ? std::to_string(p.iter_s.size()) : "-", peaks.empty() ? "-" : PerRankGiB(peaks),
                      cap ? Pct(p.exposed_transfer_share) : "-", cap ? Pct(p.waiting_share) : "-",
                      p.capture_status.empty() ? "-" : p.capture_status, detail});
  }
  return t;
}

// Per grid: module rows (top-level rows, then the plotted modules) by the captured sizes.
std::vector<std::pair<std::string, Table>> ModuleTables(const model::SweepResult& r) {
  std::vector<std::pair<std::string, Table>> out;
  for (const auto& grid : r.spec.grids) {
    std::vector<const model::SweepPoint*> pts;
    for (const auto& p : r.points) {
      if (p.grid == grid && p.status == "ok" && p.capture_status == "ok") pts.push_back(&p);
    }
    if (pts.empty()) continue;
    std::vector<std::string> paths;
    for (const auto* p : pts) {
      for (const auto& m : p->modules) {
        if (m.depth == 0 && std::find(paths.begin(), paths.end(), m.path) == paths.end()) paths.push_back(m.path);
      }
    }
    for (const auto& path : PlotModules(r, grid, 12)) {
      if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
    }
    Table t;
    t.id = "modules-" + grid;
    t.head = {"module"};
    t.left = {true};
    for (const auto* p : pts) {
      t.head.push_back(fmt::format("N={}", p->n));
      t.left.push_back(false);
    }
    for (const auto& path : paths) {
      std::vector<std::string> row = {ShortModulePath(path)};
      for (const auto* p : pts) {
        std::string cell = "-";
        for (const auto& m : p->modules) {
          if (m.path == path) cell = fmt::format("{:.3f}", m.ms);
        }
        row.push_back(cell);
      }
      t.rows.push_back(row);
    }
    out.push_back({grid, t});
  }
  return out;
}

Table EfficiencyTable(const model::SweepResult& r) {
  Table t{{"grid", "N", "module", "model", "ms per iteration", "achieved TFLOP/s", "% of peak"},
          {true, false, true, true, false, false, false},
          {},
          "efficiency"};
  for (const auto& p : r.points) {
    if (p.status != "ok" || p.capture_status != "ok") continue;
    for (const auto& m : p.modules) {
      if (m.cost_key.empty() || m.tflops < 0) continue;
      t.rows.push_back({p.grid, std::to_string(p.n), ShortModulePath(m.path), m.cost_key, fmt::format("{:.3f}", m.ms),
                        fmt::format("{:.1f}", m.tflops), fmt::format("{:.1f}", m.percent_of_peak)});
    }
  }
  return t;
}

std::vector<std::string> MachineLines(const model::SweepResult& r) {
  const auto& m = r.machine;
  std::vector<std::string> l;
  for (const auto& g : m.gpus) l.push_back("GPU " + g);
  if (!m.interconnect.empty()) l.push_back("interconnect: " + m.interconnect);
  if (!m.nsys.empty()) l.push_back("nsys: " + m.nsys);
  if (!m.python.empty()) l.push_back("python: " + m.python + (m.torch.empty() ? "" : ", torch " + m.torch));
  l.push_back("cpprof " + m.cpprof_version);
  return l;
}

std::vector<std::string> SpecLines(const model::SweepResult& r) {
  const auto& s = r.spec;
  std::vector<std::string> l;
  l.push_back("workload: " + s.workload + (s.mode.empty() ? "" : " --mode " + s.mode) +
              (s.arg_template.empty() ? "" : " (--arg-template '" + s.arg_template + "')") +
              (s.extra_args.empty() ? "" : fmt::format(" + `{}`", fmt::join(s.extra_args, " "))));
  l.push_back(fmt::format("sizes (--n): {}; grids: {}; dtype: {}", fmt::join(s.sizes, ", "), fmt::join(s.grids, ", "),
                          s.dtype.empty() ? "the workload's default" : s.dtype));
  l.push_back(fmt::format(
      "timing run without the profiler: {} warm-up + {} timed iterations, the median of the steady ones (the slowest "
      "rank per iteration); one nsys capture per point (fast preset) with {} timed iterations",
      s.warmup, s.iters, s.capture_iters));
  l.push_back(s.largest
                  ? fmt::format("--largest: bisection between the last fit and the first out-of-memory to a step of "
                                "{}{}",
                                s.step, s.max_n ? fmt::format("; doubling past the ladder up to N={}", s.max_n) : "")
                  : std::string("largest N: the last size of each grid's ladder that ran (--largest refines it)"));
  return l;
}

}  // namespace

std::string SweepTitle(const model::SweepResult& r) {
  const auto& s = r.spec;
  return fmt::format("{}, N = {}, grids {}{}", s.workload, fmt::join(s.sizes, ","), fmt::join(s.grids, ","),
                     s.dtype.empty() ? "" : ", " + s.dtype);
}

namespace {

// The sweep's spec: workload, sizes, grids, iterations, the largest-N search.
ordered_json SpecJson(const model::SweepSpec& s) {
  ordered_json spec;
  spec["workload"] = s.workload;
  spec["mode"] = s.mode;
  spec["arg_template"] = s.arg_template;
  spec["extra_args"] = s.extra_args;
  spec["dtype"] = s.dtype;
  spec["sizes"] = s.sizes;
  spec["grids"] = s.grids;
  spec["iters"] = s.iters;
  spec["warmup"] = s.warmup;
  spec["capture_iters"] = s.capture_iters;
  spec["largest"] = s.largest;
  spec["step"] = s.step;
  spec["max_n"] = s.max_n;
  return spec;
}

// The machine the sweep ran on.
ordered_json MachineJson(const model::SweepMachine& m) {
  ordered_json mj;
  mj["gpus"] = m.gpus;
  mj["gpu_name"] = m.gpu_name;
  mj["gpu_memory_bytes"] = m.gpu_memory_bytes;
  mj["interconnect"] = m.interconnect;
  mj["nsys"] = m.nsys;
  mj["python"] = m.python;
  mj["torch"] = m.torch;
  mj["cpprof_version"] = m.cpprof_version;
  return mj;
}

// The largest N per grid, measured and predicted (null where none).
ordered_json FitsJson(const model::SweepResult& r) {
  ordered_json fits = ordered_json::array();
  for (const auto& f : r.fits) {
    ordered_json fj;
    fj["grid"] = f.grid;
    fj["largest_n"] = f.largest_ok ? ordered_json(f.largest_ok) : ordered_json(nullptr);
    fj["first_oom_n"] = f.first_oom ? ordered_json(f.first_oom) : ordered_json(nullptr);
    fj["how"] = f.how;
    fj["predicted_n"] = f.predicted_n ? ordered_json(f.predicted_n) : ordered_json(nullptr);
    fj["predicted_how"] = f.predicted_how;
    fits.push_back(fj);
  }
  return fits;
}

// A point's timing run (without the profiler).
ordered_json TimingJson(const model::SweepPoint& p) {
  ordered_json t;
  t["argv"] = p.timing_argv;
  t["wall_s"] = p.timing_wall_s;
  t["iter_s"] = p.iter_s;
  t["median_iter_s"] = p.median_iter_s;
  t["warmup_iters"] = p.warmup_iters;
  t["peak_mem_bytes"] = p.peak_mem_bytes;
  t["peak_mem_kind"] = p.peak_mem_kind;
  return t;
}

// A point's capture: its run, the shares of the window, its modules and efficiency.
ordered_json CaptureJson(const model::SweepPoint& p) {
  ordered_json c;
  c["argv"] = p.capture_argv;
  c["status"] = p.capture_status;
  c["detail"] = p.capture_detail;
  c["wall_s"] = p.capture_wall_s;
  c["files"] = p.capture_files;
  c["iter_ms"] = p.capture_iter_ms;
  c["iterations"] = p.capture_iterations;
  c["exposed_transfer_share"] = Share(p.exposed_transfer_share);
  c["waiting_share"] = Share(p.waiting_share);
  c["compute_share"] = Share(p.compute_share);
  c["idle_share"] = Share(p.idle_share);
  c["peak_mem_bytes"] = p.capture_peak_mem_bytes;
  ordered_json mods = ordered_json::array();
  for (const auto& mod : p.modules) mods.push_back(ModuleJson(mod));
  c["modules"] = mods;
  c["efficiency"] = p.efficiency_json.empty() ? ordered_json(nullptr) : ordered_json::parse(p.efficiency_json);
  return c;
}

// One point: its size, grid and status, its timing run and its capture.
ordered_json PointJson(const model::SweepPoint& p) {
  ordered_json pj;
  pj["n"] = p.n;
  pj["grid"] = p.grid;
  pj["cp0"] = p.cp0;
  pj["cp1"] = p.cp1;
  pj["ranks"] = p.ranks;
  pj["origin"] = p.origin;
  pj["status"] = p.status;
  pj["detail"] = p.detail;
  pj["timing"] = TimingJson(p);
  pj["capture"] = CaptureJson(p);
  return pj;
}

}  // namespace

ordered_json SweepJson(const model::SweepResult& r) {
  ordered_json j;
  j["schema"] = model::SweepResult::kSchema;
  j["spec"] = SpecJson(r.spec);
  j["machine"] = MachineJson(r.machine);
  j["largest_n_per_grid"] = FitsJson(r);
  ordered_json points = ordered_json::array();
  for (const auto& p : r.points) points.push_back(PointJson(p));
  j["points"] = points;
  j["notes"] = r.notes;
  return j;
}

void PrintSweepMarkdown(const model::SweepResult& r, std::ostream& out) {
  out << "# cpprof sweep: " << SweepTitle(r) << "\n\n";
  for (const auto& l : SpecLines(r)) out << "- " << l << "\n";
  out << "\n## Machine\n\n";
  for (const auto& l : MachineLines(r)) out << "- " << l << "\n";
  out << "\n## Largest N per grid\n\n";
  PrintMd(FitsTable(r), out);
  out << "\n## Points\n\n";
  PrintMd(PointsTable(r), out);
  out << "\n" << kPointsNote << "\n";
  for (const auto& [grid, t] : ModuleTables(r)) {
    out << "\n## Time per module, grid " << grid << " (ms per iteration, from the capture)\n\n";
    PrintMd(t, out);
  }
  Table e = EfficiencyTable(r);
  if (!e.rows.empty()) {
    out << "\n## Efficiency (the cost model against the capture's times)\n\n";
    PrintMd(e, out);
  }
  out << "\n## Commands\n\n";
  for (const auto& p : r.points) {
    if (p.timing_argv.empty()) continue;
    out << fmt::format("- {} N={}: timing `{}`\n", p.grid, p.n, Command(p.timing_argv));
    if (!p.capture_argv.empty()) out << fmt::format("  capture `{}`\n", Command(p.capture_argv));
  }
  if (!r.notes.empty()) {
    out << "\n## Notes\n\n";
    for (const auto& n : r.notes) out << "- " << n << "\n";
  }
}

namespace {

// The page's head (title, style) and its header: the title, the spec and the machine.
void PrintSweepHtmlHead(const model::SweepResult& r, std::ostream& out) {
  out << R"(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="generator" content="cpprof sweep">
<title>cpprof sweep: )"
      << Esc(SweepTitle(r)) << R"(</title>
<style>
  * { box-sizing: border-box; }
  html, body { margin: 0; background: #f6f7f9; color: #1d2330;
    font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
  body { overflow-wrap: anywhere; }
  header { background: #1d2330; color: #fff; padding: 16px 24px 14px; }
  header h1 { margin: 0 0 6px; font-size: 20px; font-weight: 600; }
  header ul { margin: 0; padding-left: 18px; color: #dde3ec; font-size: 12.5px; }
  main { padding: 16px 24px 40px; max-width: 1800px; margin: 0 auto; }
  section { background: #fff; border: 1px solid #e3e7ee; border-radius: 8px; padding: 14px 18px 16px;
    margin-bottom: 16px; min-width: 0; }
  h2 { font-size: 16px; margin: 0 0 8px; font-weight: 600; }
  .scroll { overflow-x: auto; max-width: 100%; }
  table { border-collapse: collapse; font-size: 13px; }
  th, td { padding: 4px 9px; border-bottom: 1px solid #e3e7ee; text-align: right; white-space: nowrap;
    font-variant-numeric: tabular-nums; }
  th { color: #5f6b7a; font-weight: 600; font-size: 12px; background: #fafbfc; vertical-align: bottom; }
  td.l, th.l { text-align: left; }
  .plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 520px), 1fr)); gap: 16px; }
  figure { margin: 0; min-width: 0; }
  figcaption { font-weight: 600; margin-bottom: 4px; }
  svg.plot { width: 100%; height: auto; display: block; font-family: inherit; }
  .legend { display: flex; flex-wrap: wrap; gap: 2px 14px; margin: 6px 0 0; padding: 0; list-style: none;
    font-size: 12px; color: #5f6b7a; }
  .swatch { display: inline-block; width: 16px; height: 0; border-top: 3px solid; vertical-align: 3px; margin-right: 5px; }
  .swatch.ref { border-top-style: dashed; border-top-width: 2px; }
  .note { font-size: 12.5px; color: #5f6b7a; margin: 4px 0 0; }
  code { font-size: 12px; }
  ul.cmds { padding-left: 18px; font-size: 12.5px; }
</style>
</head>
<body>
<header>
<h1>cpprof sweep: )"
      << Esc(SweepTitle(r)) << "</h1>\n<ul>\n";
  for (const auto& l : SpecLines(r)) out << "<li>" << Esc(l) << "</li>\n";
  for (const auto& l : MachineLines(r)) out << "<li>" << Esc(l) << "</li>\n";
  out << "</ul>\n</header>\n";
}

// The plots, each a figure with its caption and note.
void PrintSweepPlots(const model::SweepResult& r, std::ostream& out) {
  out << "<section id=\"plots-section\">\n<h2>Plots</h2>\n<div class=\"plots\">\n";
  for (const auto& p : SweepPlots(r)) {
    out << "<figure id=\"" << p.id << "\" data-series=\"" << p.series.size() << "\">\n<figcaption>" << Esc(p.title)
        << "</figcaption>\n"
        << PlotSvg(p);
    if (!p.note.empty()) out << "<p class=\"note\">" << Esc(p.note) << "</p>\n";
    out << "</figure>\n";
  }
  out << "</div>\n</section>\n";
}

// The tables: largest N per grid, the points, time per module per grid, efficiency.
void PrintSweepTables(const model::SweepResult& r, std::ostream& out) {
  out << "<section>\n<h2>Largest N per grid</h2>\n";
  PrintHtml(FitsTable(r), out);
  out << "</section>\n<section>\n<h2>Points</h2>\n";
  PrintHtml(PointsTable(r), out);
  out << "<p class=\"note\">" << kPointsNote << "</p>\n</section>\n";
  for (const auto& [grid, t] : ModuleTables(r)) {
    out << "<section>\n<h2>Time per module, grid " << Esc(grid) << " (ms per iteration, from the capture)</h2>\n";
    PrintHtml(t, out);
    out << "</section>\n";
  }
  Table e = EfficiencyTable(r);
  if (!e.rows.empty()) {
    out << "<section>\n<h2>Efficiency (the cost model against the capture's times)</h2>\n";
    PrintHtml(e, out);
    out << "</section>\n";
  }
}

// The commands each point ran, and the sweep's notes.
void PrintSweepCommands(const model::SweepResult& r, std::ostream& out) {
  out << "<section>\n<h2>Commands</h2>\n<ul class=\"cmds\">\n";
  for (const auto& p : r.points) {
    if (p.timing_argv.empty()) continue;
    out << "<li>" << Esc(p.grid) << " N=" << p.n << ": timing <code>" << Esc(Command(p.timing_argv)) << "</code>";
    if (!p.capture_argv.empty()) out << "<br>capture <code>" << Esc(Command(p.capture_argv)) << "</code>";
    out << "</li>\n";
  }
  out << "</ul>\n</section>\n";
  if (!r.notes.empty()) {
    out << "<section>\n<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : r.notes) out << "<li>" << Esc(n) << "</li>\n";
    out << "</ul>\n</section>\n";
  }
}

}  // namespace

void PrintSweepHtml(const model::SweepResult& r, std::ostream& out) {
  PrintSweepHtmlHead(r, out);
  out << "<main>\n";
  PrintSweepPlots(r, out);
  PrintSweepTables(r, out);
  PrintSweepCommands(r, out);
  out << "</main>\n</body>\n</html>\n";
}

}  // namespace cpprof::render
