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
#include "analysis/module_sweep.h"
#include "analysis/rank_summary.h"
#include "base/input_files.h"
#include "base/parallel.h"
#include "base/regex.h"
#include "base/stage_timer.h"
#include "nsys/capture_reader.h"
#include "nsys/export_reader.h"
#include "nsys/gpu_work_loader.h"
#include "nsys/memory_reader.h"
#include "nsys/nvtx_facts.h"
#include "pipeline/attribution.h"

namespace cpprof::pipeline {

namespace {

constexpr int kNewestTestedSchema[2] = {3, 20};  // tests/data/real: nsys 2025.3.x exports
constexpr int kExportPidShift = 48, kExportNameShift = 40;

// One export of the run and what is read from it.
struct Source {
  std::string path;
  std::optional<nsys::Database> db;
  nsys::ExportSchema schema;
  Attribution attribution;
  model::CaptureInfo capture;
  std::vector<model::CommOpTime> comm;  // several exports only: for the clocks
  analysis::ClockAlignment clock;
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
  std::vector<analysis::ModuleTreeNode> nodes;  // the module tree; empty: no module ranges anywhere
  std::vector<model::IterationWindow> iteration_windows;
  std::vector<size_t> export_of_process;  // per work.processes
  bool modules_overflowed = false, modules_too_deep = false;
  int64_t module_ranges = 0, backward_ranges = 0, backward_mapped = 0, cross_thread = 0;
  std::string warmup_range;
};

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

// The launched command without the arguments that differ by rank or node (--node-rank 1,
// --node_rank=1, --rank=3): what every export of one run shares.
std::string RunCommand(const model::CaptureInfo& c) {
  static const RE2 rank_flag(R"(--?(?:node[-_]rank|rank|local[-_]rank|machine[-_]rank)(=.*)?)");
  std::string out = c.command;
  bool skip_value = false;
  for (const auto& a : c.arguments) {
    if (skip_value) {
      skip_value = false;
      continue;
    }
    std::string value;
    if (RE2::FullMatch(a, rank_flag, &value)) {
      skip_value = value.empty();
      continue;
    }
    out += ' ' + a;
  }
  return out;
}

// Phase 1: what the window and the clocks need (NVTX and runtime for the modules and
// iterations; the NCCL kernels when there are several exports).
Status ReadSourceFacts(const analysis::ModuleConfig& config, const RE2* iteration_re, const ReportOptions& options,
                       bool several, Source& s) {
  CPPROF_ASSIGN_OR_RETURN(nsys::Database db, nsys::Database::Open(s.path));
  s.db.emplace(std::move(db));
  CPPROF_ASSIGN_OR_RETURN(s.schema, nsys::ProbeExport(*s.db));
  CPPROF_ASSIGN_OR_RETURN(s.attribution, ReadAttribution(*s.db, config, iteration_re, options.iteration_range));
  CPPROF_ASSIGN_OR_RETURN(s.capture, nsys::ReadCaptureInfo(*s.db));
  if (several) {
    CPPROF_ASSIGN_OR_RETURN(s.comm, nsys::ReadCommOps(*s.db, s.schema, analysis::ClassifyKernel));
  }
  return OkStatus();
}

// Phase 2: the GPU ops in the window (given on the run's clock), memory, NVTX facts.
Status ReadSourceWork(const model::Window& window, size_t threads, Source& s) {
  nsys::LaunchTaggerFactory make_tagger;
  Attribution& attribution = s.attribution;
  if (attribution.modules) {
    make_tagger = [&] {
      return [reader = analysis::CallTags::Reader(attribution.calls)](int64_t gpid, int64_t corr) mutable {
        analysis::LaunchTag t = reader.Find(gpid, corr);
        return model::OpTag{static_cast<uint8_t>(t.phase), t.node, t.flags};
      };
    };
  }
  const model::Interval own_window{window.start_ns - s.clock.offset_ns, window.end_ns - s.clock.offset_ns};
  CPPROF_ASSIGN_OR_RETURN(
      s.work, nsys::LoadGpuWork(*s.db, s.schema, analysis::ClassifyKernel, make_tagger, threads,
                                nsys::kMinKernelRowsPerThread, window.whole_capture ? nullptr : &own_window));
  nsys::MemoryOptions memory_options;
  memory_options.peak_threads = false;  // the peak's module comes from the tagged launches below
  CPPROF_ASSIGN_OR_RETURN(s.memory, nsys::ReadMemoryUsage(*s.db, memory_options));
  // The module of the call that reached each peak, while the call tags are still here.
  for (const auto& p : nsys::PeakSeriesPerProcess(s.memory)) {
    if (!attribution.modules || p.peak_correlation_id == 0) continue;
    analysis::LaunchTag t = attribution.calls.Find(p.global_pid, p.peak_correlation_id);
    s.peak_module[p.global_pid] = NodePath(attribution.modules->nodes(), t.node);
  }
  attribution.calls = {};  // no longer needed: free it before the sweeps
  CPPROF_ASSIGN_OR_RETURN(s.facts, attribution.has_nvtx
                                       ? nsys::ReadNvtxFacts(*s.db, &attribution.domains, &attribution.tally)
                                       : nsys::ReadNvtxFacts(*s.db));
  s.facts.damaged_runtime_rows = attribution.damaged_runtime_rows;
  s.db.reset();
  return OkStatus();
}

// Every export's processes into one run, times shifted onto the run's clock.
Run MergeSources(std::vector<Source>& sources) {
  Run run;
  const bool several = sources.size() > 1;
  ModuleTreeMerger merger(run.nodes);
  std::unordered_map<std::string, size_t> window_index;  // name -> index in run.iteration_windows
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
      run.modules_overflowed |= m.overflowed();
      run.modules_too_deep |= m.too_deep();
      run.module_ranges = std::max(run.module_ranges, m.module_ranges());
      run.backward_ranges += m.backward_ranges();
      run.backward_mapped += m.backward_ranges_mapped();
    }
    run.cross_thread += s.attribution.cross_thread;
    if (run.warmup_range.empty()) run.warmup_range = s.attribution.warmup_range;
    bool identity = offset == 0;
    for (size_t n = 0; n < node_map.size() && identity; ++n) identity = node_map[n] == n;
    for (auto& p : s.work.processes) {
      p.global_pid = pid(p.global_pid);
      if (!identity) {
        for (size_t c = 0; c < p.ops.num_chunks(); ++c) {
          for (auto& op : p.ops.chunk(c)) {
            op.start += offset;
            if (op.node < node_map.size()) op.node = node_map[op.node];
          }
        }
        for (auto& op : p.long_ops) {
          op.iv.start += offset;
          op.iv.end += offset;
          if (op.node < node_map.size()) op.node = node_map[op.node];
        }
      }
      if (name_base) {
        std::unordered_map<int64_t, model::NameTotal> kernels;
        for (auto& [id, t] : p.kernels) kernels.emplace(id + name_base, t);
        p.kernels = std::move(kernels);
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
    // Iteration windows (the HTML's zoom): one per name over all exports.
    for (auto w : s.attribution.iteration_windows.Windows()) {
      w.start += offset;
      w.end += offset;
      auto [at, added] = window_index.try_emplace(w.name, run.iteration_windows.size());
      if (added) {
        run.iteration_windows.push_back(std::move(w));
      } else {
        model::IterationWindow& same = run.iteration_windows[at->second];
        same.start = std::min(same.start, w.start);
        same.end = std::max(same.end, w.end);
      }
    }
    s.work = {};
    s.memory = {};
  }
  run.modules_overflowed |= merger.overflowed();
  std::sort(run.iteration_windows.begin(), run.iteration_windows.end(),
            [](const auto& a, const auto& b) { return a.start != b.start ? a.start < b.start : a.name < b.name; });
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

int64_t RunPid(size_t e, int64_t gpid) {
  return (gpid & ((int64_t{1} << kExportPidShift) - 1)) | (static_cast<int64_t>(e) << kExportPidShift);
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

Status CheckSameRun(const std::vector<const model::CaptureInfo*>& captures, const std::vector<std::string>& names,
                    bool force) {
  if (force || captures.size() < 2) return OkStatus();
  const model::CaptureInfo& first = *captures[0];
  const std::string command = RunCommand(first);
  for (size_t e = 1; e < captures.size(); ++e) {
    const model::CaptureInfo& c = *captures[e];
    if (first.recorded && c.recorded && RunCommand(c) != command) {
      return Status(ExitCode::kUsage,
                    fmt::format("'{}' and '{}' are not from one run: they profiled different commands ('{}' and "
                                "'{}'; rank and node-rank flags aside). Give the exports of one run, or --force",
                                names[0], names[e], command, RunCommand(c)));
    }
    if (first.utc_start_ns > 0 && c.utc_start_ns > 0) {
      int64_t apart = std::abs(c.utc_start_ns - first.utc_start_ns);
      if (apart > kMaxRunStartSpreadNs) {
        return Status(
            ExitCode::kUsage,
            fmt::format("'{}' and '{}' are not from one run: their captures started {:.0f} s apart (more "
                        "than {} s). Give the exports of one run, or --force",
                        names[0], names[e], static_cast<double>(apart) / 1e9, kMaxRunStartSpreadNs / 1'000'000'000));
      }
    }
  }
  return OkStatus();
}

analysis::RankAssignment AssignRunRanks(const std::vector<model::GpuProcess>& procs,
                                        const std::map<int64_t, model::NcclRankInfo>& nccl,
                                        const std::vector<size_t>& export_of_process,
                                        const std::vector<const model::CaptureInfo*>& captures) {
  analysis::RankAssignment ranks = analysis::AssignRanks(procs, nccl);
  if (captures.size() < 2 || ranks.method.rfind("NCCL", 0) == 0) return ranks;
  // RANK (torchrun, one nsys per rank) on exports of one GPU process each.
  std::vector<int64_t> env_rank(procs.size(), -1), node(procs.size(), -1);
  std::map<size_t, int> procs_in_export;
  for (size_t p = 0; p < procs.size(); ++p) ++procs_in_export[export_of_process[p]];
  bool all_rank = true, all_node = true;
  std::set<int64_t> seen;
  for (size_t p = 0; p < procs.size(); ++p) {
    const model::CaptureInfo& c = *captures[export_of_process[p]];
    int64_t r = c.EnvInt("RANK");
    if (r < 0) r = c.EnvInt("SLURM_PROCID");
    if (procs_in_export[export_of_process[p]] != 1 || r < 0 || !seen.insert(r).second) all_rank = false;
    env_rank[p] = r;
    int64_t n = c.EnvInt("NODE_RANK");
    if (n < 0) n = c.EnvInt("GROUP_RANK");
    if (n < 0) n = c.EnvInt("SLURM_NODEID");
    if (n < 0) all_node = false;
    node[p] = n;
  }
  std::vector<size_t> order(procs.size());
  std::iota(order.begin(), order.end(), 0);
  auto host = [&](size_t p) -> const std::string& { return captures[export_of_process[p]]->host; };
  if (all_rank) {
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return env_rank[a] < env_rank[b]; });
    ranks.method = "the launcher's RANK (or SLURM_PROCID) recorded in each export";
  } else {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (all_node && node[a] != node[b]) return node[a] < node[b];
      if (!all_node && host(a) != host(b)) return host(a) < host(b);
      if (export_of_process[a] != export_of_process[b]) return export_of_process[a] < export_of_process[b];
      int da = procs[a].MainDevice(), db = procs[b].MainDevice();
      return da != db ? da < db : procs[a].pid < procs[b].pid;
    });
    ranks.method = all_node ? "the launcher's NODE_RANK (GROUP_RANK, SLURM_NODEID) recorded in each export, then "
                              "device order"
                            : "host name, export and device order (no NCCL rank payloads or launcher rank variables)";
  }
  ranks.process_of_rank = order;
  ranks.world_size = static_cast<int>(procs.size());
  ranks.notes.clear();
  return ranks;
}

StatusOr<RunPartial> ReadRun(const std::vector<std::string>& paths, const ReportOptions& options, RunWork* keep) {
  if (paths.empty()) return Status(ExitCode::kUsage, "no export given");
  // A bad pattern is a usage error, said before the export is read.
  std::shared_ptr<const RE2> iteration_re;
  if (!options.iteration_range.empty()) {
    CPPROF_ASSIGN_OR_RETURN(iteration_re, CompileRegex(options.iteration_range, "--iteration-range", ExitCode::kUsage,
                                                       "'domain:text' of each NVTX range"));
  }
  const analysis::ModuleConfig default_config =
      options.modules ? analysis::ModuleConfig{} : analysis::DefaultModuleConfig();
  const analysis::ModuleConfig& config = options.modules ? *options.modules : default_config;
  const bool several = paths.size() > 1;
  StageTimer timer;

  // Phase 1, one export per thread: NVTX, runtime calls, capture facts (and NCCL kernels).
  std::vector<Source> sources(paths.size());
  std::vector<Status> status(paths.size());
  for (size_t e = 0; e < paths.size(); ++e) sources[e].path = paths[e];
  ParallelFor(sources.size(),
              [&](size_t e) { status[e] = ReadSourceFacts(config, iteration_re.get(), options, several, sources[e]); });
  for (const auto& s : status) CPPROF_RETURN_IF_ERROR(s);
  timer.Mark("attribution (NVTX, runtime)");
  std::vector<const model::CaptureInfo*> captures;
  for (const auto& s : sources) captures.push_back(&s.capture);
  CPPROF_RETURN_IF_ERROR(CheckSameRun(captures, paths, options.force));
  if (several) {
    std::vector<analysis::ClockInput> clocks(sources.size());
    for (size_t e = 0; e < sources.size(); ++e) {
      clocks[e].utc_start_ns = sources[e].capture.utc_start_ns;
      clocks[e].comm = std::move(sources[e].comm);
    }
    std::vector<analysis::ClockAlignment> aligned = analysis::AlignClocks(clocks);
    for (size_t e = 0; e < sources.size(); ++e) sources[e].clock = std::move(aligned[e]);
    timer.Mark("clocks aligned");
  }

  // The window, on the run's clock, from every export's iteration marks.
  std::vector<analysis::IterationMark> marks;
  std::string iteration_method;
  for (size_t e = 0; e < sources.size(); ++e) {
    Attribution& a = sources[e].attribution;
    if (iteration_method.empty()) iteration_method = a.iteration_method;
    for (auto& m : a.iteration_marks) {
      m.start += sources[e].clock.offset_ns;
      m.end += sources[e].clock.offset_ns;
      if (several) m.global_pid = RunPid(e, m.global_pid);
      marks.push_back(std::move(m));
    }
    a.iteration_marks = {};
  }
  RunPartial out;
  CPPROF_ASSIGN_OR_RETURN(out.window, analysis::ChooseWindow(std::move(marks), iteration_method, options.window));
  const model::Window& window = out.window;

  // Phase 2: the GPU ops in the window, memory, NVTX facts.
  const size_t threads = std::max<size_t>(1, WorkerThreads() / std::min(WorkerThreads(), sources.size()));
  ParallelFor(sources.size(), [&](size_t e) { status[e] = ReadSourceWork(window, threads, sources[e]); });
  for (const auto& s : status) CPPROF_RETURN_IF_ERROR(s);
  timer.Mark("GPU ops, memory");
  Run run = MergeSources(sources);
  model::GpuWork& work = run.work;
  std::vector<model::MemorySeries> peaks = nsys::PeakSeriesPerProcess(run.memory);

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
    out.sources.push_back(std::move(sp));
  }
  // Input versions are a window: past the newest export schema tested, say so (columns may have
  // moved or changed meaning).
  for (const SourcePartial& s : out.sources) {
    int major = 0, minor = 0;
    if (std::sscanf(s.export_info.schema_version.c_str(), "%d.%d", &major, &minor) == 2 &&
        std::make_pair(major, minor) > std::make_pair(kNewestTestedSchema[0], kNewestTestedSchema[1])) {
      out.notes.push_back(
          fmt::format("warning: export schema {} is newer than the newest cpprof was tested with "
                      "({}.{}.x, nsys 2025.3): check the numbers against 'nsys stats', and "
                      "look for a newer cpprof",
                      s.export_info.schema_version, kNewestTestedSchema[0], kNewestTestedSchema[1]));
      break;
    }
  }

