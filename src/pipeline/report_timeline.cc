// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "pipeline/report_timeline.h"

#include <map>
#include <string>
#include <utility>

#include "analysis/timeline.h"

namespace cpprof::pipeline {

namespace {

// A node's key under its parent: the NVTX range, or the name of a group or [unattributed].
const std::string& Key(const std::string& range, const std::string& name) { return range.empty() ? name : range; }

}  // namespace

std::vector<int> ModuleRowOfNode(const std::vector<analysis::ModuleTreeNode>& nodes, const model::Report& report) {
  std::map<std::string, int> row_of_path;
  std::vector<std::string> row_path(report.modules.size());
  for (size_t i = 0; i < report.modules.size(); ++i) {
    const auto& m = report.modules[i];
    row_path[i] = (m.parent < 0 ? std::string() : row_path[m.parent] + '\x1f') + Key(m.range, m.name);
    row_of_path.emplace(row_path[i], static_cast<int>(i));
  }
  std::vector<std::string> node_path(nodes.size());
  std::vector<int> out(nodes.size(), -1);
  for (size_t n = 0; n < nodes.size(); ++n) {  // a parent's id is smaller than its children's
    const auto& t = nodes[n];
    node_path[n] = (t.parent < 0 ? std::string() : node_path[t.parent] + '\x1f') + Key(t.range, t.name);
    auto it = row_of_path.find(node_path[n]);
    if (it != row_of_path.end()) out[n] = it->second;
  }
  return out;
}

Status AddTimeline(model::GpuWork& work, const std::vector<size_t>& process_of_rank,
                   const std::vector<analysis::ModuleTreeNode>* modules, int max_bins, model::Report& report) {
  model::Timeline& tl = report.timeline;
  tl.built = true;
  tl.max_bins = max_bins;
  tl.lanes = analysis::TimelineLanes(report.ranks);

  analysis::TimelineInput in;
  in.lanes = &tl.lanes;
  in.max_bins = max_bins;
  if (modules) {
    std::vector<int> row = ModuleRowOfNode(*modules, report);
    in.level0_row.assign(row.size(), -1);
    in.level1_row.assign(row.size(), -1);
    for (size_t n = 0; n < row.size(); ++n) {
      // The node's own row, else its nearest ancestor's (rows folded away).
      int r = -1;
      for (int a = static_cast<int>(n); a >= 0 && r < 0; a = (*modules)[a].parent) r = row[a];
      if (r < 0 || n == analysis::kUnattributed) continue;
      // Walk up the rows: the top-level row, and the row just below it.
      int below = -1;
      while (report.modules[r].parent >= 0) below = r, r = report.modules[r].parent;
      if (report.modules[r].name == "[unattributed]") continue;
      in.level0_row[n] = r;
      in.level1_row[n] = below;
    }
  }
  for (size_t r = 0; r < process_of_rank.size() && r < report.ranks.size(); ++r) {
    in.first_start = report.ranks[r].first_start;
    in.last_end = report.ranks[r].last_end;
    model::RankTimeline rt = analysis::BuildRankTimeline(work.processes[process_of_rank[r]], in);
    rt.rank = static_cast<int>(r);
    tl.ranks.push_back(std::move(rt));
  }
  return Status();
}

}  // namespace cpprof::pipeline
