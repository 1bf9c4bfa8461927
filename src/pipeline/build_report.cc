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
#include <optional>

#include "analysis/capture_diagnostics.h"
#include "analysis/classify.h"
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
std::string NodePath(const analysis::ModuleAttribution& a, int node) {
  std::string s;
  for (int n = node; n >= 0; n = a.nodes()[n].parent) s = a.nodes()[n].name + (s.empty() ? "" : "/") + s;
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
void FillModules(const analysis::ModuleAttribution& attribution, const std::vector<analysis::RankModuleTimes>& sweeps,
                 model::Report& report) {
  const auto& tree = attribution.nodes();
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

StatusOr<model::Report> BuildReport(const std::string& path, const ReportOptions& options) {
  // A bad pattern is a usage error, said before the export is read.
  std::shared_ptr<const RE2> iteration_re;
  if (!options.iteration_range.empty()) {
    CPPROF_ASSIGN_OR_RETURN(iteration_re, CompileRegex(options.iteration_range, "--iteration-range", ExitCode::kUsage,
                                                       "'domain:text' of each NVTX range"));
  }
  CPPROF_ASSIGN_OR_RETURN(nsys::Database db, nsys::Database::Open(path));
  CPPROF_ASSIGN_OR_RETURN(nsys::ExportSchema schema, nsys::ProbeExport(db));

  const analysis::ModuleConfig default_config =
      options.modules ? analysis::ModuleConfig{} : analysis::DefaultModuleConfig();
  const analysis::ModuleConfig& config = options.modules ? *options.modules : default_config;
  StageTimer timer;
  CPPROF_ASSIGN_OR_RETURN(Attribution attribution,
                          ReadAttribution(db, config, iteration_re.get(), options.iteration_range));
  timer.Mark("attribution (NVTX, runtime)");
  CPPROF_ASSIGN_OR_RETURN(model::Window window, analysis::ChooseWindow(std::move(attribution.iteration_marks),
                                                                       attribution.iteration_method, options.window));
  const model::Interval window_iv{window.start_ns, window.end_ns};
  nsys::LaunchTaggerFactory make_tagger;
  if (attribution.modules) {
    make_tagger = [&] {
      return [reader = analysis::CallTags::Reader(attribution.calls)](int64_t gpid, int64_t corr) mutable {
        analysis::LaunchTag t = reader.Find(gpid, corr);
        return model::OpTag{static_cast<uint8_t>(t.phase), t.node, t.flags};
      };
    };
  }
  CPPROF_ASSIGN_OR_RETURN(model::GpuWork work, nsys::LoadGpuWork(db, schema, analysis::ClassifyKernel, make_tagger,
                                                                 WorkerThreads(), nsys::kMinKernelRowsPerThread,
                                                                 window.whole_capture ? nullptr : &window_iv));
  timer.Mark("GPU ops");
  nsys::MemoryOptions memory_options;
  memory_options.peak_threads = false;  // the peak's module comes from the tagged launches below
  CPPROF_ASSIGN_OR_RETURN(model::MemoryUsage memory, nsys::ReadMemoryUsage(db, memory_options));
  timer.Mark("memory");
  std::vector<model::MemorySeries> peaks = nsys::PeakSeriesPerProcess(memory);
  // The module of the call that reached each peak, while the call tags are still here.
  std::map<int64_t, std::string> peak_module;
  for (const auto& p : peaks) {
    if (!attribution.modules || p.peak_correlation_id == 0) continue;
    analysis::LaunchTag t = attribution.calls.Find(p.global_pid, p.peak_correlation_id);
    peak_module[p.global_pid] = NodePath(*attribution.modules, t.node);
  }
  attribution.calls = {};  // no longer needed: free it before the sweeps

  model::Report report;
  report.export_info.file = path;
  report.export_info.schema_version = schema.schema_version;
  report.export_info.nsys_version = schema.nsys_version;
  report.export_info.captured = schema.present;
  report.export_info.not_captured = schema.absent;

  analysis::RankAssignment ranks = analysis::AssignRanks(work, attribution.nccl_ranks);
  report.rank_method = ranks.method;
  report.world_size = ranks.world_size;
  report.notes = ranks.notes;
  {
    // Input versions are a window: past the newest export schema tested, say so (columns may
    // have moved or changed meaning).
    int major = 0, minor = 0;
    if (std::sscanf(schema.schema_version.c_str(), "%d.%d", &major, &minor) == 2 &&
        std::make_pair(major, minor) > std::make_pair(kNewestTestedSchema[0], kNewestTestedSchema[1])) {
      report.notes.push_back(
          fmt::format("warning: export schema {} is newer than the newest cpprof was tested with "
                      "({}.{}.x, nsys 2025.3): check the numbers against 'nsys stats', and "
                      "look for a newer cpprof",
                      schema.schema_version, kNewestTestedSchema[0], kNewestTestedSchema[1]));
    }
  }
  if (memory.invalid_events) {
    report.notes.push_back(
        fmt::format("{} rows of {} (columns start, bytes) are not integers, negative, or past 2^62 "
                    "ns or 1 PiB: left out of the memory numbers",
                    memory.invalid_events, nsys::kMemoryEventsTable));
  }

  std::vector<int> parent{-1};
  if (attribution.modules) {
    parent.clear();
    for (const auto& n : attribution.modules->nodes()) parent.push_back(n.parent);
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
          attribution.warmup_range,
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
      if (peak_module.count(p.global_pid)) s.peak_mem_module = peak_module[p.global_pid];
    }
    report.ranks.push_back(std::move(s));
  }
  timer.Mark("waiting vs transfer, summaries");
  if (report.ranks.empty()) {
    report.notes.push_back(
        fmt::format("'{}' has a kernel table but no GPU work in it: did the "
                    "profiled run reach the GPU?",
                    path));
  }

  report.grouping.source = config.source;
  for (const auto& g : config.groups) report.grouping.groups.push_back(g.name);
  if (attribution.modules) {
    report.grouping.module_ranges = attribution.modules->module_ranges();
    FillModules(*attribution.modules, sweeps, report);
    if (attribution.modules->overflowed()) {
      report.notes.push_back(
          fmt::format("more than {} distinct module paths: the deepest were folded into "
                      "their parents",
                      analysis::kMaxModuleNodes));
    }
    if (attribution.modules->too_deep()) {
      report.notes.push_back(
          fmt::format("module ranges nest deeper than {} levels (an NVTX push without its pop?): deeper ones count in "
                      "their ancestor at that depth",
                      analysis::kMaxModuleDepth));
    }
  }
  if (attribution.cross_thread) {
    report.notes.push_back(
        fmt::format("{} NVTX ranges end on another thread than they start: left out of "
                    "module attribution (nsys leaves them out of GPU projection too)",
                    attribution.cross_thread));
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
    const analysis::ModuleAttribution* m = attribution.modules.get();
    if (m && m->backward_ranges() > 0) {
      report.notes.push_back(
          fmt::format("backward per module: {} of {} backward ranges of autograd mapped to the "
                      "module of their forward op",
                      m->backward_ranges_mapped(), m->backward_ranges()));
    } else {
      report.notes.push_back(
          "backward work is not mapped to modules (it is all in [backward]): the capture has no "
          "autograd ranges with sequence numbers; profile with --pytorch=autograd-nvtx to get them");
    }
  }

  if (options.timeline) {
    CPPROF_RETURN_IF_ERROR(AddTimeline(attribution.iteration_windows.Windows(), work, ranks.process_of_rank,
                                       attribution.modules.get(), options.timeline_bins, report));
  }

  CPPROF_ASSIGN_OR_RETURN(report.capture, nsys::ReadCaptureInfo(db));
  timer.Mark("capture info");
  CPPROF_ASSIGN_OR_RETURN(model::NvtxFacts facts,
                          attribution.has_nvtx ? nsys::ReadNvtxFacts(db, &attribution.domains, &attribution.tally)
                                               : nsys::ReadNvtxFacts(db));
  timer.Mark("NVTX facts");
  report.diagnostics = analysis::DiagnoseCapture(report.capture, facts);
  report.memory = std::move(memory);
  report.interconnect = ReadInterconnect(path);

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
