#include "pipeline/build_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

#include "analysis/capture_diagnostics.h"
#include "analysis/classify.h"
#include "analysis/clock_align.h"
#include "analysis/comm_match.h"
#include "analysis/module_sweep.h"
#include "analysis/rank_summary.h"
#include "analysis/ranks.h"
#include "analysis/verdict.h"
#include "base/parallel.h"
#include "base/regex.h"
#include "base/stage_timer.h"
#include "nsys/capture_reader.h"
#include "nsys/export_reader.h"
#include "nsys/gpu_work_loader.h"
#include "nsys/memory_reader.h"
#include "nsys/nvtx_facts.h"
#include "pipeline/attribution.h"
#include "pipeline/report_timeline.h"

namespace cpprof::pipeline {

namespace {
constexpr int kNewestTestedSchema[2] = {3, 20};  // tests/data/real: nsys 2025.3.x exports
}  // namespace

namespace {

// "trunk/CPFoldModel.trunk/...": the node's path from its top-level row.
std::string NodePath(const std::vector<analysis::ModuleTreeNode>& nodes, int node) {
  std::string s;
  for (int n = node; n >= 0; n = nodes[n].parent) s = nodes[n].name + (s.empty() ? "" : "/") + s;
  return s;
}

// The interconnect between the GPUs, from `cpprof profile`'s <name>.doctor.json beside the
// export (the doctor's nvidia-smi topology); "" when there is none.
std::string ReadInterconnect(const std::string& export_path) {
  std::filesystem::path p(export_path);
  p.replace_extension(".doctor.json");
  std::ifstream in(p);
  if (!in) return "";
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

// The module rows: nodes with work on some rank, depth-first, siblings by mean busy time
// (then name); [unattributed] last.
void FillModules(const std::vector<analysis::ModuleTreeNode>& tree,
                 const std::vector<analysis::RankModuleTimes>& sweeps, model::Report& report) {
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
      m.per_rank.push_back(sweeps[r].nodes[i]);
      const auto& t = sweeps[r].nodes[i];
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

// With several exports a process is known by its globalPid with the export's index in place of
// the hardware id (bits 48 and up), and a kernel name by its StringIds id plus the index << 40:
// two hosts may run the same pid, two exports number their strings alike.
constexpr int kExportPidShift = 48, kExportNameShift = 40;
int64_t RunPid(size_t e, int64_t gpid) {
  return (gpid & ((int64_t{1} << kExportPidShift) - 1)) | (static_cast<int64_t>(e) << kExportPidShift);
}

// The launched command without the arguments that differ by rank or node (--node-rank 1,
// --node_rank=1, --rank=3): what every export of one run shares.
std::string RunCommand(const model::CaptureInfo& c) {
  static const RE2 rank_flag(R"(--?(node[-_]rank|rank|local[-_]rank|machine[-_]rank)(=.*)?)");
  std::string out = c.command;
  bool skip_value = false;
  for (const auto& a : c.arguments) {
    if (skip_value) {
      skip_value = false;
      continue;
    }
    std::string value;
    if (RE2::FullMatch(a, rank_flag, (void*)nullptr, &value)) {
      skip_value = value.empty();
      continue;
    }
    out += ' ' + a;
  }
  return out;
}

// Exports not from one run are refused (unless --force): a different command, or session starts
// far apart.
Status CheckSameRun(const std::vector<Source>& sources, bool force) {
  if (force || sources.size() < 2) return OkStatus();
  const Source& first = sources[0];
  const std::string command = RunCommand(first.capture);
  for (size_t e = 1; e < sources.size(); ++e) {
    const Source& s = sources[e];
    if (first.capture.recorded && s.capture.recorded && RunCommand(s.capture) != command) {
      return Status(ExitCode::kUsage,
                    fmt::format("'{}' and '{}' are not from one run: they profiled different commands ('{}' and "
                                "'{}'; rank and node-rank flags aside). Give the exports of one run, or --force",
                                first.path, s.path, command, RunCommand(s.capture)));
    }
    if (first.capture.utc_start_ns > 0 && s.capture.utc_start_ns > 0) {
      int64_t apart = std::abs(s.capture.utc_start_ns - first.capture.utc_start_ns);
      if (apart > kMaxRunStartSpreadNs) {
        return Status(
            ExitCode::kUsage,
            fmt::format("'{}' and '{}' are not from one run: their captures started {:.0f} s apart (more "
                        "than {} s). Give the exports of one run, or --force",
                        first.path, s.path, static_cast<double>(apart) / 1e9, kMaxRunStartSpreadNs / 1'000'000'000));
      }
    }
  }
  return OkStatus();
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
  s.db.reset();
  return OkStatus();
}

// The module nodes of one export mapped into the run's tree (same path, same node).
std::vector<uint16_t> MergeModuleTree(const std::vector<analysis::ModuleTreeNode>& mine, Run& run,
                                      std::map<std::tuple<int, std::string, std::string, bool>, int>& index) {
  std::vector<uint16_t> map(mine.size(), analysis::kUnattributed);
  for (size_t n = 0; n < mine.size(); ++n) {
    const auto& t = mine[n];
    int parent = t.parent < 0 ? -1 : map[t.parent];
    auto key = std::make_tuple(parent, t.name, t.range, t.is_group);
    auto it = index.find(key);
    if (it == index.end()) {
      if (run.nodes.size() >= analysis::kMaxModuleNodes) {  // fold into the parent
        run.modules_overflowed = true;
        map[n] = static_cast<uint16_t>(std::max(parent, 0));
        continue;
      }
      it = index.emplace(key, static_cast<int>(run.nodes.size())).first;
      run.nodes.push_back(t);
      run.nodes.back().parent = parent;
    }
    map[n] = static_cast<uint16_t>(it->second);
  }
  return map;
}

// Every export's processes into one run, times shifted onto the run's clock.
Run MergeSources(std::vector<Source>& sources) {
  Run run;
  const bool several = sources.size() > 1;
  std::map<std::tuple<int, std::string, std::string, bool>, int> index;
  for (size_t e = 0; e < sources.size(); ++e) {
    Source& s = sources[e];
    const int64_t offset = s.clock.offset_ns;
    auto pid = [&](int64_t gpid) { return several ? RunPid(e, gpid) : gpid; };
    const int64_t name_base = several ? static_cast<int64_t>(e) << kExportNameShift : 0;
    std::vector<uint16_t> node_map;
    if (s.attribution.modules) {
      const auto& m = *s.attribution.modules;
      node_map = MergeModuleTree(m.nodes(), run, index);
      run.modules_overflowed |= m.overflowed();
      run.modules_too_deep |= m.too_deep();
      run.module_ranges = std::max(run.module_ranges, m.module_ranges());
      run.backward_ranges += m.backward_ranges();
      run.backward_mapped += m.backward_ranges_mapped();
    }
    run.cross_thread += s.attribution.cross_thread;
    if (run.warmup_range.empty()) run.warmup_range = s.attribution.warmup_range;
    const bool remap = several && (offset != 0 || !node_map.empty());
    for (auto& p : s.work.processes) {
      p.global_pid = pid(p.global_pid);
      if (remap) {
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
      auto it = std::find_if(run.iteration_windows.begin(), run.iteration_windows.end(),
                             [&](const auto& x) { return x.name == w.name; });
      if (it == run.iteration_windows.end()) {
        run.iteration_windows.push_back(std::move(w));
      } else {
        it->start = std::min(it->start, w.start);
        it->end = std::max(it->end, w.end);
      }
    }
    s.work = {};
    s.memory = {};
  }
  std::sort(run.iteration_windows.begin(), run.iteration_windows.end(),
            [](const auto& a, const auto& b) { return a.start != b.start ? a.start < b.start : a.name < b.name; });
  std::stable_sort(run.memory.series.begin(), run.memory.series.end(), [](const auto& a, const auto& b) {
    return a.global_pid != b.global_pid ? a.global_pid < b.global_pid : a.device < b.device;
  });
  if (!several && sources[0].attribution.modules) {
    run.nodes = sources[0].attribution.modules->nodes();
  }
  return run;
}

// Ranks over the run's processes: NCCL's payloads; else the launcher's rank variables each
// export recorded; else host, export and device order.
analysis::RankAssignment AssignRunRanks(const Run& run, const std::vector<Source>& sources) {
  analysis::RankAssignment ranks = analysis::AssignRanks(run.work, run.nccl);
  if (sources.size() < 2 || ranks.method.rfind("NCCL", 0) == 0) return ranks;
  const auto& procs = run.work.processes;
  // RANK (torchrun, one nsys per rank) on exports of one GPU process each.
  std::vector<int64_t> env_rank(procs.size(), -1), node(procs.size(), -1);
  std::map<size_t, int> procs_in_export;
  for (size_t p = 0; p < procs.size(); ++p) ++procs_in_export[run.export_of_process[p]];
  bool all_rank = true, all_node = true;
  std::set<int64_t> seen;
  for (size_t p = 0; p < procs.size(); ++p) {
    const model::CaptureInfo& c = sources[run.export_of_process[p]].capture;
    int64_t r = c.EnvInt("RANK");
    if (r < 0) r = c.EnvInt("SLURM_PROCID");
    if (procs_in_export[run.export_of_process[p]] != 1 || r < 0 || !seen.insert(r).second) all_rank = false;
    env_rank[p] = r;
    int64_t n = c.EnvInt("NODE_RANK");
    if (n < 0) n = c.EnvInt("GROUP_RANK");
    if (n < 0) n = c.EnvInt("SLURM_NODEID");
    if (n < 0) all_node = false;
    node[p] = n;
  }
  std::vector<size_t> order(procs.size());
  std::iota(order.begin(), order.end(), 0);
  auto host = [&](size_t p) -> const std::string& { return sources[run.export_of_process[p]].capture.host; };
  if (all_rank) {
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return env_rank[a] < env_rank[b]; });
    ranks.method = "the launcher's RANK (or SLURM_PROCID) recorded in each export";
  } else {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (all_node && node[a] != node[b]) return node[a] < node[b];
      if (!all_node && host(a) != host(b)) return host(a) < host(b);
      if (run.export_of_process[a] != run.export_of_process[b])
        return run.export_of_process[a] < run.export_of_process[b];
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

}  // namespace

StatusOr<model::Report> BuildReport(const std::string& path, const ReportOptions& options) {
  return BuildReport(std::vector<std::string>{path}, options);
}

StatusOr<model::Report> BuildReport(const std::vector<std::string>& paths, const ReportOptions& options) {
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
  CPPROF_RETURN_IF_ERROR(CheckSameRun(sources, options.force));
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
  CPPROF_ASSIGN_OR_RETURN(model::Window window,
                          analysis::ChooseWindow(std::move(marks), iteration_method, options.window));

  // Phase 2: the GPU ops in the window, memory, NVTX facts.
  const size_t threads = std::max<size_t>(1, WorkerThreads() / std::min(WorkerThreads(), sources.size()));
  ParallelFor(sources.size(), [&](size_t e) { status[e] = ReadSourceWork(window, threads, sources[e]); });
  for (const auto& s : status) CPPROF_RETURN_IF_ERROR(s);
  timer.Mark("GPU ops, memory");
  Run run = MergeSources(sources);
  model::GpuWork& work = run.work;
  std::vector<model::MemorySeries> peaks = nsys::PeakSeriesPerProcess(run.memory);

  model::Report report;
  const Source& first = sources[0];
  report.export_info.file = first.path;
  report.export_info.schema_version = first.schema.schema_version;
  report.export_info.nsys_version = first.schema.nsys_version;
  report.export_info.captured = first.schema.present;
  report.export_info.not_captured = first.schema.absent;

  analysis::RankAssignment ranks = AssignRunRanks(run, sources);
  report.rank_method = ranks.method;
  report.world_size = ranks.world_size;
  report.notes = ranks.notes;
  for (const Source& s : sources) {
    // Input versions are a window: past the newest export schema tested, say so (columns may
    // have moved or changed meaning).
    int major = 0, minor = 0;
    if (std::sscanf(s.schema.schema_version.c_str(), "%d.%d", &major, &minor) == 2 &&
        std::make_pair(major, minor) > std::make_pair(kNewestTestedSchema[0], kNewestTestedSchema[1])) {
      report.notes.push_back(
          fmt::format("warning: export schema {} is newer than the newest cpprof was tested with "
                      "({}.{}.x, nsys 2025.3): check the numbers against 'nsys stats', and "
                      "look for a newer cpprof",
                      s.schema.schema_version, kNewestTestedSchema[0], kNewestTestedSchema[1]));
      break;
    }
  }
  if (run.memory.invalid_events) {
    report.notes.push_back(
        fmt::format("{} rows of {} (columns start, bytes) are not integers, negative, or past 2^62 "
                    "ns or 1 PiB: left out of the memory numbers",
                    run.memory.invalid_events, nsys::kMemoryEventsTable));
  }
  if (several) {
    for (size_t e = 0; e < sources.size(); ++e) {
      const Source& s = sources[e];
      model::RunExport x;
      x.file = s.path;
      x.name = std::filesystem::path(s.path).filename().string();
      x.host = s.capture.host;
      x.utc_start_ns = s.capture.utc_start_ns;
      x.offset_ns = s.clock.offset_ns;
      x.refine_ns = s.clock.refine_ns;
      x.residual_ns = s.clock.residual_ns;
      x.matched_ops = s.clock.matched_ops;
      x.method = s.clock.method;
      for (size_t r = 0; r < ranks.process_of_rank.size(); ++r) {
        if (run.export_of_process[ranks.process_of_rank[r]] == e) x.ranks.push_back(static_cast<int>(r));
      }
      if (x.ranks.empty()) {
        report.notes.push_back(fmt::format("export '{}' holds no GPU work: it adds no rank to the run", x.name));
      }
      if (s.capture.reconstructed_flags != first.capture.reconstructed_flags) {
        report.notes.push_back(fmt::format("export '{}' was captured with other nsys options than '{}' ({} vs {})",
                                           x.name, report.run_exports.empty() ? x.name : report.run_exports[0].name,
                                           s.capture.reconstructed_flags, first.capture.reconstructed_flags));
      }
      report.run_exports.push_back(std::move(x));
    }
  }

  std::vector<int> parent{-1};
  if (!run.nodes.empty()) {
    parent.clear();
    for (const auto& n : run.nodes) parent.push_back(n.parent);
  }
  // One sweep over each rank's ops gives the summary and the modules; ranks are independent.
  std::vector<analysis::RankModuleTimes> sweeps;
  for (size_t p : ranks.process_of_rank) {
    sweeps.push_back(analysis::StartSweep(work.processes[p], parent.size(), /*collect_comm_ops=*/true));
    if (!window.whole_capture) sweeps.back().window_start = window.start_ns, sweeps.back().window_end = window.end_ns;
  }
  ParallelFor(sweeps.size(),
              [&](size_t r) { analysis::SweepModules(work.processes[ranks.process_of_rank[r]], parent, sweeps[r]); });
  // Waiting vs transfer: NCCL ops matched across ranks, then each rank's transfers against its
  // compute (exposed transfer) and the splits per module.
  std::vector<const analysis::RankModuleTimes*> sweep_ptrs;
  for (const auto& s : sweeps) sweep_ptrs.push_back(&s);
  timer.Mark("sweeps");
  analysis::CommMatch comm = analysis::MatchComm(sweep_ptrs);
  timer.Mark("NCCL ops matched");
  // One rank at a time: each holds its transfers sorted, and they are cheap next to the sweeps.
  for (size_t r = 0; r < sweeps.size(); ++r) {
    analysis::SplitRankComm(sweeps[r], r, parent, comm, sweeps[r].nodes);
    sweeps[r].hidden_segments = {};
  }
  comm.splits = {};
  for (size_t r = 0; r < ranks.process_of_rank.size(); ++r) {
    auto& proc = work.processes[ranks.process_of_rank[r]];
    model::RankSummary s = analysis::SummarizeRankFromSweep(proc, work.names, options.top_kernels, sweeps[r]);
    s.rank = static_cast<int>(r);
    if (proc.excluded_ops) {
      report.notes.push_back(
          fmt::format("rank {}: {} GPU ops launched inside ranges matching --exclude-ranges '{}' "
                      "were left out",
                      r, proc.excluded_ops, config.exclude_work_pattern));
    }
    if (!window.whole_capture) {
      s.first_start = window.start_ns;
      s.last_end = window.end_ns;
      s.span_ns = s.last_end - s.first_start;
      s.idle_ns = s.span_ns - s.busy_ns;
      window.left_out_ops += proc.outside_window_ops;
      window.left_out_ns += proc.outside_window_ns;
      window.clipped_ops += proc.clipped_ops;
    }
    analysis::FillCommBudget(comm, r, sweeps[r], s);
    if (proc.warmup_ops && config.exclude_work_pattern.empty()) {
      int64_t total = 0;
      for (const auto& c : s.classes) total += c.sum_ns;
      // In a steady window the warm-up iterations are already left out: what is left inside it
      // (work launched in a warm-up range that runs into the window) is not worth a --window hint.
      report.notes.push_back(fmt::format(
          "rank {}: {} GPU ops ({:.1f}% of its GPU op time) were launched inside warm-up ranges (such as '{}'); "
          "{}",
          r, proc.warmup_ops, total ? 100.0 * static_cast<double>(proc.warmup_ns) / static_cast<double>(total) : 0.0,
          run.warmup_range,
          window.whole_capture
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
    for (const auto& p : peaks) {
      if (p.global_pid != proc.global_pid) continue;
      s.peak_mem_bytes = p.peak_bytes;
      s.peak_mem_ns = p.peak_ns;
      if (run.peak_module.count(p.global_pid)) s.peak_mem_module = run.peak_module[p.global_pid];
    }
    report.ranks.push_back(std::move(s));
  }
  timer.Mark("waiting vs transfer, summaries");
  if (report.ranks.empty()) {
    report.notes.push_back(
        fmt::format("'{}' has a kernel table but no GPU work in it: did the "
                    "profiled run reach the GPU?",
                    paths.size() == 1 ? paths[0] : "every export"));
  }

  report.grouping.source = config.source;
  for (const auto& g : config.groups) report.grouping.groups.push_back(g.name);
  if (!run.nodes.empty()) {
    report.grouping.module_ranges = run.module_ranges;
    FillModules(run.nodes, sweeps, report);
    if (run.modules_overflowed) {
      report.notes.push_back(
          fmt::format("more than {} distinct module paths: the deepest were folded into "
                      "their parents",
                      analysis::kMaxModuleNodes));
    }
    if (run.modules_too_deep) {
      report.notes.push_back(
          fmt::format("module ranges nest deeper than {} levels (an NVTX push without its pop?): deeper ones count in "
                      "their ancestor at that depth",
                      analysis::kMaxModuleDepth));
    }
  }
  if (run.cross_thread) {
    report.notes.push_back(
        fmt::format("{} NVTX ranges end on another thread than they start: left out of "
                    "module attribution (nsys leaves them out of GPU projection too)",
                    run.cross_thread));
  }
  bool backward = std::any_of(sweeps.begin(), sweeps.end(), [](const auto& s) { return s.has_backward; });
  if (backward) {
    for (const auto& s : sweeps) {
      model::PhaseTimes p;
      p.has_backward = s.has_backward;
      p.busy_ns = s.phase_busy_ns;
      report.phases.push_back(p);
    }
    // Say how well backward work maps to modules, and how to get it when it does not.
    if (!run.nodes.empty() && run.backward_ranges > 0) {
      report.notes.push_back(
          fmt::format("backward per module: {} of {} backward ranges of autograd mapped to the "
                      "module of their forward op",
                      run.backward_mapped, run.backward_ranges));
    } else {
      report.notes.push_back(
          "backward work is not mapped to modules (it is all in [backward]): the capture has no "
          "autograd ranges with sequence numbers; profile with --pytorch=autograd-nvtx to get them");
    }
  }

  if (options.timeline) {
    CPPROF_RETURN_IF_ERROR(AddTimeline(std::move(run.iteration_windows), work, ranks.process_of_rank,
                                       run.nodes.empty() ? nullptr : &run.nodes, options.timeline_bins, report));
  }

  report.capture = std::move(sources[0].capture);
  report.diagnostics = analysis::DiagnoseCapture(report.capture, sources[0].facts);
  report.memory = std::move(run.memory);
  report.interconnect = ReadInterconnect(paths[0]);

  report.imbalance = analysis::SummarizeImbalance(report.ranks, std::move(comm.kinds));
  if (!window.whole_capture && window.left_out_ops) {
    window.description += fmt::format("; {} GPU ops ({:.3f} ms of GPU time) outside it left out", window.left_out_ops,
                                      static_cast<double>(window.left_out_ns) / 1e6);
  }
  report.window = std::move(window);
  report.verdict = analysis::MakeVerdict(report);
  return report;
}

std::vector<std::optional<int64_t>> PeakMemoryPerRank(const model::Report& report) {
  std::vector<std::optional<int64_t>> out;
  for (const auto& s : report.ranks) {
    out.push_back(s.peak_mem_bytes >= 0 ? std::optional<int64_t>(s.peak_mem_bytes) : std::nullopt);
  }
  return out;
}

}  // namespace cpprof::pipeline
