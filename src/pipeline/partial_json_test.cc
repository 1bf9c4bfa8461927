// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The run's attribution facts (pipeline::AttributionFacts): one struct from the exports through
// the partial to the readout. In a partial they are fields of the top-level object, as
// cpprof.partial/1 has always written them; merged, counts add up, flags or, the first warm-up
// range is kept and the pattern is the run's.
#include "pipeline/partial_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "pipeline/partial_merge.h"

namespace cpprof::pipeline {
namespace {

RunPartial WithFacts(const AttributionFacts& facts, const std::string& file) {
  RunPartial run;
  run.sources.emplace_back();
  run.sources[0].run_export.file = file;
  run.sources[0].export_info.file = file;
  run.attribution = facts;
  return run;
}

AttributionFacts Facts(int64_t backward, int64_t mapped, int64_t cross, bool overflowed, bool deep, std::string warmup,
                       std::string exclude) {
  AttributionFacts f;
  f.backward_ranges = backward;
  f.backward_mapped = mapped;
  f.cross_thread = cross;
  f.modules_overflowed = overflowed;
  f.modules_too_deep = deep;
  f.warmup_range = std::move(warmup);
  f.exclude_work_pattern = std::move(exclude);
  return f;
}

void ExpectSame(const AttributionFacts& a, const AttributionFacts& b) {
  EXPECT_EQ(a.backward_ranges, b.backward_ranges);
  EXPECT_EQ(a.backward_mapped, b.backward_mapped);
  EXPECT_EQ(a.cross_thread, b.cross_thread);
  EXPECT_EQ(a.modules_overflowed, b.modules_overflowed);
  EXPECT_EQ(a.modules_too_deep, b.modules_too_deep);
  EXPECT_EQ(a.warmup_range, b.warmup_range);
  EXPECT_EQ(a.exclude_work_pattern, b.exclude_work_pattern);
}

TEST(PartialJson, AttributionFactsAreTopLevelFieldsAndReadBack) {
  const AttributionFacts facts = Facts(12, 9, 3, true, false, ":cpfold:warmup0", "warmup");
  std::ostringstream out;
  WritePartialJson(WithFacts(facts, "a.sqlite"), out);
  nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], kPartialSchema);
  EXPECT_FALSE(j.contains("attribution")) << "the facts are not an object of their own in cpprof.partial/1";
  EXPECT_EQ(j["backward_ranges"], 12);
  EXPECT_EQ(j["backward_mapped"], 9);
  EXPECT_EQ(j["cross_thread"], 3);
  EXPECT_EQ(j["modules_overflowed"], true);
  EXPECT_EQ(j["modules_too_deep"], false);
  EXPECT_EQ(j["warmup_range"], ":cpfold:warmup0");
  EXPECT_EQ(j["exclude_work_pattern"], "warmup");

  std::istringstream in(out.str());
  auto back = ReadPartialJson(in, "a.partial.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ExpectSame(back->attribution, facts);

  // Every field is required, as for the rest of a partial.
  j.erase("cross_thread");
  std::istringstream missing(j.dump());
  auto bad = ReadPartialJson(missing, "b.partial.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cross_thread"), std::string::npos) << bad.status().message();
}

TEST(PartialJson, MergedFactsAddUp) {
  AttributionFacts sum = Facts(10, 7, 1, false, true, "", "warmup");
  sum.Add(Facts(5, 5, 2, true, false, ":w0", "other"));
  sum.Add(Facts(1, 0, 0, false, false, ":w1", ""));
  ExpectSame(sum, Facts(16, 12, 3, true, true, ":w0", "warmup"));

  std::vector<RunPartial> parts;
  parts.push_back(WithFacts(Facts(10, 7, 1, false, false, "", "warmup"), "a.sqlite"));
  parts.push_back(WithFacts(Facts(5, 5, 2, false, true, ":w0", "warmup"), "b.sqlite"));
  auto merged = MergePartials(std::move(parts), {"a.partial.json", "b.partial.json"}, false);
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  ExpectSame(merged->attribution, Facts(15, 12, 3, false, true, ":w0", "warmup"));
}

