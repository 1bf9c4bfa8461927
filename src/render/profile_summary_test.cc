// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/profile_summary.h"

#include <gtest/gtest.h>

#include <sstream>

#include "render/report_render.h"

namespace cpprof::render {
namespace {

std::string Summary(const model::ProfileSummary& s) {
  std::ostringstream out;
  PrintProfileSummary(s, out);
  return out.str();
}

model::ProfileSummary FastRun() {
  model::ProfileSummary s;
  s.name = "cpfold-e2e-n512-1x2-fast";
  s.nsys = "/opt/nsys";
  s.nsys_version = "2025.3.1.0";
  s.preset = "fast";
  s.nsys_options = {"--trace=cuda,nvtx", "--sample=none"};
  s.ranks_per_node = 2;
  s.gpus = {0, 1};
  s.wall_s = 12.34;
  return s;
}

// A run with nothing to add: the four lines of what ran, no sections.
TEST(ProfileSummary, APlainRunIsItsHeadOnly) {
  EXPECT_EQ(Summary(FastRun()),
            "# cpprof profile: cpfold-e2e-n512-1x2-fast\n\n"
            "- nsys: `/opt/nsys` (2025.3.1.0)\n"
            "- preset: fast (`--trace=cuda,nvtx --sample=none`)\n"
            "- ranks: 2 per node x 1 node(s), GPUs 0,1\n"
            "- wall time of the profiled run: 12.3 s\n");
}

// Every section, in order: dropped options, the probe, warnings, the workload's lines, the
// comparison (with the caution when the nsys options differ).
TEST(ProfileSummary, EverySectionInItsPlace) {
  model::ProfileSummary s = FastRun();
  s.preset = "full";
  s.gpus.clear();
  s.dropped = {"--cudabacktrace=all: inert"};
  s.probe = true;
  s.probe_file = "x.probe.json";
  s.probe_lines = {"rank 0: peak memory 1 GiB"};
  s.warnings = {"kept the caller's CUDA_VISIBLE_DEVICES=1"};
  s.workload_lines = {"cpfold: {\"rank\": 0}"};
  s.compared_with = "old.sqlite";
  model::ReportDiff d;
  d.sanity_line = "SAME GPU work";
  d.sanity_details = {"2 ranks"};
  d.options_a = "--trace=cuda";
  d.options_b = "--trace=cuda,nvtx";
  s.comparison = d;
  EXPECT_EQ(Summary(s),
            "# cpprof profile: cpfold-e2e-n512-1x2-fast\n\n"
            "- nsys: `/opt/nsys` (2025.3.1.0)\n"
            "- preset: full (`--trace=cuda,nvtx --sample=none`)\n"
            "- ranks: 2 per node x 1 node(s)\n"
            "- wall time of the profiled run: 12.3 s\n"
            "- timings were taken under the full option set: expect them slower than an unprofiled run (most where "
            "the run is launch-bound)\n"
            "\n## Options dropped or inert\n\n- --cudabacktrace=all: inert\n"
            "\n## Feasibility probe (without nsys; `x.probe.json`)\n\n- rank 0: peak memory 1 GiB\n"
            "\n## Warnings\n\n- kept the caller's CUDA_VISIBLE_DEVICES=1\n"
            "\n## The workload's own summary\n\n```\ncpfold: {\"rank\": 0}\n```\n"
            "\n## Compared with old.sqlite (`cpprof diff --sanity`)\n\nSAME GPU work\n- 2 ranks\n"
            "\nThe two captures used different nsys options (before: `--trace=cuda`; now: `--trace=cuda,nvtx`): time "
            "differences may come from the profiler.\n");
}

// The probe's section is there whenever the probe ran, even when it said nothing.
TEST(ProfileSummary, AProbeWithoutLinesStillHasItsHeading) {
  model::ProfileSummary s = FastRun();
  s.probe = true;
  s.probe_file = "x.probe.json";
  EXPECT_NE(Summary(s).find("\n## Feasibility probe (without nsys; `x.probe.json`)\n\n"), std::string::npos);
}

// The readout file: the summary, a blank line, the report's Markdown.
TEST(ProfileSummary, TheReadoutIsTheSummaryThenTheReport) {
  model::Report report;
  std::ostringstream md, readout;
  PrintReportMarkdown(report, {}, md);
  PrintProfileReadout(FastRun(), report, readout);
  EXPECT_EQ(readout.str(), Summary(FastRun()) + "\n" + md.str());
}

}  // namespace
}  // namespace cpprof::render
