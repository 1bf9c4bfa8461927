// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "pipeline/build_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "analysis/comm_match.h"
#include "analysis/cost_efficiency.h"
#include "analysis/cp_grid.h"
#include "analysis/divergence.h"
#include "analysis/gemm_dtype.h"
#include "analysis/overlap_tax.h"
#include "analysis/size_inference.h"
#include "analysis/verdict.h"
#include "base/compressed_file.h"
#include "base/saturating.h"
#include "base/stage_timer.h"
#include "pipeline/report_timeline.h"
#include "pipeline/run_partial.h"
#include "pipeline/run_reader.h"

namespace cpprof::pipeline {

namespace {

// The module rows: nodes with work on some rank, depth-first, siblings by mean busy time
// (then name); [unattributed] last.
void FillModules(const std::vector<analysis::ModuleTreeNode>& tree, const std::vector<ProcessPartial>& ranks_in,
                 model::Report& report) {
  std::vector<const analysis::RankModuleTimes*> sweeps;
  for (const auto& p : ranks_in) sweeps.push_back(&p.sweep);
  const size_t ranks = sweeps.size();
  std::vector<model::ModuleNode> all(tree.size());
  for (size_t i = 0; i < tree.size(); ++i) {
    model::ModuleNode& m = all[i];
    m.name = tree[i].name;
    m.range = tree[i].range;
    m.is_group = tree[i].is_group;
    m.depth = tree[i].depth;
    int comm_ranks = 0;
    int64_t most_caused = 0;
    for (size_t r = 0; r < ranks; ++r) {
      m.per_rank.push_back(sweeps[r]->nodes[i]);
      const auto& t = sweeps[r]->nodes[i];
      comm_ranks += t.comm_ns > 0;
      m.mean_busy_ns += t.busy_ns;
      m.max_busy_ns = std::max(m.max_busy_ns, t.busy_ns);
      if (t.caused_wait_ns > most_caused) most_caused = t.caused_wait_ns, m.straggler_rank = static_cast<int>(r);
    }
    if (ranks) m.mean_busy_ns /= static_cast<int64_t>(ranks);
    m.cp_distributed = comm_ranks >= 2;
  }
  auto has_work = [&](size_t i) {
    for (const auto& t : all[i].per_rank) {
      if (t.ops > 0) return true;
    }
    return false;
  };
  std::vector<std::vector<size_t>> children(tree.size());
  std::vector<size_t> roots;
  for (size_t i = 1; i < tree.size(); ++i) {
    if (!has_work(i)) continue;
    (tree[i].parent < 0 ? roots : children[tree[i].parent]).push_back(i);
  }
  auto by_time = [&](size_t a, size_t b) {
    if (all[a].mean_busy_ns != all[b].mean_busy_ns) return all[a].mean_busy_ns > all[b].mean_busy_ns;
    return all[a].name != all[b].name ? all[a].name < all[b].name : a < b;
  };
  std::function<void(size_t, int)> emit = [&](size_t i, int parent_row) {
    int row = static_cast<int>(report.modules.size());
    report.modules.push_back(all[i]);
    report.modules.back().parent = parent_row;
    std::sort(children[i].begin(), children[i].end(), by_time);
    for (size_t c : children[i]) emit(c, row);
  };
  std::sort(roots.begin(), roots.end(), by_time);
  for (size_t r : roots) emit(r, -1);
  emit(analysis::kUnattributed, -1);
}

}  // namespace

namespace {

// Several exports: each one's part of the run (its ranks), and notes on those that add nothing or
// were captured otherwise.
void AddRunExports(const RunPartial& run, model::Report& report) {
  const SourcePartial& first = run.sources.at(0);
  for (size_t e = 0; e < run.sources.size(); ++e) {
    model::RunExport x = run.sources[e].run_export;
    x.ranks.clear();
    for (size_t r = 0; r < run.processes.size(); ++r) {
      if (run.processes[r].source == e) x.ranks.push_back(static_cast<int>(r));
    }
    if (x.ranks.empty()) {
      report.notes.push_back(fmt::format("export '{}' holds no GPU work: it adds no rank to the run", x.name));
    }
    const model::CaptureInfo& c = run.sources[e].capture;
    if (c.reconstructed_flags != first.capture.reconstructed_flags) {
      report.notes.push_back(fmt::format("export '{}' was captured with other nsys options than '{}' ({} vs {})",
                                         x.name, first.run_export.name, c.reconstructed_flags,
                                         first.capture.reconstructed_flags));
    }
    report.run_exports.push_back(std::move(x));
  }
}

// What the readout says about a rank's ops it left out or found damaged.
void AddRankNotes(size_t r, const ProcessPartial& p, const model::RankSummary& s, const RunPartial& run,
                  model::Report& report) {
  if (p.excluded_ops) {
    report.notes.push_back(
        fmt::format("rank {}: {} GPU ops launched inside ranges matching --exclude-ranges '{}' "
                    "were left out",
                    r, p.excluded_ops, run.attribution.exclude_work_pattern));
  }
  if (p.warmup_ops && run.attribution.exclude_work_pattern.empty()) {
    int64_t total = 0;
    for (const auto& c : s.classes) total += c.sum_ns;
    // In a steady window the warm-up iterations are already left out: what is left inside it
    // (work launched in a warm-up range that runs into the window) is not worth a --window hint.
    report.notes.push_back(fmt::format(
        "rank {}: {} GPU ops ({:.1f}% of its GPU op time) were launched inside warm-up ranges (such as '{}'); "
        "{}",
        r, p.warmup_ops, total ? 100.0 * static_cast<double>(p.warmup_ns) / static_cast<double>(total) : 0.0,
        run.attribution.warmup_range,
        run.window.whole_capture
            ? "they count in every number here: --window steady (the default, when iterations are "
              "found) or --exclude-ranges warmup leaves them out"
            : "they run inside the steady-state window and count in its numbers (the warm-up iterations "
              "before it are left out); --exclude-ranges warmup leaves them out too"));
  }
  if (s.invalid_ops) {
    report.notes.push_back(
        fmt::format("rank {}: {} GPU ops (tables CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET; columns start, end) "
                    "end before they start, have times that are not integers, negative or past 2^62 ns: left "
                    "out of every number",
                    r, s.invalid_ops));
  }
}

// Each rank's summary with its communication budget (waiting, exposed transfer) from the run's
// matched NCCL ops; what the window left out, summed.
void AddRanks(RunPartial& run, const analysis::CommMatch& comm, model::Report& report) {
  model::Window& window = run.window;
  for (size_t r = 0; r < run.processes.size(); ++r) {
    ProcessPartial& p = run.processes[r];
    model::RankSummary s = std::move(p.summary);
    s.rank = static_cast<int>(r);
    if (!window.whole_capture) {
      window.left_out_ops += p.outside_window_ops;
      SatAdd(window.left_out_ns, p.outside_window_ns);
      window.clipped_ops += p.clipped_ops;
    }
    analysis::FillCommBudget(comm, r, p.sweep, s);
    AddRankNotes(r, p, s, run, report);
    report.ranks.push_back(std::move(s));
  }
}

// The module rows and what the module attribution says about itself.
void AddModules(RunPartial& run, model::Report& report) {
  if (!run.nodes.empty()) {
    FillModules(run.nodes, run.processes, report);
    if (run.attribution.modules_overflowed) {
      report.notes.push_back(
          fmt::format("more than {} distinct module paths: the deepest were folded into "
                      "their parents",
                      analysis::kMaxModuleNodes));
    }
    if (run.attribution.modules_too_deep) {
      report.notes.push_back(
          fmt::format("module ranges nest deeper than {} levels (an NVTX push without its pop?): deeper ones count in "
                      "their ancestor at that depth",
                      analysis::kMaxModuleDepth));
    }
  }
  if (run.attribution.cross_thread) {
    report.notes.push_back(
        fmt::format("{} NVTX ranges end on another thread than they start: left out of "
                    "module attribution (nsys leaves them out of GPU projection too)",
                    run.attribution.cross_thread));
  }
}

// Training: forward, backward and optimizer time per rank, and how well backward work maps to modules.
void AddPhases(const RunPartial& run, model::Report& report) {
  bool backward =
      std::any_of(run.processes.begin(), run.processes.end(), [](const auto& p) { return p.sweep.has_backward; });
  if (!backward) return;
  for (const auto& p : run.processes) {
    model::PhaseTimes ph;
    ph.has_backward = p.sweep.has_backward;
    ph.busy_ns = p.sweep.phase_busy_ns;
    report.phases.push_back(ph);
  }
  // Say how well backward work maps to modules, and how to get it when it does not.
  if (!run.nodes.empty() && run.attribution.backward_ranges > 0) {
    report.notes.push_back(
        fmt::format("backward per module: {} of {} backward ranges of autograd mapped to the "
                    "module of their forward op",
                    run.attribution.backward_mapped, run.attribution.backward_ranges));
  } else {
    report.notes.push_back(
        "backward work is not mapped to modules (it is all in [backward]): the capture has no "
        "autograd ranges with sequence numbers; profile with --pytorch=autograd-nvtx to get them");
  }
}

}  // namespace

model::Report FinishReport(RunPartial run, const ExecContext& exec) {
  StageTimer timer(exec);
  model::Report report;
  const SourcePartial& first = run.sources.at(0);
  report.export_info = first.export_info;
  report.rank_method = run.rank_method;
  report.world_size = run.world_size;
  report.notes = std::move(run.notes);
  report.invalid_utf8 = run.invalid_utf8;
  if (run.sources.size() > 1) AddRunExports(run, report);
  std::vector<int> parent{-1};
  if (!run.nodes.empty()) {
    parent.clear();
    for (const auto& n : run.nodes) parent.push_back(n.parent);
  }
  // Waiting vs transfer: NCCL ops matched across ranks, then each rank's transfers against its
  // compute (exposed transfer) and the splits per module.
  std::vector<const analysis::RankModuleTimes*> sweep_ptrs;
  for (const auto& p : run.processes) sweep_ptrs.push_back(&p.sweep);
  analysis::CommMatch comm = analysis::MatchComm(sweep_ptrs);
  timer.Mark("NCCL ops matched");
  // One rank at a time: each holds its transfers sorted, and they are cheap next to the sweeps.
  for (size_t r = 0; r < run.processes.size(); ++r) {
    auto& sweep = run.processes[r].sweep;
    analysis::SplitRankComm(sweep, r, parent, comm, sweep.nodes);
    sweep.hidden_segments = {};
  }
  comm.splits = {};
  AddRanks(run, comm, report);
  timer.Mark("waiting vs transfer, summaries");
  if (report.ranks.empty()) {
    report.notes.push_back(
        fmt::format("'{}' has a kernel table but no GPU work in it: did the "
                    "profiled run reach the GPU?",
                    run.sources.size() == 1 ? first.export_info.file : "every export"));
  }
  report.grouping = std::move(run.grouping);
  AddModules(run, report);
  AddPhases(run, report);
  report.capture = first.capture;
  report.module_shapes = std::move(run.shapes);
  report.overlap_tax = std::move(run.overlap_tax);
  report.diagnostics = first.diagnostics;
  report.interconnect = first.interconnect;
  report.memory = std::move(run.memory);
  report.imbalance = analysis::SummarizeImbalance(report.ranks, std::move(comm.kinds));
  if (auto d = analysis::DiagnoseDivergence(report.imbalance, report.world_size)) {  // after the warnings
    auto info = std::find_if(report.diagnostics.begin(), report.diagnostics.end(),
                             [](const auto& x) { return x.severity == model::Diagnostic::Severity::kInfo; });
    report.diagnostics.insert(info, std::move(*d));
  }
  model::Window& window = run.window;
  if (!window.whole_capture && window.left_out_ops) {
    window.description += fmt::format("; {} GPU ops ({:.3f} ms of GPU time) outside it left out", window.left_out_ops,
                                      static_cast<double>(window.left_out_ns) / 1e6);
  }
  report.window = std::move(window);
  report.verdict = analysis::MakeVerdict(report);
  return report;
}

StatusOr<model::Report> BuildReport(const std::string& path, const ReportOptions& options) {
  return BuildReport(std::vector<std::string>{path}, options);
}

namespace {

// The op cut at the window's edges as the loader cuts it (nsys/gpu_work_loader.cc); false when
// it lies outside. The ops of a report's own reading are already cut; a page's are not.
bool ClipToWindow(const model::Window& w, model::GpuOp& op) {
  const int64_t start = op.start, end = op.end();
  const bool inside = start == end ? start >= w.start_ns && start < w.end_ns : end > w.start_ns && start < w.end_ns;
  if (!inside) return false;
  op.start = std::max(start, w.start_ns);
  op.duration = static_cast<uint32_t>(std::min(end, w.end_ns) - op.start);
  return true;
}

}  // namespace

void AddReplay(const RunWork& work, const std::vector<analysis::ModuleTreeNode>& nodes,
               const std::vector<analysis::WhatIfEdit>& edits, const model::Window& window, const ExecContext& exec,
               model::Report& report, bool candidates) {
  StageTimer timer(exec);
  analysis::ReplayInput in;
  in.threads = exec.threads;
  in.candidates = candidates;
  in.nodes = nodes.empty() ? nullptr : &nodes;
  int64_t first = INT64_MAX;
  int64_t long_ops = 0;
  for (size_t r = 0; r < work.process_of_rank.size(); ++r) {
    const model::ProcessGpuWork& p = work.work.processes[work.process_of_rank[r]];
    auto& ops = in.ranks.emplace_back();
    auto& launches = in.launches.emplace_back();
    const bool hosts = p.op_hosts.size() == p.ops.size() && p.op_hosts.num_chunks() == p.ops.num_chunks();
    ops.reserve(p.ops.size());
    if (hosts) launches.reserve(p.ops.size());
    for (size_t c = 0; c < p.ops.num_chunks(); ++c) {
      const auto chunk = p.ops.chunk(c);
      for (size_t i = 0; i < chunk.size(); ++i) {
        model::GpuOp op = chunk[i];
        if (!window.whole_capture && !ClipToWindow(window, op)) continue;
        ops.push_back(op);
        if (hosts) launches.push_back(p.op_hosts.chunk(c)[i]);
      }
    }
    in.syncs.push_back(hosts ? p.syncs : std::vector<model::HostSync>{});
    long_ops += static_cast<int64_t>(p.long_ops.size());
    for (const auto& op : ops) first = std::min(first, op.start);
  }
  in.window_start = !window.whole_capture ? window.start_ns : first == INT64_MAX ? 0 : first;
  for (const auto& it : window.iterations) {
    if (it.in_window && !it.warmup) in.iterations.push_back(it);
  }
  in.overlap_tax = analysis::OverlapTaxByNode(report.overlap_tax, in.nodes);
  timer.Mark("replay: its ops and calls");
  report.replay = analysis::ReplayRun(in, edits);
  timer.Mark("replay: graph, self-check, edits");
  report.verdict = analysis::MakeVerdict(report);  // its opportunities and straggler from the replay
  if (long_ops) {
    report.notes.push_back(fmt::format("replay: {} GPU ops longer than {:.2f} s are not in its graph", long_ops,
                                       static_cast<double>(model::kMaxOpDuration) / 1e9));
  }
}

StatusOr<model::Report> BuildReport(const std::vector<std::string>& paths, const ReportOptions& options) {
  RunWork work;
  const bool keep = options.timeline || options.replay;
  CPPROF_ASSIGN_OR_RETURN(RunPartial run, ReadRun(paths, options, keep ? &work : nullptr));
  std::vector<analysis::ModuleTreeNode> nodes = keep ? run.nodes : std::vector<analysis::ModuleTreeNode>{};
  model::Report report = FinishReport(std::move(run), options.exec);
  AddEfficiency(paths, options, report);
  if (options.replay) {
    AddReplay(work, nodes, options.what_if, report.window, options.exec, report);
  }
  if (options.timeline) {
    CPPROF_RETURN_IF_ERROR(
        AddTimeline(work.work, work.process_of_rank, nodes.empty() ? nullptr : &nodes, options.timeline_bins, report));
  }
  return report;
}

StatusOr<Page> BuildPage(const std::vector<std::string>& paths, const ReportOptions& options, size_t max_iterations) {
  StageTimer timer(options.exec);
  CPPROF_ASSIGN_OR_RETURN(RunData data, ReadRunData(paths, options));
  CPPROF_ASSIGN_OR_RETURN(model::Window window, data.Window(options.window));
  Page page;
  // Each iteration's readout (window iter:N), all cut in one pass over the ops.
  const size_t n = std::min(window.iterations.size(), max_iterations);
  page.iterations_left_out = window.iterations.size() - n;
  std::vector<model::Window> iterations;
  for (size_t i = 0; i < n; ++i) {
    CPPROF_ASSIGN_OR_RETURN(model::Window w, data.Window(fmt::format("iter:{}", i)));
    iterations.push_back(std::move(w));
  }
  std::vector<RunPartial> parts = data.Partials(std::move(iterations), /*memory=*/false);
  for (RunPartial& part : parts) {
    model::Report it = FinishReport(std::move(part), options.exec);
    AddEfficiency(paths, options, it);
    for (auto& s : it.ranks) s.capture_counts.clear();  // what the page does not draw for an iteration
    page.iterations.push_back(std::move(it));
  }
  parts = {};
  timer.Mark("iterations' readouts");
  // The readout, then the whole capture's timeline from the ops themselves.
  const bool whole = window.whole_capture;
  if (!whole) {
    std::vector<RunPartial> readout = data.Partials({window}, /*memory=*/true);
    page.readout = FinishReport(std::move(readout[0]), options.exec);
    AddEfficiency(paths, options, page.readout);
    timer.Mark("readout");
  }
  CPPROF_ASSIGN_OR_RETURN(model::Window all, data.Window("all"));
  model::OverlapTax tax = data.OverlapTax(window);
  RunWork work;
  RunPartial run = data.TakeAll(whole ? std::move(window) : std::move(all), &work, /*memory=*/whole);
  std::vector<analysis::ModuleTreeNode> nodes = run.nodes;
  model::Report& timeline = whole ? page.readout : page.timeline;
  timeline = FinishReport(std::move(run), options.exec);
  AddEfficiency(paths, options, timeline);
  CPPROF_RETURN_IF_ERROR(
      AddTimeline(work.work, work.process_of_rank, nodes.empty() ? nullptr : &nodes, options.timeline_bins, timeline));
  page.readout.overlap_tax = std::move(tax);  // before the replay: its overlap edits pay the tax
  if (options.replay) AddReplay(work, nodes, options.what_if, page.readout.window, options.exec, page.readout);
  page.own_timeline = whole;
  timer.Mark("timeline");
  return page;
}

namespace {

// The sizes cpfold's `cpfold-config:` line gives, from the first log beside the (first) export:
// `cpprof profile` keeps the run's stdout as <name>.stdout.log (one log for a per-rank run's
// <name>.<rank> exports), tools/testdata as <name>.log. `why` says why a log gave none.
std::optional<analysis::Dims> DimsFromLogBeside(const std::vector<std::string>& paths, std::string& why) {
  if (paths.empty()) return std::nullopt;
  std::vector<std::filesystem::path> logs;
  const std::string first = WithoutCompressionSuffix(paths.front());  // run.sqlite.xz: run.log beside it
  std::filesystem::path base(first);
  base.replace_extension();
  const std::string rank = base.extension().string();
  const bool per_rank = rank.size() >= 2 && rank.find_first_not_of("0123456789", 1) == std::string::npos;
  for (const char* ext : {".stdout.log", ".log"}) {
    logs.push_back(std::filesystem::path(first).replace_extension(ext));
    if (per_rank) logs.push_back(std::filesystem::path(base).replace_extension(ext));
  }
  for (const auto& log : logs) {
    std::ifstream file(log);
    if (!file) continue;
    std::stringstream text;
    text << file.rdbuf();
    std::string missing;
    std::optional<analysis::Dims> dims = analysis::DimsFromCpfoldLog(text.str(), &missing);
    if (dims) {
      dims->source = "cpfold's config line in " + log.filename().string();
      for (const auto& [k, v] : dims->values) dims->origin[k] = dims->source;
      dims->origin["grid"] = dims->origin["dtype"] = dims->source;
      return dims;
    }
    if (!missing.empty()) why = missing + " (" + log.filename().string() + ")";
  }
  return std::nullopt;
}

// The entries of `d` whose origin is `flag` (the rest: the config's dims it was filled with).
analysis::Dims OnlyFrom(const analysis::Dims& d, const std::string& flag) {
  analysis::Dims out = d;
  out.values.clear();
  for (const auto& [k, v] : d.values) {
    auto o = d.origin.find(k);
    if (o != d.origin.end() && o->second == flag) out.values[k] = v;
  }
  return out;
}

}  // namespace

EfficiencyInputs FindEfficiencyInputs(const std::vector<std::string>& paths, const ReportOptions& options,
                                      std::string cost_config, const CaptureEvidence& capture) {
  const analysis::CostConfig builtin = options.cost ? analysis::CostConfig{} : analysis::DefaultCostConfig();
  const analysis::CostConfig& config = options.cost ? *options.cost : builtin;
  EfficiencyInputs in;
  in.cost_config = std::move(cost_config);
  std::string why;
  const analysis::Dims shapes = analysis::SizesFromShapes(
      capture.shapes ? *capture.shapes : std::vector<model::ModuleShapes>{}, config, capture.world_size, &in.notes);
  const analysis::Dims command =
      analysis::SizesFromCommandLine(capture.arguments ? *capture.arguments : std::vector<std::string>{});
  const std::optional<analysis::Dims> log = options.dims ? std::nullopt : DimsFromLogBeside(paths, why);
  const analysis::Dims kernels = analysis::DtypeFromKernels(capture.kernel_launches);
  const bool dtype_given = options.dims && options.dims->origin.count("dtype") > 0;
  for (const analysis::Dims* said : {&command, log ? &*log : nullptr}) {
    if (dtype_given || !said || !said->origin.count("dtype") || !kernels.origin.count("dtype") ||
        said->dtype == kernels.dtype) {
      continue;
    }
    in.notes.push_back(
        fmt::format("{} says dtype {} but the GEMM and attention kernels ran {} ({}): the kernels' "
                    "dtype decides the peak",
                    said->source, said->dtype, kernels.dtype, kernels.origin.at("dtype").substr(9)));
  }
  analysis::Dims config_dims;
  config_dims.values = config.dims;
  std::optional<analysis::Dims> given;
  if (options.dims) given = OnlyFrom(*options.dims, "--dims");
  in.dims = analysis::MergeDims(
      {given ? &*given : nullptr, &kernels, &shapes, &command, log ? &*log : nullptr, &config_dims});
  if (options.dims) {
    for (auto& w : analysis::ContradictedSizes(*options.dims, shapes)) in.notes.push_back("warning: " + std::move(w));
  }
  // The channels must come from somewhere: N from a command line alone, with the model's sizes all
  // defaults, would hold the AF3 sizes against another model.
  const bool channels = in.dims.origin.count("c_z") > 0 || options.dims.has_value();
  in.has_dims = in.dims.Get("N") > 0 && channels;
  if (in.dims.Get("N") > 0 && !channels) {
    const std::string& origin = in.dims.origin.at("N");
    const size_t colon = origin.find(": ");
    why = fmt::format(
        "{}N={} comes from the {} but nothing gives the model's channels (c_z, ...)", why.empty() ? "" : why + "; ",
        in.dims.Get("N"),
        colon == std::string::npos ? origin : origin.substr(0, colon) + " (" + origin.substr(colon + 2) + ")");
  }
  in.missing = (why.empty() ? "the model's sizes are unknown" : why) +
               ": give them with --dims N=...,c_z=...,grid=RxC,dtype=bf16, or capture with --pytorch "
               "autograd-shapes-nvtx (docs/cost-model.md)";
  return in;
}

CaptureEvidence EvidenceOf(const RunPartial& run) {
  CaptureEvidence evidence{
      &run.shapes, run.sources.empty() ? nullptr : &run.sources.front().capture.arguments, run.world_size, {}};
  for (const auto& p : run.processes) {
    for (const auto& [name, n] : p.summary.capture_counts) evidence.kernel_launches[name] += n;
  }
  return evidence;
}

namespace {

void AddEfficiency(const EfficiencyInputs& in, const analysis::CostConfig& config, model::Report& report) {
  report.efficiency = analysis::ComputeEfficiency(
      report, config, in.has_dims ? std::optional<analysis::Dims>(in.dims) : std::nullopt, in.missing);
  if (in.has_dims) {
    report.efficiency.notes.insert(report.efficiency.notes.begin(), in.notes.begin(), in.notes.end());
  }
  // The CP grid, where a size source says it (not the cost model's default 1 x 1); a 2-D grid
  // names the straggler by its place, so the verdict is made again.
  if (auto g = in.dims.origin.find("grid"); g != in.dims.origin.end()) {
    report.grid = analysis::GridFor(in.dims.grid_rows, in.dims.grid_cols, g->second, report.ranks.size());
    report.imbalance.ring_waits = analysis::RingWaits(report);
    if (report.grid.two_d()) report.verdict = analysis::MakeVerdict(report);
  }
}

}  // namespace

void AddEfficiency(const std::vector<std::string>& paths, const ReportOptions& options, model::Report& report) {
  const analysis::CostConfig builtin = options.cost ? analysis::CostConfig{} : analysis::DefaultCostConfig();
  CaptureEvidence capture{&report.module_shapes, &report.capture.arguments, report.world_size, {}};
  for (const auto& rank : report.ranks) {
    for (const auto& [name, n] : rank.capture_counts) capture.kernel_launches[name] += n;
  }
  AddEfficiency(FindEfficiencyInputs(paths, options, "", capture), options.cost ? *options.cost : builtin, report);
}

Status AddEfficiency(const EfficiencyInputs& inputs, model::Report& report) {
  analysis::CostConfig config = analysis::DefaultCostConfig();
  if (!inputs.cost_config.empty()) {
    CPPROF_ASSIGN_OR_RETURN(config, analysis::ParseCostConfig(inputs.cost_config, "the partial's --model-config"));
  }
  AddEfficiency(inputs, config, report);
  return OkStatus();
}

std::vector<std::optional<int64_t>> PeakMemoryPerRank(const model::Report& report) {
  std::vector<std::optional<int64_t>> out;
  for (const auto& s : report.ranks) {
    out.push_back(s.peak_mem_bytes >= 0 ? std::optional<int64_t>(s.peak_mem_bytes) : std::nullopt);
  }
  return out;
}

}  // namespace cpprof::pipeline
