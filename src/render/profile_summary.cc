// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/profile_summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "render/report_render.h"

namespace cpprof::render {

namespace {

// "\n## TITLE\n\n" and one "- item" line each; nothing when there are no items.
void PrintListSection(const std::string& title, const std::vector<std::string>& items, std::ostream& out) {
  if (items.empty()) return;
  out << "\n## " << title << "\n\n";
  for (const auto& i : items) out << "- " << i << '\n';
}

// --compare: the sanity verdict against the earlier result, and a caution when the two captures'
// nsys options differ.
void PrintComparison(const model::ProfileSummary& s, std::ostream& out) {
  if (!s.comparison) return;
  const model::ReportDiff& d = *s.comparison;
  out << fmt::format("\n## Compared with {} (`cpprof diff --sanity`)\n\n{}\n", s.compared_with, d.sanity_line);
  for (const auto& x : d.sanity_details) out << "- " << x << '\n';
  if (!d.options_a.empty()) {
    out << fmt::format(
        "\nThe two captures used different nsys options (before: `{}`; now: `{}`): time "
        "differences may come from the profiler.\n",
        d.options_a, d.options_b);
  }
}

}  // namespace

void PrintProfileSummary(const model::ProfileSummary& s, std::ostream& out) {
  out << fmt::format("# cpprof profile: {}\n\n", s.name);
  out << fmt::format("- nsys: `{}` ({})\n", s.nsys, s.nsys_version);
  out << fmt::format("- preset: {} (`{}`)\n", s.preset, fmt::join(s.nsys_options, " "));
  out << fmt::format("- ranks: {} per node x {} node(s){}\n", s.ranks_per_node, s.nnodes,
                     s.gpus.empty() ? "" : fmt::format(", GPUs {}", fmt::join(s.gpus, ",")));
  out << fmt::format("- wall time of the profiled run: {:.1f} s\n", s.wall_s);
  if (s.preset == "full") {
    out << "- timings were taken under the full option set: expect them slower than an unprofiled run "
           "(most where the run is launch-bound)\n";
  }
  PrintListSection("Options dropped or inert", s.dropped, out);
  if (s.probe) {
    out << fmt::format("\n## Feasibility probe (without nsys; `{}`)\n\n", s.probe_file);
    for (const auto& l : s.probe_lines) out << "- " << l << '\n';
  }
  PrintListSection("Warnings", s.warnings, out);
  if (!s.workload_lines.empty()) {
    out << "\n## The workload's own summary\n\n```\n";
    for (const auto& l : s.workload_lines) out << l << '\n';
    out << "```\n";
  }
  PrintComparison(s, out);
}

void PrintProfileReadout(const model::ProfileSummary& s, const model::Report& report, std::ostream& out) {
  PrintProfileSummary(s, out);
  out << '\n';
  PrintReportMarkdown(report, {}, out);
}

}  // namespace cpprof::render
