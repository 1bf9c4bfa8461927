// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "pipeline/run_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analysis/capture_diagnostics.h"
#include "analysis/classify.h"
#include "analysis/clock_align.h"
#include "analysis/comm_match.h"
#include "analysis/module_sweep.h"
#include "analysis/overlap_tax.h"
#include "analysis/rank_summary.h"
#include "base/input_files.h"
#include "base/parallel.h"
#include "base/regex.h"
#include "base/saturating.h"
#include "base/stage_timer.h"
#include "model/global_id.h"
#include "nsys/capture_reader.h"
#include "nsys/export_reader.h"
#include "nsys/gpu_work_loader.h"
#include "nsys/memory_reader.h"
#include "nsys/nvtx_facts.h"
#include "pipeline/attribution.h"
#include "pipeline/run_exports.h"
#include "pipeline/source_files.h"

namespace cpprof::pipeline {

namespace {

constexpr int kNewestTestedSchema[2] = {3, 20};  // tests/data/real: nsys 2025.3.x exports
using model::kExportNameShift;
using model::RunPid;
static_assert(model::kMaxNameId < (int64_t{1} << kExportNameShift),
              "a kernel name id must not reach the export's bits");

// One export of the run (open: path, db, schema, capture facts, clock) and what is read from it.
struct Source : OpenedExport {
  Attribution attribution;
  // Phase 2.
  model::GpuWork work;
  model::MemoryUsage memory;
  std::map<int64_t, std::string> peak_module;  // globalPid -> module path of the peak's call
  model::NvtxFacts facts;
};

// The run: every export's processes, on the first export's clock.
struct Run {
  model::GpuWork work;
  model::MemoryUsage memory;
  std::map<int64_t, model::NcclRankInfo> nccl;
  std::map<int64_t, std::string> peak_module;
  std::vector<analysis::ModuleTreeNode> nodes;     // the module tree; empty: no module ranges anywhere
  std::vector<size_t> export_of_process;           // per work.processes
  std::vector<analysis::ModuleCall> module_calls;  // by process, then start
  int64_t module_ranges = 0;                       // the most of any export
  model::BacktraceModuleSummary backtraces;        // every export's
  AttributionFacts attribution;                    // exclude_work_pattern left to the caller
  std::vector<model::ModuleShapes> shapes;         // by path, the first export's first
};

// What one export's attribution says about itself, as the run's facts hold it.
AttributionFacts FactsOf(const Attribution& a) {
  AttributionFacts f;
  if (a.modules) {
    f.modules_overflowed = a.modules->overflowed();
    f.modules_too_deep = a.modules->too_deep();
    f.backward_ranges = a.modules->backward_ranges();
    f.backward_mapped = a.modules->backward_ranges_mapped();
  }
  f.cross_thread = a.cross_thread;
  f.warmup_range = a.warmup_range;
  return f;
}

// The interconnect between the GPUs, from `cpprof profile`'s <name>.doctor.json beside the
// export (the doctor's nvidia-smi topology); "" when there is none.
std::string ReadInterconnect(const std::string& export_path) {
  std::filesystem::path p(export_path);
  p.replace_extension(".doctor.json");
  std::ifstream in(p);
  if (!in) {
    // A per-rank export NAME.<rank>.sqlite: the doctor's findings are NAME.doctor.json.
    std::filesystem::path rank(export_path);
    rank.replace_extension();
    const std::string digits = rank.extension().string();
    if (digits.size() < 2 || digits.find_first_not_of("0123456789", 1) != std::string::npos) return "";
    rank.replace_extension(".doctor.json");
    in.open(rank);
    if (!in) return "";
  }
  try {
    auto j = nlohmann::json::parse(in);
    if (!j.contains("topology") || j["topology"].is_null()) return "";
    int nvlink = 0, pcie = 0, other = 0, min_links = INT32_MAX;
    for (const auto& l : j["topology"]["links"]) {
      std::string kind = l.value("kind", "other");
      if (kind == "nvlink") {
        ++nvlink;
        min_links = std::min(min_links, l.value("nvlinks", 0));
      } else {
        ++(kind == "pcie" ? pcie : other);
      }
    }
    if (nvlink + pcie + other == 0) return "";
    if (pcie == 0 && other == 0)
      return fmt::format("NVLink between all {} GPU pairs (at least {} links each)", nvlink, min_links);
    if (nvlink == 0) return fmt::format("PCIe only ({} GPU pairs)", pcie + other);
    return fmt::format("mixed: {} GPU pairs over NVLink, {} over PCIe or other paths", nvlink, pcie + other);
  } catch (const std::exception&) {
    return "";
  }
}

// Phase 2: the GPU ops in the window (given on the run's clock), memory, NVTX facts; with `hosts`,
// each op's launch and each process's syncs (the replay's: ProcessGpuWork::op_hosts, ::syncs).
Status ReadSourceWork(const model::Window& window, size_t threads, nsys::OpKeys keep_op_keys, bool hosts, Source& s) {
  nsys::LaunchTaggerFactory make_tagger;
  Attribution& attribution = s.attribution;
  hosts = hosts && attribution.host_calls.size() > 0;
  if (attribution.modules || hosts) {
    make_tagger = [&] {
      return [reader = analysis::CallTags::Reader(attribution.calls),
              host = analysis::HostCalls::Reader(attribution.host_calls), hosts](int64_t gpid, int64_t corr) mutable {
        analysis::LaunchTag t = reader.Find(gpid, corr);
        model::OpTag tag{static_cast<uint8_t>(t.phase), t.node, t.flags};
        if (hosts) {
          const model::HostLaunch h = host.Find(gpid, corr);
          tag.launch = h.start, tag.thread = h.thread;
        }
        return tag;
      };
    };
  }
  const model::Interval own_window{window.start_ns - s.clock.offset_ns, window.end_ns - s.clock.offset_ns};
  CPPROF_ASSIGN_OR_RETURN(s.work, nsys::LoadGpuWork(*s.db, s.schema, analysis::ClassifyKernel, make_tagger, threads,
                                                    nsys::kMinKernelRowsPerThread,
                                                    window.whole_capture ? nullptr : &own_window, keep_op_keys, hosts));
  if (hosts) {
    for (auto& p : s.work.processes) p.syncs = attribution.host_calls.Syncs(p.global_pid);
  }
  nsys::MemoryOptions memory_options;
  memory_options.peak_threads = false;  // the peak's module comes from the tagged launches below
  CPPROF_ASSIGN_OR_RETURN(s.memory, nsys::ReadMemoryUsage(*s.db, memory_options));
  // The module of the call that reached each peak, while the call tags are still here.
  for (const auto& p : nsys::PeakSeriesPerProcess(s.memory)) {
    if (!attribution.modules || p.peak_correlation_id == 0) continue;
    analysis::LaunchTag t = attribution.calls.Find(p.global_pid, p.peak_correlation_id);
    s.peak_module[p.global_pid] = NodePath(attribution.modules->nodes(), t.node);
  }
  attribution.calls = {};  // no longer needed: free them before the sweeps
  attribution.host_calls = {};
  CPPROF_ASSIGN_OR_RETURN(s.facts, attribution.has_nvtx
                                       ? nsys::ReadNvtxFacts(*s.db, &attribution.domains, &attribution.tally)
                                       : nsys::ReadNvtxFacts(*s.db));
  s.facts.damaged_runtime_rows = attribution.damaged_runtime_rows;
  s.Close();
  return OkStatus();
}

// An export's op shapes per module into the run's: the first export's of each path are kept.
void AddShapes(std::vector<model::ModuleShapes> mine, std::vector<model::ModuleShapes>& run) {
  for (auto& m : mine) {
    auto same = [&](const model::ModuleShapes& x) { return x.path == m.path; };
    if (std::none_of(run.begin(), run.end(), same)) run.push_back(std::move(m));
  }
}

// A process's ops shifted by `offset` onto the run's clock, their nodes renumbered by `node_map`.
void ShiftOps(int64_t offset, const std::vector<uint16_t>& node_map, model::ProcessGpuWork& p) {
  auto node = [&](uint16_t& n) {
    if (n < node_map.size()) n = node_map[n];
  };
  for (size_t c = 0; c < p.ops.num_chunks(); ++c) {
    for (auto& op : p.ops.chunk(c)) op.start += offset, node(op.node);
  }
  for (auto& op : p.long_ops) op.iv.start += offset, op.iv.end += offset, node(op.node);
  for (auto& op : p.edge_comm_ops) op.whole.start += offset, op.whole.end += offset, node(op.node);
  for (size_t c = 0; c < p.op_hosts.num_chunks(); ++c) {
    for (auto& h : p.op_hosts.chunk(c)) {
      if (h.start != model::kNoLaunch) h.start += offset;
    }
  }
  for (auto& h : p.syncs) h.start += offset, h.end += offset;
}

// Every export's processes into one run, times shifted onto the run's clock; of the NCCL ops
// outside `window`, those near its edges kept (analysis::KeepNearEdges).
Run MergeSources(std::vector<Source>& sources, const model::Window& window) {
  Run run;
  const bool several = sources.size() > 1;
  ModuleTreeMerger merger(run.nodes);
  for (size_t e = 0; e < sources.size(); ++e) {
    Source& s = sources[e];
    const int64_t offset = s.clock.offset_ns;
    auto pid = [&](int64_t gpid) { return several ? RunPid(e, gpid) : gpid; };
    // Two exports number their strings alike: a kernel name is its id plus the export's index << 40.
    const int64_t name_base = several ? static_cast<int64_t>(e) << kExportNameShift : 0;
    std::vector<uint16_t> node_map;
    if (s.attribution.modules) {
      const auto& m = *s.attribution.modules;
      node_map = merger.Add(m.nodes());
      run.module_ranges = std::max(run.module_ranges, m.module_ranges());
    }
    run.attribution.Add(FactsOf(s.attribution));
    run.backtraces.Add(s.attribution.backtraces);
    AddShapes(std::move(s.attribution.shapes), run.shapes);
    for (const auto& c : s.attribution.module_calls) {
      const uint16_t node = c.node < node_map.size() ? node_map[c.node] : analysis::kUnattributed;
      if (node != analysis::kUnattributed) run.module_calls.push_back({pid(c.global_pid), c.start + offset, node});
    }
    s.attribution.module_calls = {};
    bool identity = offset == 0;
    for (size_t n = 0; n < node_map.size() && identity; ++n) identity = node_map[n] == n;
    for (auto& p : s.work.processes) {
      p.global_pid = pid(p.global_pid);
      if (!identity) ShiftOps(offset, node_map, p);
      if (name_base) {
        std::unordered_map<int64_t, model::NameTotal> kernels;
        for (auto& [id, t] : p.kernels) kernels.emplace(id + name_base, t);
        p.kernels = std::move(kernels);
        auto rename = [&](int64_t& key) {
          if (!(key & model::kOpKeyMemOp)) key += name_base;
        };
        for (size_t c = 0; c < p.op_keys.num_chunks(); ++c) {
          for (auto& key : p.op_keys.chunk(c)) rename(key);
        }
        for (auto& op : p.long_ops) rename(op.key);
      }
      run.work.processes.push_back(std::move(p));
      run.export_of_process.push_back(e);
    }
    for (auto& [id, name] : s.work.names.kernel_names) run.work.names.kernel_names[id + name_base] = std::move(name);
    for (auto& [id, c] : s.work.names.kernel_classes) run.work.names.kernel_classes[id + name_base] = c;
    for (auto& [kind, name] : s.work.names.mem_op_names) run.work.names.mem_op_names.emplace(kind, std::move(name));
    for (auto& [gpid, info] : s.attribution.nccl_ranks) run.nccl[pid(gpid)] = info;
    for (auto& [gpid, path] : s.peak_module) run.peak_module[pid(gpid)] = std::move(path);
    // Memory: one series list, times on the run's clock.
    model::MemoryUsage& m = s.memory;
    if (e == 0) {
      run.memory.note = m.note;
      run.memory.counted_kinds = m.counted_kinds;
    }
    run.memory.captured |= m.captured;
    run.memory.ignored_events += m.ignored_events;
    run.memory.invalid_events += m.invalid_events;
    for (auto& series : m.series) {
      series.global_pid = pid(series.global_pid);
      series.peak_ns += offset;
      for (auto& point : series.timeline) point.time_ns += offset;
      run.memory.series.push_back(std::move(series));
    }
    s.work = {};
    s.memory = {};
  }
  run.attribution.modules_overflowed |= merger.overflowed();
  if (!window.whole_capture) analysis::KeepNearEdges(run.work.processes, {window.start_ns, window.end_ns});
  std::sort(run.module_calls.begin(), run.module_calls.end(), [](const auto& a, const auto& b) {
    return a.global_pid != b.global_pid ? a.global_pid < b.global_pid : a.start < b.start;
  });
  std::stable_sort(run.memory.series.begin(), run.memory.series.end(), [](const auto& a, const auto& b) {
    return a.global_pid != b.global_pid ? a.global_pid < b.global_pid : a.device < b.device;
  });
  return run;
}

}  // namespace

std::string NodePath(const std::vector<analysis::ModuleTreeNode>& nodes, int node) {
  std::string s;
  for (int n = node; n >= 0; n = nodes[n].parent) s = nodes[n].name + (s.empty() ? "" : "/") + s;
  return s;
}

std::vector<uint16_t> ModuleTreeMerger::Add(const std::vector<analysis::ModuleTreeNode>& mine) {
  std::vector<uint16_t> map(mine.size(), analysis::kUnattributed);
  for (size_t n = 0; n < mine.size(); ++n) {  // a parent's id is smaller than its children's
    const auto& t = mine[n];
    int parent = t.parent < 0 ? -1 : map[t.parent];
    auto key = std::make_tuple(parent, t.name, t.range, t.is_group);
    auto it = index_.find(key);
    if (it == index_.end()) {
      if (nodes_.size() >= analysis::kMaxModuleNodes) {  // fold into the parent
        overflowed_ = true;
        map[n] = static_cast<uint16_t>(std::max(parent, 0));
        continue;
      }
      it = index_.emplace(key, static_cast<int>(nodes_.size())).first;
      nodes_.push_back(t);
      nodes_.back().parent = parent;
    }
    map[n] = static_cast<uint16_t>(it->second);
  }
  return map;
}

Status CheckSameRun(const std::vector<std::string>& paths, bool force, const ExecContext& exec) {
  if (force || paths.size() < 2) return OkStatus();
  std::vector<OpenedExport> exports(paths.size());
  std::vector<OpenedExport*> open;
  for (auto& x : exports) open.push_back(&x);
  OpenRunOptions o;
  o.exec = exec;
  o.align_clocks = false;
  o.probe = false;  // only the capture facts: whether each export has the data is the command's to say
  return OpenRun(paths, o, open);
}

namespace {

// What every window's partial of a run shares: the exports, the ranks, the module tree, memory.
struct RunBase {
  std::vector<SourcePartial> sources;
  std::vector<std::string> notes;
  analysis::RankAssignment ranks;
  std::vector<model::GpuProcess> procs;   // by work.processes
  std::vector<size_t> export_of_process;  // by work.processes
  std::map<int64_t, model::NcclRankInfo> nccl;
  std::map<int64_t, std::string> peak_module;
  std::vector<model::MemorySeries> peaks;
  std::vector<analysis::ModuleCall> module_calls;  // by process, then start
  std::vector<analysis::ModuleTreeNode> nodes;
  std::vector<int> parent{-1};  // by node id
  model::ModuleGrouping grouping;
  AttributionFacts attribution;
  model::MemoryUsage memory;
  bool invalid_utf8 = false;  // some text read from the exports was not UTF-8
  std::vector<model::ModuleShapes> shapes;
};

// Phase 1, one export per thread: NVTX, runtime calls (with `hosts`, every call's start and thread
// kept for the replay), capture facts (and NCCL kernels); the clocks; the iteration marks on the
// run's clock.
Status ReadFacts(const std::vector<std::string>& paths, const ReportOptions& options,
                 const analysis::ModuleConfig& config, bool hosts, std::vector<Source>& sources,
                 RunIterations& iterations) {
  // A bad pattern is a usage error, said before the export is read.
  std::shared_ptr<const RE2> iteration_re;
  if (!options.iteration_range.empty()) {
    CPPROF_ASSIGN_OR_RETURN(iteration_re, CompileRegex(options.iteration_range, "--iteration-range", ExitCode::kUsage,
                                                       "'domain:text' of each NVTX range"));
  }
  const bool several = paths.size() > 1;
  StageTimer timer(options.exec);
  sources = std::vector<Source>(paths.size());
  const analysis::SourceReader read_source = MakeSourceReader(options.source_roots);
  std::vector<OpenedExport*> exports;
  for (auto& s : sources) exports.push_back(&s);
  // What the window and the clocks need: NVTX and runtime for the modules and iterations (and
  // the NCCL kernels, read by OpenRun, when there are several exports).
  OpenRunOptions open;
  open.exec = options.exec;
  open.force = options.force;
  open.read = [&](size_t e) -> Status {
    Source& s = sources[e];
    CPPROF_ASSIGN_OR_RETURN(s.attribution,
                            ReadAttribution(*s.db, config, iteration_re.get(), options.iteration_range,
                                            hosts ? Launches::kTagAndHost : Launches::kTag, read_source));
    return OkStatus();
  };
  CPPROF_RETURN_IF_ERROR(OpenRun(paths, open, exports));
  timer.Mark(several ? "attribution (NVTX, runtime), clocks aligned" : "attribution (NVTX, runtime)");
  // The iteration marks of every export, on the run's clock.
  for (size_t e = 0; e < sources.size(); ++e) {
    TakeIterationMarks(sources[e].attribution, e, several, sources[e].clock.offset_ns, iterations);
  }
  return OkStatus();
}

// Each export's part of the run (its clock, schema, capture facts and diagnostics), and a warning
// when an export's schema is newer than the newest tested.
void AddSourcePartials(std::vector<Source>& sources, RunBase& base) {
  std::vector<std::string> source_paths;
  for (const Source& s : sources) source_paths.push_back(s.path);
  const std::vector<std::string> names = DistinctNames(source_paths);
  for (size_t e = 0; e < sources.size(); ++e) {
    Source& s = sources[e];
    SourcePartial sp;
    sp.run_export.file = s.path;
    sp.run_export.name = names[e];
    sp.run_export.host = s.capture.host;
    sp.run_export.utc_start_ns = s.capture.utc_start_ns;
    sp.run_export.offset_ns = s.clock.offset_ns;
    sp.run_export.refine_ns = s.clock.refine_ns;
    sp.run_export.residual_ns = s.clock.residual_ns;
    sp.run_export.matched_ops = s.clock.matched_ops;
    sp.run_export.method = s.clock.method;
    sp.export_info.file = s.path;
    sp.export_info.schema_version = s.schema.schema_version;
    sp.export_info.nsys_version = s.schema.nsys_version;
    sp.export_info.captured = s.schema.present;
    sp.export_info.not_captured = s.schema.absent;
    sp.diagnostics = analysis::DiagnoseCapture(s.capture, s.facts);
    sp.interconnect = ReadInterconnect(s.path);
    sp.capture = std::move(s.capture);
    base.sources.push_back(std::move(sp));
  }
  // Input versions are a window: past the newest export schema tested, say so (columns may have
  // moved or changed meaning).
  for (const SourcePartial& s : base.sources) {
    int major = 0, minor = 0;
    if (std::sscanf(s.export_info.schema_version.c_str(), "%d.%d", &major, &minor) == 2 &&
        std::make_pair(major, minor) > std::make_pair(kNewestTestedSchema[0], kNewestTestedSchema[1])) {
      base.notes.push_back(
          fmt::format("warning: export schema {} is newer than the newest cpprof was tested with "
                      "({}.{}.x, nsys 2025.3): check the numbers against 'nsys stats', and "
                      "look for a newer cpprof",
                      s.export_info.schema_version, kNewestTestedSchema[0], kNewestTestedSchema[1]));
      break;
    }
  }
}

// Phase 2 (the GPU ops in `window`, memory, NVTX facts), the exports merged into one run, and
// what every window's partial shares. The ops go to `work` (with `hosts`, their launches and the
// syncs too).
StatusOr<RunBase> ReadWork(std::vector<Source>& sources, const model::Window& window,
                           const analysis::ModuleConfig& config, nsys::OpKeys keep_op_keys, bool hosts,
                           const ExecContext& exec, model::GpuWork& work) {
  StageTimer timer(exec);
  std::vector<Status> status(sources.size());
  const size_t threads = std::max<size_t>(1, exec.threads / std::min(exec.threads, sources.size()));
  ParallelFor(exec.threads, sources.size(),
              [&](size_t e) { status[e] = ReadSourceWork(window, threads, keep_op_keys, hosts, sources[e]); });
  for (const auto& s : status) CPPROF_RETURN_IF_ERROR(s);
  timer.Mark("GPU ops, memory");
  Run run = MergeSources(sources, window);
  RunBase base;
  base.invalid_utf8 = AnyInvalidUtf8(sources);
  base.peaks = nsys::PeakSeriesPerProcess(run.memory);

  AddSourcePartials(sources, base);
  for (const auto& p : run.work.processes) base.procs.push_back(static_cast<const model::GpuProcess&>(p));
  std::vector<const model::CaptureInfo*> source_captures;
  for (const auto& s : base.sources) source_captures.push_back(&s.capture);
  base.ranks = analysis::AssignRunRanks(base.procs, run.nccl, run.export_of_process, source_captures);
  base.notes.insert(base.notes.end(), base.ranks.notes.begin(), base.ranks.notes.end());
  if (run.memory.invalid_events) {
    base.notes.push_back(
        fmt::format("{} rows of {} (columns start, bytes) are not integers, negative, or past 2^62 "
                    "ns or 1 PiB: left out of the memory numbers",
                    run.memory.invalid_events, nsys::kMemoryEventsTable));
  }
  if (!run.nodes.empty()) {
    base.parent.clear();
    for (const auto& n : run.nodes) base.parent.push_back(n.parent);
  }
  base.export_of_process = std::move(run.export_of_process);
  base.nccl = std::move(run.nccl);
  base.peak_module = std::move(run.peak_module);
  base.nodes = std::move(run.nodes);
  base.module_calls = std::move(run.module_calls), base.shapes = std::move(run.shapes);
  base.grouping.source = config.source;
  for (const auto& g : config.groups) base.grouping.groups.push_back(g.name);
  base.grouping.module_ranges = run.module_ranges;
  base.grouping.backtraces = std::move(run.backtraces);
  base.attribution = std::move(run.attribution);
  base.attribution.exclude_work_pattern = config.exclude_work_pattern;
  base.memory = std::move(run.memory);
  work = std::move(run.work);
  return base;
}

// ModuleRankTime::calls of one process: its module ranges that started in the window (all of
// them for the whole capture).
void CountModuleCalls(const std::vector<analysis::ModuleCall>& calls, int64_t global_pid, const model::Window& window,
                      std::vector<model::ModuleRankTime>& nodes) {
  auto by_pid = [](const analysis::ModuleCall& c, int64_t pid) { return c.global_pid < pid; };
  auto first = std::lower_bound(calls.begin(), calls.end(), global_pid, by_pid);
  for (auto it = first; it != calls.end() && it->global_pid == global_pid; ++it) {
    if (!window.whole_capture && (it->start < window.start_ns || it->start >= window.end_ns)) continue;
    if (it->node < nodes.size()) ++nodes[it->node].calls;
  }
}

// The partial over `window` of the ops `procs` (by base.procs; the window already applied to
// them). One sweep over each rank's ops gives the summary and the modules; ranks are
// independent. RunPartial::nodes and ::memory are left for the caller.
RunPartial WindowPartial(const RunBase& base, std::vector<model::ProcessGpuWork>& procs, const model::GpuNames& names,
                         model::Window window, const ReportOptions& options) {
  StageTimer timer(options.exec);
  RunPartial out;
  out.sources = base.sources;
  out.notes = base.notes;
  out.invalid_utf8 = base.invalid_utf8;
  out.rank_method = base.ranks.method;
  out.world_size = base.ranks.world_size;
  out.window = std::move(window);
  const std::vector<size_t>& process_of_rank = base.ranks.process_of_rank;
  out.processes.resize(process_of_rank.size());
  for (size_t r = 0; r < process_of_rank.size(); ++r) {
    out.processes[r].sweep =
        analysis::StartSweep(procs[process_of_rank[r]], base.parent.size(), /*collect_comm_ops=*/true);
    if (!out.window.whole_capture) out.processes[r].sweep.window_start = out.window.start_ns;
    if (!out.window.whole_capture) out.processes[r].sweep.window_end = out.window.end_ns;
  }
  ParallelFor(options.exec.threads, out.processes.size(), [&](size_t r) {
    analysis::SweepModules(procs[process_of_rank[r]], base.parent, out.processes[r].sweep);
  });
  timer.Mark("sweeps");
  for (size_t r = 0; r < process_of_rank.size(); ++r) {
    ProcessPartial& pp = out.processes[r];
    const size_t p = process_of_rank[r];
    const model::ProcessGpuWork& proc = procs[p];
    pp.source = base.export_of_process[p];
    pp.process = base.procs[p];
    auto nccl = base.nccl.find(proc.global_pid);
    if (nccl != base.nccl.end()) pp.nccl = nccl->second;
    model::RankSummary& s = pp.summary;
    s = analysis::SummarizeRankFromSweep(proc, names, options.top_kernels, pp.sweep);
    if (!out.window.whole_capture) {
      s.first_start = out.window.start_ns;
      s.last_end = out.window.end_ns;
      s.span_ns = s.last_end - s.first_start;
      s.idle_ns = s.span_ns - s.busy_ns;
    }
    for (const auto& m : base.peaks) {
      if (m.global_pid != proc.global_pid) continue;
      s.peak_mem_bytes = m.peak_bytes;
      s.peak_mem_ns = m.peak_ns;
      auto module = base.peak_module.find(m.global_pid);
      if (module != base.peak_module.end()) s.peak_mem_module = module->second;
    }
    pp.excluded_ops = proc.excluded_ops;
    pp.warmup_ops = proc.warmup_ops;
    pp.warmup_ns = proc.warmup_ns;
    pp.outside_window_ops = proc.outside_window_ops;
    pp.outside_window_ns = proc.outside_window_ns;
    pp.clipped_ops = proc.clipped_ops;
    CountModuleCalls(base.module_calls, proc.global_pid, out.window, pp.sweep.nodes);
  }
  timer.Mark("summaries");
  out.grouping = base.grouping;
  out.attribution = base.attribution;
  out.shapes = base.shapes;
  return out;
}

const analysis::ModuleConfig& ConfigOf(const ReportOptions& options, analysis::ModuleConfig& builtin) {
  if (options.modules) return *options.modules;
  builtin = analysis::DefaultModuleConfig();
  return builtin;
}

__extension__ using Int128 = __int128;  // exact sums of op times (see SatAdd)

// One process's ops cut to each of `windows` (sorted by start), as nsys::LoadGpuWork reads them
// with that window: ops outside it counted and left out, those across its edges cut at them,
// warm-up ops and per-name totals counted; one pass over the ops. Needs the ops' keys.
std::vector<model::ProcessGpuWork> CutWindows(const model::ProcessGpuWork& all,
                                              const std::vector<model::Interval>& windows) {
  std::vector<model::ProcessGpuWork> out(windows.size());
  for (auto& q : out) {
    static_cast<model::GpuProcess&>(q) = all;
    q.invalid_ops = all.invalid_ops;
    q.excluded_ops = all.excluded_ops;
    for (const auto& [id, t] : all.kernels) q.kernels[id] = {0, 0, t.capture_instances, t.cls};
    for (const auto& [kind, t] : all.mem_ops) q.mem_ops[kind] = {0, 0, t.capture_instances, t.cls};
  }
  std::vector<int64_t> starts, max_end;  // max_end[i]: the latest end of windows 0..i
  for (const auto& w : windows) {
    starts.push_back(w.start);
    max_end.push_back(std::max(w.end, max_end.empty() ? INT64_MIN : max_end.back()));
  }
  std::vector<Int128> inside_ns(windows.size(), 0);
  std::vector<int64_t> inside_ops(windows.size(), 0);
  Int128 all_ns = 0;
  int64_t all_ops = 0;
  auto visit = [&](int64_t start, int64_t end, model::OpClass cls, uint8_t phase, uint16_t node, int64_t key) {
    ++all_ops;
    all_ns += end - start;
    // The windows an op is inside: those starting before its end (at or before a zero-length
    // op's start) and ending after its start.
    const int64_t before = start == end ? start + 1 : end;
    for (size_t i = std::lower_bound(starts.begin(), starts.end(), before) - starts.begin();
         i > 0 && max_end[i - 1] > start; --i) {
      const model::Interval& w = windows[i - 1];
      if (w.end <= start) continue;
      model::ProcessGpuWork& q = out[i - 1];
      ++inside_ops[i - 1];
      inside_ns[i - 1] += end - start;
      int64_t s = start, e = end;
      if (s < w.start || e > w.end) {
        ++q.clipped_ops;
        s = std::max(s, w.start);
        e = std::min(e, w.end);
      }
      if (key & model::kOpKeyWarmup) {
        ++q.warmup_ops;
        SatAdd(q.warmup_ns, e - s);
      }
      if (e - s <= model::kMaxOpDuration) {
        q.ops.push_back({s, static_cast<uint32_t>(e - s), cls, phase, node});
      } else {
        q.long_ops.push_back({{s, e}, cls, phase, node});
      }
      model::NameTotal& t =
          key & model::kOpKeyMemOp ? q.mem_ops[model::OpKeyMemKind(key)] : q.kernels[key & model::kOpKeyName];
      SatAdd(t.total_ns, e - s);
      ++t.instances;
    }
  };
  for (size_t c = 0; c < all.ops.num_chunks(); ++c) {
    auto ops = all.ops.chunk(c);
    auto keys = all.op_keys.chunk(c);
    for (size_t i = 0; i < ops.size(); ++i) {
      visit(ops[i].start, ops[i].end(), ops[i].cls, ops[i].phase, ops[i].node, keys[i]);
    }
  }
  for (const auto& op : all.long_ops) visit(op.iv.start, op.iv.end, op.cls, op.phase, op.node, op.key);
  constexpr Int128 kMax = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < windows.size(); ++i) {
    out[i].outside_window_ops = all_ops - inside_ops[i];
    out[i].outside_window_ns = static_cast<int64_t>(std::min(all_ns - inside_ns[i], kMax));
  }
  return out;
}

// A process's NCCL ops, whole (inside: false).
std::vector<model::EdgeCommOp> CommOpsOf(const model::ProcessGpuWork& p) {
  std::vector<model::EdgeCommOp> out;
  for (size_t c = 0; c < p.ops.num_chunks(); ++c) {
    for (const auto& op : p.ops.chunk(c)) {
      if (model::IsComm(op.cls) && op.duration > 0) out.push_back({{op.start, op.end()}, op.cls, op.node, false});
    }
  }
  for (const auto& op : p.long_ops) {
    if (model::IsComm(op.cls)) out.push_back({op.iv, op.cls, op.node, false});
  }
  return out;
}

// Each window's EdgeCommOps (`comm`: each process's NCCL ops; `procs[p][k]`: process p cut to
// window k), as the loader keeps them with that window and analysis::KeepNearEdges prunes them.
void AddEdgeCommOps(const std::vector<std::vector<model::EdgeCommOp>>& comm, const std::vector<model::Interval>& cut,
                    std::vector<std::vector<model::ProcessGpuWork>>& procs) {
  for (size_t k = 0; k < cut.size(); ++k) {
    const model::Interval& w = cut[k];
    auto inside = [&](const model::EdgeCommOp& e) { return e.whole.end > w.start && e.whole.start < w.end; };
    auto straddles = [&](const model::EdgeCommOp& e) {
      return inside(e) && (e.whole.start < w.start || e.whole.end > w.end);
    };
    int64_t reach = -1;
    for (const auto& ops : comm) {
      for (const auto& e : ops) {
        if (straddles(e)) reach = std::max(reach, e.whole.length());
      }
    }
    if (reach < 0) continue;
    for (size_t p = 0; p < comm.size(); ++p) {
      for (const auto& e : comm[p]) {
        if (straddles(e)) {
          procs[p][k].edge_comm_ops.push_back({e.whole, e.cls, e.node, true});
        } else if (!inside(e) && e.whole.end >= w.start - reach && e.whole.start <= w.end + reach) {
          procs[p][k].edge_comm_ops.push_back(e);
        }
      }
    }
  }
}

// What the ops must keep for the overlap tax (their names and launches), beside what the reading
// needs of them itself.
nsys::OpKeys TaxKeys(const ReportOptions& options, nsys::OpKeys own) {
  return options.overlap_tax ? nsys::OpKeys::kNamesAndLaunches : own;
}

// The overlap tax of `window` over the ops read with their keys and launches: the ops read with
// that window (cut at its edges) or the whole capture's (RunData) give the same.
model::OverlapTax OverlapTaxOf(const model::GpuWork& work, const RunBase& base, const model::Window& window,
                               const ReportOptions& options) {
  if (!options.overlap_tax) return {};
  StageTimer timer(options.exec);
  analysis::OverlapTaxInput in;
  for (size_t p : base.ranks.process_of_rank) in.ranks.push_back(&work.processes[p]);
  in.nodes = base.nodes.empty() ? nullptr : &base.nodes;
  const model::Interval cut{window.start_ns, window.end_ns};
  in.window = window.whole_capture ? nullptr : &cut;
  for (const auto& it : window.iterations) in.iterations += it.in_window && !it.warmup;
  model::OverlapTax tax = analysis::ComputeOverlapTax(in);
  timer.Mark("overlap tax");
  return tax;
}

// What the sweeps need of the ops read with their keys: the keys dropped (8 bytes an op).
void DropOpKeys(model::GpuWork& work) {
  for (auto& p : work.processes) {
    p.op_keys = {};
    p.op_launches = {};
    for (auto& op : p.long_ops) op.key = 0;
  }
}

}  // namespace

