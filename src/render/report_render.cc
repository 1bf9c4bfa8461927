// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/report_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "render/csv.h"
#include "render/efficiency_render.h"
#include "render/kernel_names.h"
#include "render/readout.h"
#include "render/replay_render.h"
#include "render/report_json.h"
#include "render/table.h"

namespace cpprof::render {

using model::OpClass;

// Classes with work, by kernel time (then name).
std::vector<int> ClassesByTime(const model::RankSummary& s) {
  std::vector<int> cls;
  for (int c = 0; c < model::kNumOpClasses; ++c) {
    if (s.classes[c].instances) cls.push_back(c);
  }
  std::sort(cls.begin(), cls.end(), [&](int a, int b) {
    if (s.classes[a].sum_ns != s.classes[b].sum_ns) return s.classes[a].sum_ns > s.classes[b].sum_ns;
    return model::kOpClassNames[a] < model::kOpClassNames[b];
  });
  return cls;
}

namespace {

std::string Device(int d) { return d < 0 ? "-" : fmt::format("cuda:{}", d); }

using Json = nlohmann::ordered_json;

Json CommKinds(const std::array<int64_t, model::kNumOpClasses>& ns) {
  Json j = Json::object();
  for (int k = 0; k < model::kNumOpClasses; ++k) {
    if (ns[k]) j[std::string(model::kOpClassNames[k])] = ns[k];
  }
  return j;
}

}  // namespace

Json PhasesJson(const model::Report& r) {
  Json per = Json::array();
  for (size_t i = 0; i < r.phases.size(); ++i) {
    Json x;
    x["rank"] = i;
    for (int p = 0; p < model::kNumPhases; ++p) x[std::string(model::kPhaseNames[p]) + "_ns"] = r.phases[i].busy_ns[p];
    per.push_back(x);
  }
  return per;
}

namespace {

Json MemoryJson(const model::Report& r) {
  const auto& m = r.memory;
  Json j;
  j["captured"] = m.captured;
  j["note"] = m.note;
  j["counted_kinds"] = m.counted_kinds;
  j["ignored_events"] = m.ignored_events;
  Json series = Json::array();
  for (const auto& s : m.series) {
    Json points = Json::array();
    for (const auto& p : s.timeline) points.push_back({p.time_ns, p.bytes});
    series.push_back({{"pid", s.pid},
                      {"device", s.device},
                      {"peak_bytes", s.peak_bytes},
                      {"peak_ns", s.peak_ns},
                      {"final_bytes", s.final_bytes},
                      {"events", s.events},
                      {"unmatched_frees", s.unmatched_frees},
                      {"timeline", points}});
  }
  j["series"] = series;
  return j;
}

Json CaptureJson(const model::Report& r) {
  const auto& c = r.capture;
  Json j;
  j["recorded"] = c.recorded;
  j["traced"] = c.traced;
  j["reconstructed_flags"] = c.reconstructed_flags;
  j["gpu_memory_usage"] = c.gpu_memory_usage;
  j["cuda_backtrace_kinds"] = c.cuda_backtrace_kinds;
  j["python_backtraces"] = c.python_backtraces;
  j["cpu_sampling"] = c.cpu_sampling;
  j["pytorch_autograd"] = c.pytorch_autograd;
  j["cuda_graph_trace_mode"] = c.cuda_graph_trace_mode;
  Json ft = Json::array();
  for (const auto& e : c.functions_trace)
    ft.push_back({{"domain", e.domain}, {"module", e.module}, {"functions", e.functions}});
  j["functions_trace"] = ft;
  j["command"] = c.command;
  j["arguments"] = c.arguments;
  Json env = Json::object();
  for (const auto& [k, v] : c.env) env[k] = v;
  j["env"] = env;
  j["run_duration_ms"] = c.run_duration_ms;
  Json msgs = Json::array();
  for (const auto& m : c.messages) {
    msgs.push_back({{"severity", m.severity}, {"source", m.source}, {"text", m.text}, {"count", m.count}});
  }
  j["nsys_messages"] = msgs;
  return j;
}

Json DiagnosticsJson(const model::Report& r) {
  Json a = Json::array();
  for (const auto& d : r.diagnostics) {
    a.push_back({{"severity", model::SeverityName(d.severity)},
                 {"id", d.id},
                 {"title", d.title},
                 {"detail", d.detail},
                 {"fix", d.fix}});
  }
  return a;
}

}  // namespace

Json ImbalanceJson(const model::Report& r) {
  const auto& im = r.imbalance;
  Json j;
  j["straggler_rank"] = im.straggler_rank;
  j["straggler_caused_wait_ns"] = im.straggler_caused_wait_ns;
  j["straggler_last_arrivals"] = im.straggler_last_arrivals;
  j["instances"] = im.instances;
  j["busiest_rank"] = im.busiest_rank;
  j["busy_spread"] = im.busy_spread;
  j["compute_spread"] = im.compute_spread;
  Json cs = Json::array();
  for (const auto& c : im.collectives) {
    Json per = Json::array();
    for (const auto& p : c.per_rank) {
      per.push_back({{"ops", p.ops},
                     {"unmatched_ops", p.unmatched_ops},
                     {"time_ns", p.time_ns},
                     {"wait_ns", p.wait_ns},
                     {"transfer_ns", p.transfer_ns},
                     {"unmatched_ns", p.unmatched_ns},
                     {"exposed_transfer_ns", p.exposed_transfer_ns},
                     {"last_arrivals", p.last_arrivals},
                     {"caused_wait_ns", p.caused_wait_ns}});
    }
    Json groups = Json::array();
    for (const auto& g : c.groups) {
      groups.push_back(
          {{"ranks", g.ranks}, {"instances", g.instances}, {"wait_ns", g.wait_ns}, {"waited_for_ns", g.waited_for_ns}});
    }
    cs.push_back({{"kind", model::Name(c.kind)},
                  {"instances", c.instances},
                  {"edge_instances", c.edge_instances},
                  {"per_rank_count", c.per_rank_count},
                  {"start_spread_sum_ns", c.start_spread_sum_ns},
                  {"start_spread_max_ns", c.start_spread_max_ns},
                  {"per_rank", per},
                  {"groups", groups}});
  }
  j["collectives"] = cs;
  j["waited_for_ns"] = im.waited_for_ns;
  Json rings = Json::array();
  for (const auto& w : im.ring_waits) {
    rings.push_back({{"ring", w.ring},
                     {"ranks", w.ranks},
                     {"wait_ns", w.wait_ns},
                     {"most_waited_for", w.most_waited_for},
                     {"most_ns", w.most_ns}});
  }
  j["ring_waits"] = rings;
  j["grid"] =
      r.grid.known() ? Json{{"rows", r.grid.rows}, {"cols", r.grid.cols}, {"source", r.grid.source}} : Json(nullptr);
  return j;
}

Json RunExportsJson(const model::Report& r, bool show_paths) {
  Json out = Json::array();
  for (const auto& x : r.run_exports) {
    Json e;
    if (show_paths) e["file"] = x.file;
    e["name"] = x.name;
    e["host"] = x.host;
    e["ranks"] = x.ranks;
    e["utc_start_ns"] = x.utc_start_ns;
    e["offset_ns"] = x.offset_ns;
    e["refine_ns"] = x.refine_ns;
    e["residual_ns"] = x.residual_ns;
    e["matched_ops"] = x.matched_ops;
    e["method"] = x.method;
    out.push_back(std::move(e));
  }
  return out;
}

Json WindowJson(const model::Report& r) {
  const auto& w = r.window;
  Json j;
  j["requested"] = w.requested;
  j["kind"] = w.kind;
  j["method"] = w.method;
  j["description"] = w.description;
  j["whole_capture"] = w.whole_capture;
  j["start_ns"] = w.whole_capture ? Json(nullptr) : Json(w.start_ns);
  j["end_ns"] = w.whole_capture ? Json(nullptr) : Json(w.end_ns);
  j["iter_median_ns"] = w.iter_median_ns;
  j["iter_min_ns"] = w.iter_min_ns;
  j["iter_max_ns"] = w.iter_max_ns;
  j["left_out_ops"] = w.left_out_ops;
  j["left_out_ns"] = w.left_out_ns;
  j["clipped_ops"] = w.clipped_ops;
  Json it = Json::array();
  for (const auto& t : w.iterations) {
    it.push_back({{"name", t.name},
                  {"start_ns", t.start_ns},
                  {"end_ns", t.end_ns},
                  {"warmup", t.warmup},
                  {"in_window", t.in_window}});
  }
  j["iterations"] = it;
  return j;
}

Json VerdictJson(const model::Report& r) {
  return {{"summary", r.verdict.summary},
          {"straggler_rank", r.verdict.straggler_rank},
          {"opportunities", r.verdict.opportunities},
          {"warnings", r.verdict.warnings}};
}

Json RankJson(const model::RankSummary& s) {
  Json x;
  x["rank"] = s.rank;
  x["device"] = s.device;
  x["pid"] = s.pid;
  x["process"] = s.process;
  x["first_start_ns"] = s.first_start;
  x["last_end_ns"] = s.last_end;
  x["span_ns"] = s.span_ns;
  x["busy_ns"] = s.busy_ns;
  x["compute_only_ns"] = s.compute_only_ns;
  x["comm_only_ns"] = s.comm_only_ns;
  x["both_ns"] = s.both_ns;
  x["idle_ns"] = s.idle_ns;
  x["comm_ns"] = s.comm_ns;
  x["compute_ns"] = s.compute_ns;
  x["wait_ns"] = s.wait_ns;
  x["transfer_ns"] = s.transfer_ns;
  x["unmatched_ns"] = s.unmatched_ns;
  x["exposed_transfer_ns"] = s.exposed_transfer_ns;
  x["exposed_wait_ns"] = s.exposed_wait_ns;
  x["launch_gap_ns"] = s.launch_gap_ns;
  x["host_stall_ns"] = s.host_stall_ns;
  x["launch_bound"] = s.launch_bound;
  x["ops"] = s.ops;
  x["invalid_ops"] = s.invalid_ops;
  x["peak_mem_bytes"] = s.peak_mem_bytes >= 0 ? Json(s.peak_mem_bytes) : Json(nullptr);
  x["peak_mem_ns"] = s.peak_mem_bytes >= 0 ? Json(s.peak_mem_ns) : Json(nullptr);
  x["peak_mem_module"] = s.peak_mem_module;
  Json cls = Json::object();
  for (int k : ClassesByTime(s)) {
    const auto& ct = s.classes[k];
    cls[std::string(model::kOpClassNames[k])] = {{"kind", model::Kind(static_cast<OpClass>(k))},
                                                 {"instances", ct.instances},
                                                 {"sum_ns", ct.sum_ns},
                                                 {"union_ns", ct.union_ns}};
  }
  x["classes"] = cls;
  Json comm_kinds = Json::object();
  for (int k = 0; k < model::kNumOpClasses; ++k) {
    const auto& ct = s.classes[k];
    if (!model::IsComm(static_cast<OpClass>(k)) || ct.instances == 0) continue;
    comm_kinds[std::string(model::kOpClassNames[k])] = {{"union_ns", ct.union_ns}, {"hidden_ns", ct.hidden_ns}};
  }
  x["comm_by_kind"] = comm_kinds;
  Json top = Json::array();
  for (const auto& kt : s.top_kernels) {
    top.push_back({{"name", kt.name},
                   {"short_name", ShortKernelName(kt.name)},
                   {"class", model::Name(kt.cls)},
                   {"total_ns", kt.total_ns},
                   {"instances", kt.instances}});
  }
  x["top_kernels"] = top;
  return x;
}

Json ModulesJson(const model::Report& r) {
  Json j;
  j["definition"] =
      "busy_ns: GPU busy time attributed to the innermost module range around the CUDA call that launched "
      "the work (overlapping work of several modules is shared equally), including the module's children; "
      "top-level rows plus [unattributed] add up to the rank's busy_ns. comm_ns and comm_by_kind: wall time "
      "during which communication of the module or its children ran; hidden_ns: the part of comm_ns during "
      "which compute (any non-communication GPU work) ran. cp_distributed: communication on two or more ranks. "
      "backward_ns: the part of busy_ns launched by the backward pass (autograd's threads), mapped to the module "
      "of the forward op through autograd's sequence numbers (--pytorch=autograd-nvtx ranges); backward work "
      "that cannot be mapped stays in the [backward] row.";
  j["grouping"] = {
      {"source", r.grouping.source}, {"groups", r.grouping.groups}, {"module_ranges", r.grouping.module_ranges}};
  if (const model::BacktraceModuleSummary& b = r.grouping.backtraces; !b.empty()) {
    j["grouping"]["python_backtraces"] = {{"backtraces", b.backtraces},
                                          {"used", b.used},
                                          {"in_nvtx_modules", b.in_nvtx_modules},
                                          {"calls", b.ranges},
                                          {"methods", b.methods},
                                          {"source_files_read", b.files_read},
                                          {"source_files_missing", b.files_missing},
                                          {"frames_not_matching_source", b.frames_not_matching},
                                          {"damaged", b.damaged}};
  }
  Json coverage = Json::array();
  for (const auto& s : CpSplitPerRank(r)) {
    const int64_t all = s.named_ns() + s.unattributed_ns;
    coverage.push_back(all ? static_cast<double>(s.named_ns()) / static_cast<double>(all) : 0.0);
  }
  j["named_module_share_per_rank"] = std::move(coverage);
  Json rows = Json::array();
  for (const auto& m : r.modules) {
    Json x;
    x["name"] = m.name;
    x["range"] = m.range;
    x["parent"] = m.parent;
    x["depth"] = m.depth;
    x["group"] = m.is_group;
    x["cp_distributed"] = m.cp_distributed;
    x["mean_busy_ns"] = m.mean_busy_ns;
    x["max_busy_ns"] = m.max_busy_ns;
    x["straggler_rank"] = m.straggler_rank;
    Json per = Json::array();
    for (const auto& t : m.per_rank) {
      per.push_back({{"busy_ns", t.busy_ns},
                     {"own_ns", t.own_ns},
                     {"backward_ns", t.backward_ns},
                     {"comm_ns", t.comm_ns},
                     {"hidden_ns", t.hidden_ns},
                     {"comm_by_kind", CommKinds(t.comm_kind_ns)},
                     {"wait_ns", t.wait_ns},
                     {"transfer_ns", t.transfer_ns},
                     {"exposed_transfer_ns", t.exposed_transfer_ns},
                     {"caused_wait_ns", t.caused_wait_ns},
                     {"last_arrivals", t.last_arrivals},
                     {"host_idle_ns", t.host_idle_ns},
                     {"ops", t.ops}});
    }
    x["per_rank"] = per;
    rows.push_back(x);
  }
  j["rows"] = rows;
  return j;
}

namespace {
void PrintReportTextLines(const model::Report& r, const RenderOptions& o, std::ostream& out);
}  // namespace

// The readout at the line width: tables fit it (names shortened, free-text columns under their
// rows), then the prose is wrapped.
void PrintReportText(const model::Report& r, const RenderOptions& o, std::ostream& out) {
  TextWidthScope width(o.width);
  std::ostringstream text;
  PrintReportTextLines(r, o, text);
  out << WrapLines(text.str(), o.width);
}

namespace {

// The header: the export's nsys and schema versions, the ranks and how they were assigned.
void PrintHeader(const model::Report& r, const RenderOptions& o, std::ostream& out) {
  const auto& e = r.export_info;
  out << "cpprof report";
  if (o.show_paths) out << ": " << e.file;
  out << fmt::format("  (nsys {}, export schema {})\n", e.nsys_version.empty() ? "unknown" : e.nsys_version,
                     e.schema_version.empty() ? "unknown" : e.schema_version);
  out << fmt::format("{} rank{}, assigned by {}\n", r.ranks.size(), r.ranks.size() == 1 ? "" : "s", r.rank_method);
}

// GPU time per rank over its span or the window: busy split into compute-only, comm-only and both.
void PrintRankTimes(const model::Report& r, std::ostream& out) {
  out << (r.window.whole_capture ? "GPU time per rank over its span (first op start to last op end):\n"
                                 : "GPU time per rank over the window:\n")
      << "  compute-only + comm-only + both = busy;  busy + idle = span\n";
  TextTable t({{"rank"},
               {"device", TextTable::Align::kLeft},
               {"span"},
               {"busy"},
               {"compute-only"},
               {"comm-only"},
               {"both"},
               {"idle"},
               {"comm % of busy"},
               {"hidden comm %"}});
  for (const auto& s : r.ranks) {
    t.AddRow({std::to_string(s.rank), Device(s.device), Ms(s.span_ns), Ms(s.busy_ns), Ms(s.compute_only_ns),
              Ms(s.comm_only_ns), Ms(s.both_ns), Ms(s.idle_ns), Percent(s.comm_ns, s.busy_ns),
              Percent(s.both_ns, s.comm_ns)});
  }
  t.Print(out, "  ");
  out << "  hidden comm % = time communication overlapped compute / communication time\n\n";
}

// One rank's GPU time by op class.
void PrintRankClasses(const model::RankSummary& s, std::ostream& out) {
  out << fmt::format("Rank {} ({}, pid {}{}): GPU time by class\n", s.rank, Device(s.device), s.pid,
                     s.process.empty() ? "" : ", " + s.process);
  TextTable c({{"class", TextTable::Align::kLeft},
               {"kind", TextTable::Align::kLeft},
               {"instances"},
               {"kernel time"},
               {"wall time"},
               {"% of span"}});
  for (int k : ClassesByTime(s)) {
    const auto& ct = s.classes[k];
    c.AddRow({std::string(model::kOpClassNames[k]), std::string(model::Kind(static_cast<OpClass>(k))),
              std::to_string(ct.instances), Ms(ct.sum_ns), Ms(ct.union_ns), Percent(ct.union_ns, s.span_ns)});
  }
  c.Print(out, "  ");
  out << "  kernel time sums durations (overlaps count twice); wall time is their union\n\n";
}

// One rank's top kernels and memory ops by time.
void PrintRankKernels(const model::RankSummary& s, const RenderOptions& o, std::ostream& out) {
  out << fmt::format("Rank {}: top {} kernels and memory ops by time\n", s.rank, s.top_kernels.size());
  // Names are shortened by template arguments (render/kernel_names.h), never cut in the middle:
  // one longer than the room the line leaves (a cuBLAS name without templates, or a narrow
  // terminal) loses its namespaces, then its end, unless --full-names.
  // Full names too long for the line go whole under their rows.
  TextTable k(
      {{"time"},
       {"instances"},
       {"class", TextTable::Align::kLeft},
       {"name", TextTable::Align::kLeft, 0, o.full_names ? TextTable::Overflow::kStack : TextTable::Overflow::kElide}});
  size_t widths[3] = {4, 9, 5};  // the headers
  for (const auto& kt : s.top_kernels) {
    widths[0] = std::max(widths[0], Ms(kt.total_ns).size());
    widths[1] = std::max(widths[1], std::to_string(kt.instances).size());
    widths[2] = std::max(widths[2], model::Name(kt.cls).size());
  }
  const size_t line = TextWidthScope::Current(), used = 2 + widths[0] + widths[1] + widths[2] + 3 * 2;
  const size_t room = line > used + 24 ? line - used : 0;
  for (const auto& kt : s.top_kernels) {
    std::string name = KernelNameForText(kt.name, o.full_names);
    if (!o.full_names) name = FitKernelName(std::move(name), room);
    k.AddRow({Ms(kt.total_ns), std::to_string(kt.instances), std::string(model::Name(kt.cls)), std::move(name)});
  }
  k.Print(out, "  ");
  out << '\n';
}

// The readout's lines before wrapping: the header, the verdict, each section, each rank's classes
// and kernels.
void PrintReportTextLines(const model::Report& r, const RenderOptions& o, std::ostream& out) {
  PrintHeader(r, o, out);
  if (r.ranks.empty()) return;
  out << "Times in ms; \"at s\" = seconds since the capture started (as in the HTML page and the Chrome trace). "
         "comm = NCCL kernels and peer copies; compute = all other GPU work (kernels, memcpy, memset).\n";
  ReadoutOptions ro;
  ro.module_depth = o.module_depth;
  PrintVerdict(r, ro, out);
  PrintRankTimes(r, out);
  PrintRunExports(r, ro, out);
  PrintBudget(r, ro, out);
  PrintIterations(r, ro, out);
  PrintReplay(r, /*markdown=*/false, out);
  PrintModules(r, ro, out);
  PrintEfficiency(r, /*markdown=*/false, out);
  PrintCommunication(r, ro, out);
  PrintImbalance(r, ro, out);
  PrintPhases(r, ro, out);
  PrintMemory(r, ro, out);
  PrintCapture(r, ro, out);
  for (const auto& s : r.ranks) {
    PrintRankClasses(s, out);
    PrintRankKernels(s, o, out);
  }
}

}  // namespace

Json ReportJson(const model::Report& r, const RenderOptions& o) {
  Json j;
  j["schema"] = fmt::format("cpprof.report/{}", model::Report::kSchemaVersion);
  Json ex;
  if (o.show_paths) ex["file"] = r.export_info.file;
  ex["schema_version"] = r.export_info.schema_version;
  ex["nsys_version"] = r.export_info.nsys_version;
  ex["captured"] = r.export_info.captured;
  ex["not_captured"] = r.export_info.not_captured;
  j["export"] = ex;
  if (!r.run_exports.empty()) j["run_exports"] = RunExportsJson(r, o.show_paths);
  j["window"] = WindowJson(r);
  j["verdict"] = VerdictJson(r);
  j["ranks"] = {{"method", r.rank_method}, {"world_size", r.world_size}, {"count", r.ranks.size()}};
  Json per = Json::array();
  for (const auto& s : r.ranks) per.push_back(RankJson(s));
  j["per_rank"] = per;
  j["modules"] = ModulesJson(r);
  j["phases"] = PhasesJson(r);
  j["imbalance"] = ImbalanceJson(r);
  j["memory"] = MemoryJson(r);
  j["capture"] = CaptureJson(r);
  j["diagnostics"] = DiagnosticsJson(r);
  j["interconnect"] = r.interconnect.empty() ? Json(nullptr) : Json(r.interconnect);
  if (HasEfficiencyJson(r)) j["efficiency"] = EfficiencyJson(r);  // absent when the sizes are unknown
  if (HasOverlapTaxJson(r)) j["overlap_tax"] = OverlapTaxJson(r);
  if (r.replay.built || r.replay.why_not != model::kReplayNotAsked) j["replay"] = ReplayJson(r);
  j["notes"] = r.notes;
  return j;
}

void PrintReportJson(const model::Report& r, const RenderOptions& o, std::ostream& out) {
  out << ReportJson(r, o).dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
}

void PrintReportMarkdown(const model::Report& r, const RenderOptions& o, std::ostream& out) {
  ReadoutOptions ro;
  ro.module_depth = o.module_depth;
  render::PrintReportMarkdown(r, ro, out);
}

void PrintReportCsv(const model::Report& r, const RenderOptions&, std::ostream& out) {
  CsvWriter w(out);
  w.Row({"section", "rank", "item", "class", "instances", "time_ns", "wall_ns"});
  for (const auto& s : r.ranks) {
    std::string rank = std::to_string(s.rank);
    auto metric = [&](const char* name, int64_t v) { w.Row({"rank", rank, name, "", "", std::to_string(v), ""}); };
    metric("span", s.span_ns);
    metric("busy", s.busy_ns);
    metric("compute_only", s.compute_only_ns);
    metric("comm_only", s.comm_only_ns);
    metric("both", s.both_ns);
    metric("idle", s.idle_ns);
    metric("wait", s.wait_ns);
    metric("transfer", s.transfer_ns);
    metric("unmatched", s.unmatched_ns);
    metric("exposed_transfer", s.exposed_transfer_ns);
    metric("exposed_wait", s.exposed_wait_ns);
    metric("launch_gaps", s.launch_gap_ns);
    for (int k : ClassesByTime(s)) {
      const auto& ct = s.classes[k];
      w.Row({"class", rank, std::string(model::kOpClassNames[k]), model::Kind(static_cast<OpClass>(k)),
             std::to_string(ct.instances), std::to_string(ct.sum_ns), std::to_string(ct.union_ns)});
    }
    for (const auto& kt : s.top_kernels) {
      w.Row({"kernel", rank, kt.name, std::string(model::Name(kt.cls)), std::to_string(kt.instances),
             std::to_string(kt.total_ns), ""});
    }
  }
  // Modules: item is the path from the top-level row ("trunk/CPFoldModel.trunk"); class is CP or
  // serial; time_ns the attributed busy time; wall_ns the communication wall time.
  std::vector<std::string> path(r.modules.size());
  for (size_t i = 0; i < r.modules.size(); ++i) {
    const auto& m = r.modules[i];
    path[i] = m.parent < 0 ? m.name : path[m.parent] + "/" + m.name;
    for (size_t k = 0; k < m.per_rank.size(); ++k) {
      w.Row({"module", std::to_string(k), path[i], m.cp_distributed ? "CP" : "serial",
             std::to_string(m.per_rank[k].ops), std::to_string(m.per_rank[k].busy_ns),
             std::to_string(m.per_rank[k].comm_ns)});
    }
  }
}

}  // namespace cpprof::render
