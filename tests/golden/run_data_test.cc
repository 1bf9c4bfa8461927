// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// pipeline::RunData, the one reading behind `report --format html`: a window cut from the ops in
// memory gives the readout that reading the export with that window gives (BuildReport), on every
// real export, for windows whose edges cut ops, for several overlapping windows cut in one pass,
// and for a run read from one export per rank; the overlap tax of a window cut in memory too.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pipeline/build_report.h"
#include "pipeline/run_reader.h"
#include "render/report_json.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::ordered_json;

ordered_json Readout(const model::Report& r) { return render::ReportJson(r, render::RenderOptions{}); }

ordered_json Read(const std::vector<std::string>& paths, const std::string& window) {
  pipeline::ReportOptions o;
  o.window = window;
  o.replay = false;  // the cuts are FinishReport's alone; the replay is checked in replay_truth_test
  StatusOr<model::Report> r = pipeline::BuildReport(paths, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? Readout(*r) : ordered_json();
}

// "A:B" in microseconds: the middle third of [start, end].
std::string MiddleThird(int64_t start, int64_t end) {
  const int64_t third = (end - start) / 3;
  return std::to_string((start + third) / 1000) + "us:" + std::to_string((end - third) / 1000) + "us";
}

// Each window of `specs` cut from one RunData in one pass, against reading the export with it.
void ExpectCutsEqualReads(const std::vector<std::string>& paths, const std::vector<std::string>& specs) {
  pipeline::ReportOptions o;
  StatusOr<pipeline::RunData> data = pipeline::ReadRunData(paths, o);
  ASSERT_TRUE(data.ok()) << data.status().message();
  std::vector<model::Window> windows;
  for (const auto& spec : specs) {
    StatusOr<model::Window> w = data->Window(spec);
    ASSERT_TRUE(w.ok()) << spec << ": " << w.status().message();
    ASSERT_FALSE(w->whole_capture) << spec;
    windows.push_back(*w);
  }
  std::vector<pipeline::RunPartial> parts = data->Partials(windows, /*memory=*/true);
  ASSERT_EQ(parts.size(), specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    model::Report cut = pipeline::FinishReport(std::move(parts[i]), {});
    cut.overlap_tax = data->OverlapTax(windows[i]);
    pipeline::AddEfficiency(paths, o, cut);
    EXPECT_EQ(Readout(cut), Read(paths, specs[i])) << paths[0] << " --window " << specs[i];
  }
  // The whole capture from the ops themselves.
  StatusOr<model::Window> all = data->Window("all");
  ASSERT_TRUE(all.ok());
  const model::OverlapTax tax = data->OverlapTax(*all);
  model::Report whole = pipeline::FinishReport(data->TakeAll(*all, nullptr, /*memory=*/true), {});
  whole.overlap_tax = tax;
  pipeline::AddEfficiency(paths, o, whole);
  EXPECT_EQ(Readout(whole), Read(paths, "all")) << paths[0] << " --window all";
}

class RunDataReal : public ::testing::TestWithParam<std::string> {};

TEST_P(RunDataReal, WindowsCutInMemoryAreTheWindowsRead) {
  const std::string path = RealExport(GetParam());
  const ordered_json all = Read({path}, "all");
  std::vector<std::string> specs;
  const ordered_json& its = all["window"]["iterations"];
  if (!its.empty()) {
    specs.push_back("steady");
    specs.push_back("iter:0");
    specs.push_back("iter:" + std::to_string(its.size() - 1));
    // Inside an iteration, cutting its ops at both edges; and across the first two.
    const ordered_json& it = its[its.size() > 1 ? 1 : 0];
    specs.push_back(MiddleThird(it["start_ns"], it["end_ns"]));
    if (its.size() > 1) specs.push_back(MiddleThird(its[0]["start_ns"], its[1]["end_ns"]));
  } else {
    // No iterations: a time window over the middle of the ranks' work.
    specs.push_back(MiddleThird(all["per_rank"][0]["first_start_ns"], all["per_rank"][0]["last_end_ns"]));
  }
  ExpectCutsEqualReads({path}, specs);
}

INSTANTIATE_TEST_SUITE_P(Exports, RunDataReal, ::testing::ValuesIn(RealExportNames()), [](const auto& param_info) {
  std::string n = param_info.param;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
});

TEST(RunData, OneExportPerRank) {
  const std::string dir = TempDir() + "/run-data-split";
  SplitOptions split;
  split.start_later_ns = {0, 1'500'000, 3'000'000, 4'500'000};  // clocks to align, names to renumber
  std::vector<std::string> parts = SplitPerProcess(RealExport("cpfold-trunk-2x2"), dir, split);
  ASSERT_EQ(parts.size(), 4u);
  const ordered_json all = Read(parts, "all");
  const ordered_json& its = all["window"]["iterations"];
  ASSERT_GE(its.size(), 2u);
  ExpectCutsEqualReads(parts, {"steady", "iter:1", MiddleThird(its[1]["start_ns"], its[1]["end_ns"])});
}

TEST(RunData, ABadWindowIsSaidBeforeTheOpsAreRead) {
  pipeline::ReportOptions o;
  o.window = "iter:99";
  StatusOr<pipeline::RunData> data = pipeline::ReadRunData({RealExport("cpwork-train")}, o);
  ASSERT_FALSE(data.ok());
  StatusOr<model::Report> read = pipeline::BuildReport(RealExport("cpwork-train"), o);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(data.status().message(), read.status().message());
}

}  // namespace
}  // namespace cpprof::testing
