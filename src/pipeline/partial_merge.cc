// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "pipeline/partial_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "analysis/clock_align.h"
#include "analysis/ranks.h"
#include "analysis/window.h"
#include "base/input_files.h"
#include "base/saturating.h"
#include "model/global_id.h"
#include "pipeline/run_reader.h"

namespace cpprof::pipeline {

namespace {

using model::kPidBits;
using model::RunPid;
constexpr size_t kClockSampleOps = 4096;  // per process and collective kind

// Shifts every time of a part onto the run's clock (saturated: a forced merge of partials whose
// clocks are far apart keeps its times at the ends of int64, not wrapped).
void Shift(RunPartial& part, int64_t offset) {
  if (offset == 0) return;
  auto shift = [offset](int64_t& t) { SatAdd(t, offset); };
  for (auto& p : part.processes) {
    auto& s = p.summary;
    shift(s.first_start);
    shift(s.last_end);
    if (s.peak_mem_bytes >= 0) shift(s.peak_mem_ns);
    auto& w = p.sweep;
    if (w.window_end > w.window_start) shift(w.window_start), shift(w.window_end);
    for (auto& ops : w.comm_ops) {
      for (auto& op : ops) shift(op.start), shift(op.end);
    }
    for (auto& iv : w.hidden_segments) shift(iv.start), shift(iv.end);
    for (auto& e : w.edge_comm_ops) shift(e.whole.start), shift(e.whole.end);
  }
  auto& win = part.window;
  if (!win.whole_capture) shift(win.start_ns), shift(win.end_ns);
  for (auto& it : win.iterations) shift(it.start_ns), shift(it.end_ns);
  for (auto& series : part.memory.series) {
    shift(series.peak_ns);
    for (auto& pt : series.timeline) shift(pt.time_ns);
  }
}

}  // namespace

namespace {

// One run, read with one set of options (unless forced).
Status CheckOneRun(const std::vector<RunPartial>& parts, const std::vector<std::string>& names, bool force) {
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
  return OkStatus();
}

// One clock: each part on the first part's, by its recorded start and its collectives' ends.
std::vector<analysis::ClockAlignment> AlignParts(const std::vector<RunPartial>& parts) {
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
  return analysis::AlignClocks(clocks);
}

// A process's module times by the run's node ids (`map`: the part's id -> the run's).
void RenumberNodes(ProcessPartial& p, const std::vector<uint16_t>& map,
                   const std::vector<analysis::ModuleTreeNode>& part_nodes,
                   const std::vector<analysis::ModuleTreeNode>& run_nodes) {
  std::vector<model::ModuleRankTime> nodes(std::max<size_t>(1, run_nodes.size()));
  for (size_t n = 0; n < p.sweep.nodes.size() && n < map.size(); ++n) {
    auto& to = nodes[map[n]];
    const auto& from = p.sweep.nodes[n];
    // One node each, but past the tree's limit several fold into their parent.
    SatAdd(to.busy_ns, from.busy_ns);
    SatAdd(to.own_ns, from.own_ns);
    SatAdd(to.backward_ns, from.backward_ns);
    SatAdd(to.comm_ns, from.comm_ns);
    SatAdd(to.hidden_ns, from.hidden_ns);
    for (size_t c = 0; c < to.comm_kind_ns.size(); ++c) SatAdd(to.comm_kind_ns[c], from.comm_kind_ns[c]);
    SatAdd(to.ops, from.ops);
    SatAdd(to.host_idle_ns, from.host_idle_ns);
    // A node folded into its parent (past the tree's limit) brings no calls of the parent.
    if (run_nodes.empty() || run_nodes[map[n]].name == part_nodes[n].name) SatAdd(to.calls, from.calls);
  }
  p.sweep.nodes = std::move(nodes);
  for (auto& ops : p.sweep.comm_ops) {
    for (auto& op : ops) op.node = op.node < map.size() ? map[op.node] : 0;
  }
  for (auto& e : p.sweep.edge_comm_ops) e.node = e.node < map.size() ? map[e.node] : 0;
}

// The parts merged into one run, part by part (the reduce step of `cpprof merge`).
class PartialMerger {
 public:
  PartialMerger(const std::vector<RunPartial>& parts, const std::vector<std::string>& names)
      : names_(names),
        merger_(run_.nodes),
        any_modules_(std::any_of(parts.begin(), parts.end(), [](const RunPartial& p) { return !p.nodes.empty(); })) {}