StatusOr<RunPartial> ReadRun(const std::vector<std::string>& paths, const ReportOptions& options, RunWork* keep) {
  if (paths.empty()) return Status(ExitCode::kUsage, "no export given");
  analysis::ModuleConfig builtin;
  const analysis::ModuleConfig& config = ConfigOf(options, builtin);
  std::vector<Source> sources;
  RunIterations it;
  const bool hosts = options.replay && keep;  // the replay's launch and sync edges (it needs iterations)
  CPPROF_RETURN_IF_ERROR(ReadFacts(paths, options, config, hosts, sources, it));
  CPPROF_ASSIGN_OR_RETURN(model::Window window, analysis::ChooseWindow(std::move(it.marks), it.method, options.window));
  model::GpuWork work;
  CPPROF_ASSIGN_OR_RETURN(RunBase base, ReadWork(sources, window, config, TaxKeys(options, nsys::OpKeys::kNone),
                                                 hosts && !window.iterations.empty(), options.exec, work));
  model::OverlapTax tax = OverlapTaxOf(work, base, window, options);
  DropOpKeys(work);
  RunPartial out = WindowPartial(base, work.processes, work.names, std::move(window), options);
  out.overlap_tax = std::move(tax);
  out.nodes = std::move(base.nodes);
  out.memory = std::move(base.memory);
  if (keep) {
    keep->work = std::move(work);
    keep->process_of_rank = base.ranks.process_of_rank;
  }
  return out;
}