  std::vector<model::GpuProcess> procs;
  for (const auto& p : work.processes) procs.push_back(static_cast<const model::GpuProcess&>(p));
  std::vector<const model::CaptureInfo*> source_captures;
  for (const auto& s : out.sources) source_captures.push_back(&s.capture);
  analysis::RankAssignment ranks = AssignRunRanks(procs, run.nccl, run.export_of_process, source_captures);
  out.rank_method = ranks.method;
  out.world_size = ranks.world_size;
  out.notes.insert(out.notes.end(), ranks.notes.begin(), ranks.notes.end());
  if (run.memory.invalid_events) {
    out.notes.push_back(
        fmt::format("{} rows of {} (columns start, bytes) are not integers, negative, or past 2^62 "
                    "ns or 1 PiB: left out of the memory numbers",
                    run.memory.invalid_events, nsys::kMemoryEventsTable));
  }

  std::vector<int> parent{-1};
  if (!run.nodes.empty()) {
    parent.clear();
    for (const auto& n : run.nodes) parent.push_back(n.parent);
  }
  // One sweep over each rank's ops gives the summary and the modules; ranks are independent.
  out.processes.resize(ranks.process_of_rank.size());
  for (size_t r = 0; r < ranks.process_of_rank.size(); ++r) {
    out.processes[r].sweep =
        analysis::StartSweep(work.processes[ranks.process_of_rank[r]], parent.size(), /*collect_comm_ops=*/true);
    if (!window.whole_capture) out.processes[r].sweep.window_start = window.start_ns;
    if (!window.whole_capture) out.processes[r].sweep.window_end = window.end_ns;
  }
  ParallelFor(out.processes.size(), [&](size_t r) {
    analysis::SweepModules(work.processes[ranks.process_of_rank[r]], parent, out.processes[r].sweep);
  });
  timer.Mark("sweeps");
  for (size_t r = 0; r < ranks.process_of_rank.size(); ++r) {
    ProcessPartial& pp = out.processes[r];
    const size_t p = ranks.process_of_rank[r];
    const model::ProcessGpuWork& proc = work.processes[p];
    pp.source = run.export_of_process[p];
    pp.process = procs[p];
    auto nccl = run.nccl.find(proc.global_pid);
    if (nccl != run.nccl.end()) pp.nccl = nccl->second;
    model::RankSummary& s = pp.summary;
    s = analysis::SummarizeRankFromSweep(proc, work.names, options.top_kernels, pp.sweep);
    if (!window.whole_capture) {
      s.first_start = window.start_ns;
      s.last_end = window.end_ns;
      s.span_ns = s.last_end - s.first_start;
      s.idle_ns = s.span_ns - s.busy_ns;
    }
    for (const auto& m : peaks) {
      if (m.global_pid != proc.global_pid) continue;
      s.peak_mem_bytes = m.peak_bytes;
      s.peak_mem_ns = m.peak_ns;
      if (run.peak_module.count(m.global_pid)) s.peak_mem_module = run.peak_module[m.global_pid];
    }
    pp.excluded_ops = proc.excluded_ops;
    pp.warmup_ops = proc.warmup_ops;
    pp.warmup_ns = proc.warmup_ns;
    pp.outside_window_ops = proc.outside_window_ops;
    pp.outside_window_ns = proc.outside_window_ns;
    pp.clipped_ops = proc.clipped_ops;
  }
  timer.Mark("summaries");

  out.nodes = std::move(run.nodes);
  out.grouping.source = config.source;
  for (const auto& g : config.groups) out.grouping.groups.push_back(g.name);
  out.grouping.module_ranges = run.module_ranges;
  out.backward_ranges = run.backward_ranges;
  out.backward_mapped = run.backward_mapped;
  out.cross_thread = run.cross_thread;
  out.modules_overflowed = run.modules_overflowed;
  out.modules_too_deep = run.modules_too_deep;
  out.warmup_range = run.warmup_range;
  out.exclude_work_pattern = config.exclude_work_pattern;
  out.memory = std::move(run.memory);
  if (keep) {
    keep->work = std::move(run.work);
    keep->process_of_rank = ranks.process_of_rank;
    keep->iteration_windows = std::move(run.iteration_windows);
  }
  return out;
}

}  // namespace cpprof::pipeline