// A partial with two processes, two module nodes each, and a memory series of three points: the
// streamed arrays (processes, their module times, the tree, the timeline) read back whole.
RunPartial TwoProcesses() {
  RunPartial run = WithFacts({}, "a.sqlite");
  run.nodes.resize(2);
  run.nodes[0].name = "[unattributed]";
  run.nodes[0].parent = -1;
  run.nodes[1].name = "Trunk.forward";
  run.nodes[1].parent = -1;
  for (int r = 0; r < 2; ++r) {
    ProcessPartial p;
    p.summary.rank = r;
    p.summary.busy_ns = 1000 + r;
    p.sweep.nodes.resize(2);
    p.sweep.nodes[1].busy_ns = 500 + r;
    p.sweep.nodes[1].comm_kind_ns[2] = 7 + r;
    p.sweep.comm_ops[1].push_back({10, 20, 1});
    p.warmup_ops = 3 + r;
    run.processes.push_back(std::move(p));
  }
  model::MemorySeries series;
  series.peak_bytes = 30;
  series.timeline = {{1, 10}, {2, 30}, {3, 20}};
  run.memory.series.push_back(series);
  return run;
}

StatusOr<RunPartial> ReadText(const std::string& text) {
  std::istringstream in(text);
  return ReadPartialJson(in, "p.partial.json");
}

TEST(PartialJson, StreamedArraysReadBackWhole) {
  std::ostringstream out;
  WritePartialJson(TwoProcesses(), out);
  auto back = ReadText(out.str());
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->nodes.size(), 2u);
  EXPECT_EQ(back->nodes[1].name, "Trunk.forward");
  ASSERT_EQ(back->processes.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const ProcessPartial& p = back->processes[r];
    EXPECT_EQ(p.summary.rank, r);
    EXPECT_EQ(p.summary.busy_ns, 1000 + r);
    EXPECT_EQ(p.warmup_ops, 3 + r);
    ASSERT_EQ(p.sweep.nodes.size(), 2u) << "each process keeps its own module times";
    EXPECT_EQ(p.sweep.nodes[1].busy_ns, 500 + r);
    EXPECT_EQ(p.sweep.nodes[1].comm_kind_ns[2], 7 + r);
    ASSERT_EQ(p.sweep.comm_ops[1].size(), 1u);
    EXPECT_EQ(p.sweep.comm_ops[1][0].end, 20);
  }
  ASSERT_EQ(back->memory.series.size(), 1u);
  ASSERT_EQ(back->memory.series[0].timeline.size(), 3u);
  EXPECT_EQ(back->memory.series[0].timeline[1].bytes, 30);
  EXPECT_EQ(back->memory.series[0].peak_bytes, 30);
}

TEST(PartialJson, DamageInAStreamedElementNamesItsField) {
  std::ostringstream out;
  WritePartialJson(TwoProcesses(), out);
  nlohmann::json j = nlohmann::json::parse(out.str());
  j["processes"][1]["sweep"]["nodes"][1]["own_ns"] = INT64_MAX;
  auto big = ReadText(j.dump());
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("field 'processes[1].sweep.nodes[1].own_ns' is 9223372036854775807"),
            std::string::npos)
      << big.status().message();

  j = nlohmann::json::parse(out.str());
  j["memory"]["series"][0]["timeline"][2]["bytes"] = "many";
  auto text = ReadText(j.dump());
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("field 'memory.series[0].timeline[2]': "), std::string::npos)
      << text.status().message();

  // The schema is said first, though it comes last in the file and the damage before it.
  j["schema"] = "cpprof.partial/1";
  auto old = ReadText(j.dump());
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("is a partial of another cpprof (cpprof.partial/1"), std::string::npos)
      << old.status().message();
}

TEST(PartialJson, AFloatPastAnIntegersRangeIsRefusedWithItsField) {
  // The 15-minute fuzz run's finding: -1.8e308 where an integer is read converted out of range
  // (undefined behaviour) in the JSON library.
  std::ostringstream out;
  WritePartialJson(TwoProcesses(), out);
  nlohmann::json j = nlohmann::json::parse(out.str());
  j["backward_ranges"] = -1.79e308;
  auto r = ReadText(j.dump());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("field 'backward_ranges' is -1.79e+308, past +-2^62"), std::string::npos)
      << r.status().message();
  j["backward_ranges"] = 3.0;  // a float in range reads as the integer
  EXPECT_TRUE(ReadText(j.dump()).ok());
}

TEST(PartialJson, NestingPastAPartialsIsRefusedWhileParsing) {
  std::ostringstream out;
  WritePartialJson(TwoProcesses(), out);
  nlohmann::json j = nlohmann::json::parse(out.str());
  j["notes"] = nlohmann::json::array();
  std::string text = j.dump();
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  text.replace(text.find("\"notes\":[]"), 10, "\"notes\":" + deep);
  auto r = ReadText(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nested deeper than a partial's"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace cpprof::pipeline