void TakeIterationMarks(Attribution& a, size_t e, bool several, int64_t offset_ns, RunIterations& out) {
  if (out.method.empty()) out.method = a.iteration_method;
  for (auto& m : a.iteration_marks) {
    m.start += offset_ns;
    m.end += offset_ns;
    if (several) m.global_pid = RunPid(e, m.global_pid);
    out.marks.push_back(std::move(m));
  }
  a.iteration_marks = {};
}

struct RunData::Impl {
  ReportOptions options;
  RunBase base;
  model::GpuWork work;  // every op of the capture, with its key
  RunIterations iterations;
};

RunData::RunData() = default;
RunData::~RunData() = default;
RunData::RunData(RunData&&) noexcept = default;
RunData& RunData::operator=(RunData&&) noexcept = default;

StatusOr<RunData> ReadRunData(const std::vector<std::string>& paths, const ReportOptions& options) {
  if (paths.empty()) return Status(ExitCode::kUsage, "no export given");
  RunData data;
  data.impl_ = std::make_unique<RunData::Impl>();
  RunData::Impl& d = *data.impl_;
  d.options = options;
  analysis::ModuleConfig builtin;
  const analysis::ModuleConfig& config = ConfigOf(options, builtin);
  std::vector<Source> sources;
  CPPROF_RETURN_IF_ERROR(ReadFacts(paths, options, config, options.replay, sources, d.iterations));
  const RunIterations& it = d.iterations;
  // A bad --window is said before the ops are read.
  CPPROF_RETURN_IF_ERROR(analysis::ChooseWindow(it.marks, it.method, options.window).status());
  CPPROF_ASSIGN_OR_RETURN(model::Window all, analysis::ChooseWindow(it.marks, it.method, "all"));
  CPPROF_ASSIGN_OR_RETURN(d.base, ReadWork(sources, all, config, TaxKeys(options, nsys::OpKeys::kNames),
                                           options.replay && !all.iterations.empty(), options.exec, d.work));
  return data;
}

