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

}  // namespace
}  // namespace cpprof::pipeline
