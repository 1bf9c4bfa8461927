// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "pipeline/cp_view.h"

#include <algorithm>
#include <map>
#include <utility>

#include "analysis/comm_match.h"
#include "analysis/module_attribution.h"
#include "analysis/window.h"
#include "pipeline/report_timeline.h"
#include "pipeline/run_reader.h"

namespace cpprof::pipeline {

namespace {

// Each NCCL op of each rank split as the readout splits it: an op's transfer starts at its
// instance's last arrival, so the ops of one instance share that start, which names the instance.
void SplitComm(const RunPartial& run, CpView& view) {
  std::vector<const analysis::RankModuleTimes*> sweeps;
  for (const auto& p : run.processes) sweeps.push_back(&p.sweep);
  const analysis::CommMatch match = analysis::MatchComm(sweeps);
  std::map<std::pair<int, int64_t>, int64_t> instance_of;  // (kind, last start) -> instance
  for (int k = 0; k < model::kNumOpClasses; ++k) {
    const auto& per_rank = match.splits[static_cast<size_t>(k)];
    for (size_t r = 0; r < run.processes.size() && r < per_rank.size(); ++r) {
      const auto& ops = run.processes[r].sweep.comm_ops[static_cast<size_t>(k)];
      CpRankView& rv = view.ranks[r];
      for (size_t i = 0; i < ops.size() && i < per_rank[r].size(); ++i) {
        const auto& op = ops[i];
        const auto& split = per_rank[r][i];
        CpCommSlice s;
        s.kind = static_cast<model::OpClass>(k);
        s.op_start = op.start;
        if (!split.matched) {
          s.start = op.start, s.end = op.end, s.part = CpCommSlice::Part::kUnmatched;
          rv.unmatched_ns += op.end - op.start;
          rv.comm.push_back(s);
          continue;
        }
        auto [at, added] =
            instance_of.try_emplace({k, split.transfer_start}, static_cast<int64_t>(view.instances.size()));
        if (added) view.instances.push_back({s.kind, split.transfer_start, {}});
        s.instance = at->second;
        view.instances[static_cast<size_t>(s.instance)].arrivals.push_back({static_cast<int>(r), op.start});
        const int64_t cut = std::clamp(op.start + split.wait_ns, op.start, op.end);
        if (cut > op.start) {
          s.start = op.start, s.end = cut, s.part = CpCommSlice::Part::kWait;
          rv.comm.push_back(s);
        }
        s.start = cut, s.end = op.end, s.part = CpCommSlice::Part::kTransfer;
        rv.comm.push_back(s);
        rv.wait_ns += cut - op.start;
        rv.transfer_ns += op.end - cut;
      }
    }
  }
  for (auto& rv : view.ranks) {
    std::stable_sort(rv.comm.begin(), rv.comm.end(), [](const CpCommSlice& a, const CpCommSlice& b) {
      return a.op_start != b.op_start ? a.op_start < b.op_start : a.start < b.start;
    });
  }
  for (auto& in : view.instances) {
    std::sort(in.arrivals.begin(), in.arrivals.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second < b.second : a.first < b.first;
    });
  }
}

}  // namespace

StatusOr<CpView> BuildCpView(const std::vector<std::string>& paths, const ReportOptions& options, int module_bins) {
  ReportOptions o = options;
  o.timeline = true;
  o.timeline_bins = module_bins;
  RunWork work;
  CPPROF_ASSIGN_OR_RETURN(RunPartial run, ReadRun(paths, o, &work));
  CpView view;
  view.ranks.resize(run.processes.size());
  for (size_t r = 0; r < view.ranks.size(); ++r) view.ranks[r].rank = static_cast<int>(r);
  SplitComm(run, view);
  std::vector<analysis::ModuleTreeNode> nodes = run.nodes;
  model::Report report = FinishReport(std::move(run), options.exec);
  if (options.replay) {
    // The replay predicts per steady iteration: over the whole capture (the export's default),
    // those --window steady would hold.
    // Only the critical path is drawn: the verdict's candidates are not re-timed.
    AddReplay(work, nodes, {}, report.window.whole_capture ? analysis::SteadyOf(report.window) : report.window,
              options.exec, report, /*candidates=*/false);
    for (const auto& it : report.replay.iterations) {
      for (const auto& s : it.path) view.critical_path.push_back({s.rank, s.start_ns, s.end_ns, s.kind, it.name});
    }
  }
  CPPROF_RETURN_IF_ERROR(
      AddTimeline(work.work, work.process_of_rank, nodes.empty() ? nullptr : &nodes, module_bins, report));
  view.window = report.window;
  const std::vector<std::string> path = analysis::ModulePaths(report.modules);
  for (const auto& rt : report.timeline.ranks) {
    if (rt.rank < 0 || static_cast<size_t>(rt.rank) >= view.ranks.size()) continue;
    CpRankView& rv = view.ranks[static_cast<size_t>(rt.rank)];
    for (int level = 0; level < 2; ++level) {
      for (const auto& run_span : rt.module_runs[level]) {
        const auto& m = report.modules.at(static_cast<size_t>(run_span.row));
        rv.modules.push_back(
            {run_span.start, run_span.end, level, m.name, path[static_cast<size_t>(run_span.row)], m.cp_distributed});
      }
    }
  }
  // Memory: each rank's process on the device where its memory peaked.
  for (auto& rv : view.ranks) {
    const auto& s = report.ranks.at(static_cast<size_t>(rv.rank));
    const model::MemorySeries* best = nullptr;
    for (const auto& m : report.memory.series) {
      if (m.global_pid == s.global_pid && (!best || m.peak_bytes > best->peak_bytes)) best = &m;
    }
    if (best) rv.memory = best->timeline;
  }
  return view;
}

}  // namespace cpprof::pipeline