StatusOr<model::Window> RunData::Window(const std::string& spec) const {
  return analysis::ChooseWindow(impl_->iterations.marks, impl_->iterations.method, spec);
}

std::vector<RunPartial> RunData::Partials(std::vector<model::Window> windows, bool memory) const {
  Impl& d = *impl_;
  std::vector<size_t> order(windows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return windows[a].start_ns < windows[b].start_ns; });
  std::vector<model::Interval> cut;
  for (size_t i : order) cut.push_back({windows[i].start_ns, windows[i].end_ns});
  // By window, by process.
  std::vector<std::vector<model::ProcessGpuWork>> procs(windows.size());
  for (auto& p : procs) p.resize(d.work.processes.size());
  std::vector<std::vector<model::ProcessGpuWork>> by_process(d.work.processes.size());
  std::vector<std::vector<model::EdgeCommOp>> comm(d.work.processes.size());
  ParallelFor(d.options.exec.threads, d.work.processes.size(), [&](size_t p) {
    by_process[p] = CutWindows(d.work.processes[p], cut);
    comm[p] = CommOpsOf(d.work.processes[p]);
  });
  AddEdgeCommOps(comm, cut, by_process);
  std::vector<std::vector<model::EdgeCommOp>>().swap(comm);
  for (size_t p = 0; p < by_process.size(); ++p) {
    for (size_t k = 0; k < order.size(); ++k) procs[order[k]][p] = std::move(by_process[p][k]);
  }
  std::vector<std::vector<model::ProcessGpuWork>>().swap(by_process);
  std::vector<RunPartial> out;
  for (size_t i = 0; i < windows.size(); ++i) {
    out.push_back(WindowPartial(d.base, procs[i], d.work.names, std::move(windows[i]), d.options));
    std::vector<model::ProcessGpuWork>().swap(procs[i]);  // the window's ops, swept
    out.back().nodes = d.base.nodes;
    if (memory) out.back().memory = d.base.memory;
  }
  return out;
}

model::OverlapTax RunData::OverlapTax(const model::Window& window) const {
  return OverlapTaxOf(impl_->work, impl_->base, window, impl_->options);
}

RunPartial RunData::TakeAll(model::Window window, RunWork* keep, bool memory) {
  Impl& d = *impl_;
  DropOpKeys(d.work);
  RunPartial out = WindowPartial(d.base, d.work.processes, d.work.names, std::move(window), d.options);
  out.nodes = std::move(d.base.nodes);
  if (memory) out.memory = std::move(d.base.memory);
  if (keep) {
    keep->work = std::move(d.work);
    keep->process_of_rank = d.base.ranks.process_of_rank;
  }
  return out;
}

}  // namespace cpprof::pipeline
