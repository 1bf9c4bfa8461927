// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/html_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>

#include "base/utf8.h"
#include "render/efficiency_render.h"
#include "render/html_escape.h"
#include "render/html_template.h"  // generated from src/render/html_template.html (CMakeLists.txt)
#include "render/kernel_names.h"
#include "render/report_json.h"

namespace cpprof::render {

using Json = nlohmann::ordered_json;
using model::OpClass;

namespace {

constexpr std::string_view kDataMarker = "/*CPPROF_DATA*/";

// The time origin of the timeline's numbers (they are stored relative to it, to keep the page
// small): the earliest first op of any rank (0 when there is none). The page adds it back: every
// time it shows counts from the start of the capture, as the text readout's.
int64_t Origin(const model::Report& r) {
  int64_t t0 = std::numeric_limits<int64_t>::max();
  for (const auto& s : r.ranks) {
    if (s.ops > 0) t0 = std::min(t0, s.first_start);
  }
  return t0 == std::numeric_limits<int64_t>::max() ? 0 : t0;
}

// Bins as [gap from the previous bin's end (from t0 for the first), duration, busy_ns, class, ...]:
// small numbers, so the page stays small (the page turns them back into times).
Json BinsJson(const std::vector<model::TimelineBin>& bins, int64_t t0) {
  Json a = Json::array();
  int64_t prev = t0;
  for (const auto& b : bins) {
    a.push_back(b.start - prev);
    a.push_back(b.end - b.start);
    a.push_back(b.busy_ns);
    a.push_back(static_cast<int>(b.cls));
    prev = b.end;
  }
  return a;
}

// The timeline of `tr` (times relative to t0_ns) with the module rows its spans index.
Json TimelineJson(const model::Report& tr) {
  const model::Timeline& tl = tr.timeline;
  const int64_t t0 = Origin(tr);
  Json j;
  j["built"] = tl.built;
  j["t0_ns"] = t0;
  j["max_bins"] = tl.max_bins;
  j["class_names"] = model::kOpClassNames;
  Json lanes = Json::array();
  for (const auto& l : tl.lanes) {
    Json cls = Json::array();
    for (OpClass c : l.classes) cls.push_back(model::Name(c));
    lanes.push_back({{"name", l.name}, {"classes", cls}});
  }
  j["lanes"] = lanes;
  Json rows = Json::array();
  for (const auto& m : tr.modules) rows.push_back({{"name", m.name}, {"parent", m.parent}, {"cp", m.cp_distributed}});
  j["rows"] = rows;
  Json ranks = Json::array();
  for (const auto& rt : tl.ranks) {
    Json x;
    x["rank"] = rt.rank;
    const auto& s = tr.ranks.at(static_cast<size_t>(rt.rank));
    x["first_start"] = s.first_start - t0;
    x["last_end"] = s.last_end - t0;
    x["bin_ns"] = rt.bin_ns;
    Json ls = Json::array();
    for (const auto& l : rt.lanes) {
      ls.push_back({{"lane", l.lane},
                    {"ops", l.ops},
                    {"union_ns", l.union_ns},
                    {"intervals", l.intervals},
                    {"downsampled", l.downsampled},
                    {"bin_ns", l.bin_ns},
                    {"bins", BinsJson(l.bins, t0)}});
    }
    x["lanes"] = ls;
    Json mods = Json::array();
    for (int v = 0; v < 2; ++v) {
      Json runs = Json::array();  // [gap from the previous run's end, duration, row, ...], as the bins
      int64_t prev = t0;
      for (const auto& m : rt.module_runs[v]) {
        runs.push_back(m.start - prev);
        runs.push_back(m.end - m.start);
        runs.push_back(m.row);
        prev = m.end;
      }
      mods.push_back({{"level", v},
                      {"runs_before", rt.module_run_count[v]},
                      {"downsampled", rt.modules_downsampled[v]},
                      {"runs", runs}});
    }
    x["modules"] = mods;
    ranks.push_back(x);
  }
  j["ranks"] = ranks;
  return j;
}

// A module row's key: its path of NVTX ranges (names for groups) from the top-level row.
std::vector<std::string> RowPaths(const std::vector<model::ModuleNode>& rows) {
  std::vector<std::string> path(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& m = rows[i];
    path[i] = (m.parent < 0 ? std::string() : path[m.parent] + '\x1f') + (m.range.empty() ? m.name : m.range);
  }
  return path;
}

// Kernel names of the iterations, each once: [{name, short_name, class}].
class KernelNames {
 public:
  int Index(const model::KernelTotal& k) {
    auto [it, added] = index_.try_emplace(k.name, static_cast<int>(json_.size()));
    if (added)
      json_.push_back({{"name", k.name}, {"short_name", ShortKernelName(k.name)}, {"class", model::Name(k.cls)}});
    return it->second;
  }
  Json Take() { return std::move(json_); }

