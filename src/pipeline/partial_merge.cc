#include "pipeline/partial_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/clock_align.h"
#include "analysis/ranks.h"
#include "analysis/window.h"
#include "base/input_files.h"
#include "model/global_id.h"
#include "pipeline/run_reader.h"

namespace cpprof::pipeline {

namespace {

using model::kPidBits;
using model::RunPid;
constexpr size_t kClockSampleOps = 4096;  // per process and collective kind

// Shifts every time of a part onto the run's clock.
void Shift(RunPartial& part, int64_t offset) {
  if (offset == 0) return;
  for (auto& p : part.processes) {
    auto& s = p.summary;
    s.first_start += offset;
    s.last_end += offset;
    if (s.peak_mem_bytes >= 0) s.peak_mem_ns += offset;
    auto& w = p.sweep;
    if (w.window_end > w.window_start) w.window_start += offset, w.window_end += offset;
    for (auto& ops : w.comm_ops) {
      for (auto& op : ops) op.start += offset, op.end += offset;
    }
    for (auto& iv : w.hidden_segments) iv.start += offset, iv.end += offset;
  }
  auto& win = part.window;
  if (!win.whole_capture) win.start_ns += offset, win.end_ns += offset;
  for (auto& it : win.iterations) it.start_ns += offset, it.end_ns += offset;
  for (auto& series : part.memory.series) {
    series.peak_ns += offset;
    for (auto& pt : series.timeline) pt.time_ns += offset;
  }
}

}  // namespace

StatusOr<RunPartial> MergePartials(std::vector<RunPartial> parts, const std::vector<std::string>& names, bool force) {
  if (parts.empty()) return Status(ExitCode::kUsage, "merge needs partials: cpprof merge RUN.*.partial.json");
  // One run, read with one set of options.
  std::vector<const model::CaptureInfo*> captures;
  for (const auto& p : parts) captures.push_back(&p.sources[0].capture);
  CPPROF_RETURN_IF_ERROR(analysis::CheckSameRun(captures, names, force));
  for (size_t i = 1; i < parts.size() && !force; ++i) {
    const auto& a = parts[0];
    const auto& b = parts[i];
    if (a.window.requested != b.window.requested || a.grouping.source != b.grouping.source ||
        a.attribution.exclude_work_pattern != b.attribution.exclude_work_pattern) {
      return Status(
          ExitCode::kUsage,
          fmt::format("'{}' and '{}' were made with different options (--window '{}' vs '{}', modules '{}' vs "
                      "'{}', --exclude-ranges '{}' vs '{}'): make every partial with the same options, or "
                      "--force",
                      names[0], names[i], a.window.requested, b.window.requested, a.grouping.source, b.grouping.source,
                      a.attribution.exclude_work_pattern, b.attribution.exclude_work_pattern));
    }
  }

  // One clock: each part on the first part's, by its recorded start and its collectives' ends.
  std::vector<analysis::ClockInput> clocks(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    clocks[i].utc_start_ns = parts[i].sources[0].run_export.utc_start_ns;
    // The first collectives of each kind are plenty to pair the clocks: a bounded sample keeps
    // the merge's memory to the ops themselves.
    for (const auto& p : parts[i].processes) {
      for (int c = 0; c < model::kNumOpClasses; ++c) {
        if (!analysis::IsCollective(static_cast<model::OpClass>(c))) continue;
        const auto& ops = p.sweep.comm_ops[c];
        for (size_t k = 0; k < ops.size() && k < kClockSampleOps; ++k) {
          clocks[i].comm.push_back({p.process.global_pid, ops[k].start, ops[k].end, static_cast<model::OpClass>(c)});
        }
      }
    }
  }
  std::vector<analysis::ClockAlignment> aligned = analysis::AlignClocks(clocks);
  clocks.clear();

  RunPartial run;
  ModuleTreeMerger merger(run.nodes);
  std::map<int64_t, model::NcclRankInfo> nccl;
  std::vector<model::GpuProcess> procs;
  std::vector<size_t> source_of_process;
  std::vector<ProcessPartial> all;
  std::unordered_map<std::string, size_t> iteration_index;  // name -> index in run.window.iterations
  const bool any_modules =
      std::any_of(parts.begin(), parts.end(), [](const RunPartial& p) { return !p.nodes.empty(); });
  for (size_t i = 0; i < parts.size(); ++i) {
    RunPartial& part = parts[i];
    Shift(part, aligned[i].offset_ns);
    const size_t source_base = run.sources.size();
    for (size_t k = 0; k < part.sources.size(); ++k) {
      SourcePartial s = std::move(part.sources[k]);
      s.run_export.offset_ns += aligned[i].offset_ns;
      if (k == 0) {
        s.run_export.refine_ns = aligned[i].refine_ns;
        s.run_export.residual_ns = aligned[i].residual_ns;
        s.run_export.matched_ops = aligned[i].matched_ops;
        s.run_export.method = aligned[i].method;
      }
      run.sources.push_back(std::move(s));
    }
    // The part's module tree into the run's; its nodes renumbered in every process.
    std::vector<analysis::ModuleTreeNode> part_nodes = part.nodes;
    if (part_nodes.empty() && any_modules) part_nodes = {analysis::ModuleTreeNode{"[unattributed]", "", -1, 0, false}};
    std::vector<uint16_t> map = any_modules ? merger.Add(part_nodes) : std::vector<uint16_t>{0};
    for (auto& p : part.processes) {
      p.source += source_base;
      // Processes of one export keep their pid; the export's index replaces the hardware id.
      p.process.global_pid = RunPid(p.source, p.process.global_pid & kPidBits);
      p.summary.global_pid = p.process.global_pid;
      if (p.nccl.rank >= 0) nccl[p.process.global_pid] = p.nccl;
      std::vector<model::ModuleRankTime> nodes(std::max<size_t>(1, run.nodes.size()));
      for (size_t n = 0; n < p.sweep.nodes.size() && n < map.size(); ++n) {
        auto& to = nodes[map[n]];
        const auto& from = p.sweep.nodes[n];
        // One node each, but past the tree's limit several fold into their parent.
        to.busy_ns += from.busy_ns;
        to.own_ns += from.own_ns;
        to.backward_ns += from.backward_ns;
        to.comm_ns += from.comm_ns;
        to.hidden_ns += from.hidden_ns;
        for (size_t c = 0; c < to.comm_kind_ns.size(); ++c) to.comm_kind_ns[c] += from.comm_kind_ns[c];
        to.ops += from.ops;
        to.host_idle_ns += from.host_idle_ns;
        // A node folded into its parent (past the tree's limit) brings no calls of the parent.
        if (run.nodes.empty() || run.nodes[map[n]].name == part_nodes[n].name) to.calls += from.calls;
      }
      p.sweep.nodes = std::move(nodes);
      for (auto& ops : p.sweep.comm_ops) {
        for (auto& op : ops) op.node = op.node < map.size() ? map[op.node] : 0;
      }
      procs.push_back(p.process);
      source_of_process.push_back(p.source);
      all.push_back(std::move(p));
    }
    // Memory series follow their process.
    for (auto& series : part.memory.series) {
      series.global_pid = RunPid(source_base, series.global_pid & kPidBits);
      run.memory.series.push_back(std::move(series));
    }
    run.memory.captured |= part.memory.captured;
    run.memory.ignored_events += part.memory.ignored_events;
    run.memory.invalid_events += part.memory.invalid_events;
    if (i == 0) {
      run.efficiency = part.efficiency;
    } else if (part.efficiency.has_dims != run.efficiency.has_dims ||
               (part.efficiency.has_dims && part.efficiency.dims.ToString() != run.efficiency.dims.ToString()) ||
               part.efficiency.cost_config != run.efficiency.cost_config) {
      run.notes.push_back(
          fmt::format("'{}' has other cost model sizes or config than '{}' ({} vs {}): '{}''s are used "
                      "for the efficiency section",
                      names[i], names[0], part.efficiency.has_dims ? part.efficiency.dims.ToString() : "none",
                      run.efficiency.has_dims ? run.efficiency.dims.ToString() : "none", names[0]));
    }
    if (i == 0) {
      run.memory.note = part.memory.note;
      run.memory.counted_kinds = part.memory.counted_kinds;
      run.grouping = part.grouping;
      run.window = part.window;
      for (size_t k = 0; k < run.window.iterations.size(); ++k) iteration_index[run.window.iterations[k].name] = k;
      run.attribution.exclude_work_pattern = part.attribution.exclude_work_pattern;
    } else {
      // The run's window spans every part's; iterations of one name are one.
      model::Window& w = run.window;
      if (!w.whole_capture && !part.window.whole_capture) {
        w.start_ns = std::min(w.start_ns, part.window.start_ns);
        w.end_ns = std::max(w.end_ns, part.window.end_ns);
      }
      for (const auto& it : part.window.iterations) {
        auto [at, added] = iteration_index.try_emplace(it.name, w.iterations.size());
        if (added) {
          w.iterations.push_back(it);
        } else {
          model::IterationTime& same = w.iterations[at->second];
          same.start_ns = std::min(same.start_ns, it.start_ns);
          same.end_ns = std::max(same.end_ns, it.end_ns);
          same.in_window = same.in_window || it.in_window;
        }
      }
      run.grouping.module_ranges = std::max(run.grouping.module_ranges, part.grouping.module_ranges);
    }
    run.attribution.Add(part.attribution);
    for (auto& n : part.notes) {
      if (std::find(run.notes.begin(), run.notes.end(), n) == run.notes.end()) run.notes.push_back(std::move(n));
    }
  }
  run.attribution.modules_overflowed |= merger.overflowed();
  // Each map step named its export alone: named again among all, so that same-named exports of
  // different folders (node0/rep.sqlite, node1/rep.sqlite) stay apart.
  std::vector<std::string> files;
  for (const auto& s : run.sources) files.push_back(s.run_export.file);
  std::vector<std::string> export_names = DistinctNames(files);
  for (size_t k = 0; k < run.sources.size(); ++k) run.sources[k].run_export.name = std::move(export_names[k]);
  // Nodes added after a process's table was sized: every table to the tree's final size.
  for (auto& p : all) p.sweep.nodes.resize(std::max<size_t>(1, run.nodes.size()));
  std::sort(run.window.iterations.begin(), run.window.iterations.end(), [](const auto& a, const auto& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.name < b.name;
  });
  if (parts.size() > 1 && !run.window.whole_capture) {
    // Before the per-iteration times, which AddIterationStats puts last.
    const std::string_view kStats = "; per iteration ";
    if (size_t at = run.window.description.find(kStats); at != std::string::npos) run.window.description.resize(at);
    run.window.description +=
        "; merged from partials: each export's numbers cover its own window (its own iterations), not the run's";
  }
  analysis::AddIterationStats(run.window);

  std::vector<const model::CaptureInfo*> source_captures;
  for (const auto& s : run.sources) source_captures.push_back(&s.capture);
  analysis::RankAssignment ranks = analysis::AssignRunRanks(procs, nccl, source_of_process, source_captures);
  run.rank_method = ranks.method;
  run.world_size = ranks.world_size;
  run.notes.insert(run.notes.end(), ranks.notes.begin(), ranks.notes.end());
  for (size_t p : ranks.process_of_rank) run.processes.push_back(std::move(all[p]));
  return run;
}

}  // namespace cpprof::pipeline