  void Add(size_t i, RunPartial& part, const analysis::ClockAlignment& clock) {
    Shift(part, clock.offset_ns);
    const size_t source_base = run_.sources.size();
    AddSources(part, clock);
    AddProcesses(part, source_base);
    // Memory series follow their process.
    for (auto& series : part.memory.series) {
      series.global_pid = RunPid(source_base, series.global_pid & kPidBits);
      run_.memory.series.push_back(std::move(series));
    }
    run_.memory.captured |= part.memory.captured;
    SatAdd(run_.memory.ignored_events, part.memory.ignored_events);
    SatAdd(run_.memory.invalid_events, part.memory.invalid_events);
    if (i == 0) {
      run_.efficiency = part.efficiency;
      run_.memory.note = part.memory.note;
      run_.memory.counted_kinds = part.memory.counted_kinds;
      run_.grouping = part.grouping;
      run_.window = part.window;
      for (size_t k = 0; k < run_.window.iterations.size(); ++k) iteration_index_[run_.window.iterations[k].name] = k;
      run_.attribution.exclude_work_pattern = part.attribution.exclude_work_pattern;
    } else {
      CompareEfficiency(i, part);
      MergeWindow(part);
      run_.grouping.module_ranges = std::max(run_.grouping.module_ranges, part.grouping.module_ranges);
      run_.grouping.backtraces.Add(part.grouping.backtraces);
    }
    run_.attribution.Add(part.attribution);
    for (auto& n : part.notes) {
      if (seen_notes_.insert(n).second) run_.notes.push_back(std::move(n));
    }
  }

  RunPartial Finish(size_t parts) {
    run_.attribution.modules_overflowed |= merger_.overflowed();
    // Each map step named its export alone: named again among all, so that same-named exports of
    // different folders (node0/rep.sqlite, node1/rep.sqlite) stay apart.
    std::vector<std::string> files;
    for (const auto& s : run_.sources) files.push_back(s.run_export.file);
    std::vector<std::string> export_names = DistinctNames(files);
    for (size_t k = 0; k < run_.sources.size(); ++k) run_.sources[k].run_export.name = std::move(export_names[k]);
    // Nodes added after a process's table was sized: every table to the tree's final size.
    for (auto& p : all_) p.sweep.nodes.resize(std::max<size_t>(1, run_.nodes.size()));
    FinishWindow(parts);
    std::vector<const model::CaptureInfo*> source_captures;
    for (const auto& s : run_.sources) source_captures.push_back(&s.capture);
    analysis::RankAssignment ranks = analysis::AssignRunRanks(procs_, nccl_, source_of_process_, source_captures);
    run_.rank_method = ranks.method;
    run_.world_size = ranks.world_size;
    run_.notes.insert(run_.notes.end(), ranks.notes.begin(), ranks.notes.end());
    for (size_t p : ranks.process_of_rank) run_.processes.push_back(std::move(all_[p]));
    return std::move(run_);
  }

 private:
  // The part's exports, the first with the clock the merge found for it.
  void AddSources(RunPartial& part, const analysis::ClockAlignment& clock) {
    for (size_t k = 0; k < part.sources.size(); ++k) {
      SourcePartial s = std::move(part.sources[k]);
      s.run_export.offset_ns += clock.offset_ns;
      if (k == 0) {
        s.run_export.refine_ns = clock.refine_ns;
        s.run_export.residual_ns = clock.residual_ns;
        s.run_export.matched_ops = clock.matched_ops;
        s.run_export.method = clock.method;
      }
      run_.sources.push_back(std::move(s));
    }
  }

