#include "render/html_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "render/html_template.h"  // generated from src/render/html_template.html (CMakeLists.txt)
#include "render/readout.h"
#include "render/report_json.h"
#include "render/table.h"

namespace cpprof::render {

using Json = nlohmann::ordered_json;
using model::OpClass;

namespace {

constexpr std::string_view kDataMarker = "/*CPPROF_DATA*/";

// The time origin of the page: the earliest first op of any rank (0 when there is none).
int64_t Origin(const model::Report& r) {
  int64_t t0 = std::numeric_limits<int64_t>::max();
  for (const auto& s : r.ranks) {
    if (s.ops > 0) t0 = std::min(t0, s.first_start);
  }
  return t0 == std::numeric_limits<int64_t>::max() ? 0 : t0;
}

// The per-rank objects of the JSON readout, plus the percentages as the text readout prints them
// (render/table.h: "-" when the whole is 0) and the raw peak (-1: not captured) the page reads.
Json RanksJson(const model::Report& r) {
  Json per = Json::array();
  for (const auto& s : r.ranks) {
    Json x = RankJson(s);
    x.erase("top_kernels");
    x["comm_pct_of_busy"] = Percent(s.comm_ns, s.busy_ns);
    x["hidden_comm_pct"] = Percent(s.both_ns, s.comm_ns);
    for (int k = 0; k < model::kNumOpClasses; ++k) {
      const auto& ct = s.classes[k];
      if (!ct.instances || !model::IsComm(static_cast<OpClass>(k))) continue;
      Json& c = x["classes"][std::string(model::kOpClassNames[k])];
      c["hidden_ns"] = ct.hidden_ns;
      c["hidden_pct"] = Percent(ct.hidden_ns, ct.union_ns);
    }
    x["peak_mem_bytes"] = s.peak_mem_bytes;
    x["peak_mem_ns"] = s.peak_mem_ns;
    per.push_back(x);
  }
  return per;
}

Json BinsJson(const std::vector<model::TimelineBin>& bins, int64_t t0) {
  Json a = Json::array();
  for (const auto& b : bins) {
    a.push_back(b.start - t0);
    a.push_back(b.end - t0);
    a.push_back(b.busy_ns);
    a.push_back(static_cast<int>(b.cls));
  }
  return a;
}

Json TimelineJson(const model::Report& r, int64_t t0) {
  const model::Timeline& tl = r.timeline;
  Json j;
  j["built"] = tl.built;
  j["max_bins"] = tl.max_bins;
  j["class_names"] = model::kOpClassNames;
  Json lanes = Json::array();
  for (const auto& l : tl.lanes) {
    Json cls = Json::array();
    for (OpClass c : l.classes) cls.push_back(model::Name(c));
    lanes.push_back({{"name", l.name}, {"classes", cls}});
  }
  j["lanes"] = lanes;
  Json ranks = Json::array();
  for (const auto& rt : tl.ranks) {
    Json x;
    x["rank"] = rt.rank;
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
      Json runs = Json::array();
      for (const auto& m : rt.module_runs[v]) {
        runs.push_back(m.start - t0);
        runs.push_back(m.end - t0);
        runs.push_back(m.row);
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
  Json its = Json::array();
  for (const auto& w : tl.iterations) its.push_back({{"name", w.name}, {"start", w.start - t0}, {"end", w.end - t0}});
  j["iterations"] = its;
  return j;
}

// One line per process (the device where its memory peaked, as RankSummary::peak_mem_bytes).
Json MemoryJson(const model::Report& r, int64_t t0) {
  const auto& mu = r.memory;
  Json j;
  j["captured"] = mu.captured;
  j["note"] = mu.note;
  j["counted_kinds"] = mu.counted_kinds;
  std::map<int64_t, const model::MemorySeries*> best;
  for (const auto& s : mu.series) {
    auto& b = best[s.global_pid];
    if (!b || s.peak_bytes > b->peak_bytes) b = &s;
  }
  Json series = Json::array();
  for (const auto& [gpid, s] : best) {
    int rank = -1;
    for (const auto& rs : r.ranks) {
      if (rs.global_pid == gpid) rank = rs.rank;
    }
    Json pts = Json::array();
    for (const auto& p : s->timeline) {
      pts.push_back(p.time_ns - t0);
      pts.push_back(p.bytes);
    }
    series.push_back({{"rank", rank},
                      {"pid", s->pid},
                      {"device", s->device},
                      {"peak_bytes", s->peak_bytes},
                      {"peak_ns", s->peak_ns - t0},
                      {"final_bytes", s->final_bytes},
                      {"events", s->events},
                      {"unmatched_frees", s->unmatched_frees},
                      {"points", pts}});
  }
  std::stable_sort(series.begin(), series.end(), [](const Json& a, const Json& b) {
    auto key = [](const Json& x) { return x["rank"].get<int>() < 0 ? INT32_MAX : x["rank"].get<int>(); };
    return key(a) < key(b);
  });
  j["series"] = series;
  return j;
}

Json CaptureJson(const model::Report& r, const RenderOptions& o) {
  const auto& c = r.capture;
  Json j;
  j["recorded"] = c.recorded;
  j["reconstructed_flags"] = c.reconstructed_flags;
  j["traced"] = c.traced;
  j["command"] = c.command;
  j["arguments"] = c.arguments;
  if (o.show_paths) j["working_dir"] = c.working_dir;
  j["run_duration_ms"] = c.run_duration_ms;
  j["injections"] = c.injections;
  Json msgs = Json::array();
  for (const auto& m : c.messages) {
    msgs.push_back({{"severity", m.severity}, {"source", m.source}, {"text", m.text}, {"count", m.count}});
  }
  j["messages"] = msgs;
  return j;
}

}  // namespace

Json HtmlData(const model::Report& r, const RenderOptions& o) {
  const int64_t t0 = Origin(r);
  Json j;
  j["schema"] = "cpprof.html/1";
  j["generator"] = fmt::format("cpprof {}", CPPROF_VERSION);
  Json ex;
  if (o.show_paths) ex["file"] = r.export_info.file;
  ex["schema_version"] = r.export_info.schema_version;
  ex["nsys_version"] = r.export_info.nsys_version;
  ex["captured"] = r.export_info.captured;
  ex["not_captured"] = r.export_info.not_captured;
  j["export"] = ex;
  j["ranks"] = {{"method", r.rank_method}, {"world_size", r.world_size}, {"count", r.ranks.size()}};
  j["t0_ns"] = t0;
  j["per_rank"] = RanksJson(r);
  j["modules"] = ModulesJson(r);
  Json phases = Json::array();
  for (size_t i = 0; i < r.phases.size(); ++i) {
    Json x;
    x["rank"] = i;
    for (int p = 0; p < model::kNumPhases; ++p) x[std::string(model::kPhaseNames[p]) + "_ns"] = r.phases[i].busy_ns[p];
    phases.push_back(x);
  }
  j["phases"] = phases;
  j["imbalance"] = ImbalanceJson(r);
  if (!r.run_exports.empty()) j["run_exports"] = RunExportsJson(r, o.show_paths);
  j["window"] = WindowJson(r);
  j["verdict"] = VerdictJson(r);
  j["timeline"] = TimelineJson(r, t0);
  j["memory"] = MemoryJson(r, t0);
  Json diags = Json::array();
  for (const auto& d : r.diagnostics) {
    diags.push_back({{"severity", model::SeverityName(d.severity)},
                     {"id", d.id},
                     {"title", d.title},
                     {"detail", d.detail},
                     {"fix", d.fix}});
  }
  j["diagnostics"] = diags;
  j["capture"] = CaptureJson(r, o);
  j["interconnect"] = r.interconnect;
  j["notes"] = r.notes;
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

void PrintReportHtml(const model::Report& r, const RenderOptions& o, std::ostream& out) {
  const std::string_view tmpl = kHtmlTemplate;
  const size_t at = tmpl.find(kDataMarker);
  out << tmpl.substr(0, at);
  if (at == std::string_view::npos) return;
  out << EscapeJsonForScript(HtmlData(r, o).dump(-1, ' ', false, Json::error_handler_t::replace));
  out << tmpl.substr(at + kDataMarker.size());
}

}  // namespace cpprof::render