 private:
  std::map<std::string, int> index_;
  Json json_ = Json::array();
};

// An iteration's efficiency by the readout's rows (the same path and module; null where the
// iteration has no such row): modules as [time_ns, TFLOP/s, % of peak, GB/s, % of roof], ring
// shifts as [transfer ns per shift, GB/s, % of link]; null when not computed.
Json IterationEfficiencyJson(const model::Efficiency& e, const model::Efficiency& main) {
  if (!e.computed || !main.computed) return nullptr;
  Json mods = Json::array(), comm = Json::array();
  for (const auto& m : main.modules) {
    auto it = std::find_if(e.modules.begin(), e.modules.end(),
                           [&](const auto& x) { return x.path == m.path && x.module == m.module; });
    if (it == e.modules.end()) {
      mods.push_back(nullptr);
      continue;
    }
    mods.push_back({it->time_ns, it->achieved_tflops, it->percent_of_peak, it->achieved_gbs, it->percent_of_roof});
  }
  for (const auto& c : main.comm) {
    auto it = std::find_if(e.comm.begin(), e.comm.end(),
                           [&](const auto& x) { return x.path == c.path && x.module == c.module; });
    if (it == e.comm.end()) {
      comm.push_back(nullptr);
      continue;
    }
    comm.push_back({it->transfer_ns_per_shift, it->achieved_gbs, it->percent_of_link});
  }
  return Json{{"iterations", e.iterations}, {"modules", mods}, {"comm", comm}};
}

// One iteration's readout, compact: the rank budgets as the readout's (without classes, kernels
// and what the window does not change: rank, device, pid, process, invalid ops, peak memory), the module rows as [row
// of the readout, [[busy, backward, comm, hidden, wait, transfer, exposed transfer, caused wait, ops] per rank]], top
// kernels as [name, time, instances] per rank, phases and imbalance as the readout's.
Json IterationJson(const model::Report& it, const model::IterationTime& t, const std::map<std::string, int>& main_row,
                   const model::Efficiency& main_efficiency, KernelNames& names) {
  Json j;
  j["name"] = t.name;
  j["start_ns"] = t.start_ns;
  j["end_ns"] = t.end_ns;
  j["warmup"] = t.warmup;
  j["in_window"] = t.in_window;
  j["description"] = it.window.description;
  j["verdict"] = it.verdict.summary;
  Json per = Json::array(), top = Json::array(), classes = Json::array();
  for (const auto& s : it.ranks) {
    Json c = Json::array();  // [class, instances, kernel time, wall time] for each class with ops, by time (as the
                             // readout's)
    for (int k : ClassesByTime(s)) {
      c.push_back({k, s.classes[k].instances, s.classes[k].sum_ns, s.classes[k].union_ns});
    }
    classes.push_back(std::move(c));
    Json x = RankJson(s);
    // What does not change with the window (or is the readout's: peak memory is over the capture).
    for (const char* f : {"classes", "top_kernels", "rank", "device", "pid", "process", "invalid_ops", "peak_mem_bytes",
                          "peak_mem_ns", "peak_mem_module"}) {
      x.erase(f);
    }
    per.push_back(std::move(x));
    Json k = Json::array();
    for (const auto& kt : s.top_kernels) k.push_back({names.Index(kt), kt.total_ns, kt.instances});
    top.push_back(std::move(k));
  }
  j["per_rank"] = per;
  j["top_kernels"] = top;
  j["classes"] = classes;
  Json mods = Json::array();
  int64_t left_out = 0;
  const std::vector<std::string> paths = RowPaths(it.modules);
  for (size_t i = 0; i < it.modules.size(); ++i) {
    auto row = main_row.find(paths[i]);
    if (row == main_row.end()) {
      ++left_out;
      continue;
    }
    Json per_rank = Json::array();
    for (const auto& p : it.modules[i].per_rank) {
      per_rank.push_back({p.busy_ns, p.backward_ns, p.comm_ns, p.hidden_ns, p.wait_ns, p.transfer_ns,
                          p.exposed_transfer_ns, p.caused_wait_ns, p.ops});
    }
    mods.push_back({row->second, per_rank});
  }
  j["modules"] = mods;
  j["modules_not_in_readout"] = left_out;
  j["phases"] = PhasesJson(it);
  j["imbalance"] = ImbalanceJson(it);
  j["efficiency"] = IterationEfficiencyJson(it.efficiency, main_efficiency);
  return j;
}

// The export the page is about, for its title: the file's name without folders (host paths
// only with --show-paths), or how many exports a run was read from.
std::string ExportName(const model::Report& r) {
  if (r.run_exports.size() > 1) {
    return fmt::format("{} and {} more export{}", r.run_exports[0].name, r.run_exports.size() - 1,
                       r.run_exports.size() == 2 ? "" : "s");
  }
  std::string name = std::filesystem::path(r.export_info.file).filename().string();
  return name.empty() ? "export" : name;
}

}  // namespace

Json HtmlData(const model::Report& r, const RenderOptions& o, const HtmlExtras& extras) {
  Json j;
  j["schema"] = "cpprof.html/2";
  j["generator"] = fmt::format("cpprof {}", CPPROF_VERSION);
  j["name"] = ExportName(r);
  j["depth"] = o.module_depth;
  j["report"] = ReportJson(r, o);
  const model::Report& tr = extras.timeline ? *extras.timeline : r;
  j["timeline"] = TimelineJson(tr);
  Json kinds = Json::object();  // class -> kind (compute, comm, memory), for the iterations' classes
  for (int k = 0; k < model::kNumOpClasses; ++k) {
    kinds[std::string(model::kOpClassNames[k])] = model::Kind(static_cast<OpClass>(k));
  }
  j["class_kinds"] = kinds;
  Json its = Json::array();
  if (extras.iterations) {
    std::map<std::string, int> main_row;
    const std::vector<std::string> paths = RowPaths(r.modules);
    for (size_t i = 0; i < paths.size(); ++i) main_row.emplace(paths[i], static_cast<int>(i));
    KernelNames names;
    for (size_t i = 0; i < extras.iterations->size() && i < r.window.iterations.size(); ++i) {
      its.push_back(IterationJson((*extras.iterations)[i], r.window.iterations[i], main_row, r.efficiency, names));
    }
    j["kernel_names"] = names.Take();
  }
  j["iterations"] = its;
  j["iterations_left_out"] = extras.iterations_left_out;
  // The critical path of each replayed steady iteration in time, for the timeline: stretches of
  // [rank, start_ns, end_ns, kind] (the run's clock, as replayed with no edit), all iterations'.
  Json path = Json::array();
  for (const auto& it : r.replay.iterations) {
    for (const auto& s : it.path) path.push_back({s.rank, s.start_ns, s.end_ns, s.kind});
  }
  j["critical_path"] = path;
  // What the text readout says of efficiency when the JSON has no "efficiency" object.
  if (!HasEfficiencyJson(r) && r.efficiency.applicable) j["efficiency_note"] = r.efficiency.reason;
  return j;
}

std::string EscapeJsonForScript(const std::string& json) {
  std::string out;
  out.reserve(json.size() + json.size() / 64);
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else if (json.compare(i, 4, "<!--") == 0) {
      out += "\\u003c";
    } else {
      out += json[i];
    }
  }
  return out;
}

namespace {

constexpr std::string_view kTitleMarker = "<!--CPPROF_TITLE-->";

}  // namespace

void PrintReportHtml(const model::Report& r, const RenderOptions& o, std::ostream& out, const HtmlExtras& extras) {
  std::string page(kHtmlTemplate);
  if (size_t t = page.find(kTitleMarker); t != std::string::npos) {
    page.replace(t, kTitleMarker.size(), EscapeHtml(ToValidUtf8(ExportName(r))));
  }
  const std::string_view tmpl = page;
  const size_t at = tmpl.find(kDataMarker);
  out << tmpl.substr(0, at);
  if (at == std::string_view::npos) return;
  out << EscapeJsonForScript(HtmlData(r, o, extras).dump(-1, ' ', false, Json::error_handler_t::replace));
  out << tmpl.substr(at + kDataMarker.size());
}

}  // namespace cpprof::render