  // The part's module tree into the run's; its processes with their nodes renumbered.
  void AddProcesses(RunPartial& part, size_t source_base) {
    std::vector<analysis::ModuleTreeNode> part_nodes = part.nodes;
    if (part_nodes.empty() && any_modules_) part_nodes = {analysis::ModuleTreeNode{"[unattributed]", "", -1, 0, false}};
    std::vector<uint16_t> map = any_modules_ ? merger_.Add(part_nodes) : std::vector<uint16_t>{0};
    for (auto& p : part.processes) {
      p.source += source_base;
      // Processes of one export keep their pid; the export's index replaces the hardware id.
      p.process.global_pid = RunPid(p.source, p.process.global_pid & kPidBits);
      p.summary.global_pid = p.process.global_pid;
      if (p.nccl.rank >= 0) nccl_[p.process.global_pid] = p.nccl;
      RenumberNodes(p, map, part_nodes, run_.nodes);
      procs_.push_back(p.process);
      source_of_process_.push_back(p.source);
      all_.push_back(std::move(p));
    }
  }

  void CompareEfficiency(size_t i, const RunPartial& part) {
    const EfficiencyInputs& mine = part.efficiency;
    const EfficiencyInputs& first = run_.efficiency;
    if (mine.has_dims == first.has_dims && (!mine.has_dims || mine.dims.ToString() == first.dims.ToString()) &&
        mine.cost_config == first.cost_config) {
      return;
    }
    run_.notes.push_back(fmt::format(
        "'{}' has other cost model sizes or config than '{}' ({} vs {}): '{}''s are used for the efficiency section",
        names_[i], names_[0], mine.has_dims ? mine.dims.ToString() : "none",
        first.has_dims ? first.dims.ToString() : "none", names_[0]));
  }

  // The run's window spans every part's; iterations of one name are one.
  void MergeWindow(const RunPartial& part) {
    model::Window& w = run_.window;
    if (!w.whole_capture && !part.window.whole_capture) {
      w.start_ns = std::min(w.start_ns, part.window.start_ns);
      w.end_ns = std::max(w.end_ns, part.window.end_ns);
    }
    for (const auto& it : part.window.iterations) {
      auto [at, added] = iteration_index_.try_emplace(it.name, w.iterations.size());
      if (added) {
        w.iterations.push_back(it);
      } else {
        model::IterationTime& same = w.iterations[at->second];
        same.start_ns = std::min(same.start_ns, it.start_ns);
        same.end_ns = std::max(same.end_ns, it.end_ns);
        same.in_window = same.in_window || it.in_window;
      }
    }
  }

  void FinishWindow(size_t parts) {
    std::sort(run_.window.iterations.begin(), run_.window.iterations.end(), [](const auto& a, const auto& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.name < b.name;
    });
    if (parts > 1 && !run_.window.whole_capture) {
      // Before the per-iteration times, which AddIterationStats puts last.
      const std::string_view kStats = "; per iteration ";
      if (size_t at = run_.window.description.find(kStats); at != std::string::npos) {
        run_.window.description.resize(at);
      }
      run_.window.description +=
          "; merged from partials: each export's numbers cover its own window (its own iterations), not the run's";
    }
    analysis::AddIterationStats(run_.window);
  }

  const std::vector<std::string>& names_;
  RunPartial run_;
  ModuleTreeMerger merger_;
  const bool any_modules_;
  std::map<int64_t, model::NcclRankInfo> nccl_;
  std::vector<model::GpuProcess> procs_;
  std::vector<size_t> source_of_process_;
  std::vector<ProcessPartial> all_;
  std::unordered_map<std::string, size_t> iteration_index_;  // name -> index in run_.window.iterations
  std::unordered_set<std::string> seen_notes_;               // run_.notes, for a merge linear in notes
};

}  // namespace

StatusOr<RunPartial> MergePartials(std::vector<RunPartial> parts, const std::vector<std::string>& names, bool force) {
  if (parts.empty()) return Status(ExitCode::kUsage, "merge needs partials: cpprof merge RUN.*.partial.json");
  CPPROF_RETURN_IF_ERROR(CheckOneRun(parts, names, force));
  const std::vector<analysis::ClockAlignment> aligned = AlignParts(parts);
  PartialMerger merger(parts, names);
  for (size_t i = 0; i < parts.size(); ++i) merger.Add(i, parts[i], aligned[i]);
  return merger.Finish(parts.size());
}

}  // namespace cpprof::pipeline
