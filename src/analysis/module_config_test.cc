// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/module_config.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <map>
#include <string>
#include <vector>

#include "analysis/name_cache.h"
#include "base/regex.h"

namespace cpprof::analysis {
namespace {

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

// Names as nsys writes them ("domain:text"), chosen to hit every default pattern and its edges.
const std::vector<std::string>& Corpus() {
  static const std::vector<std::string> names = {
      "cpfold:cpfold.model.pairformer.TriangleMultiplicationOutgoing.forward",
      "cpfold:cpfold.model.fold.CPFoldModel.trunk",
      "cpfold:cpfold.model.diffusion.DiffusionModule.forward",
      "Model:boltz.model.modules.confidence.ConfidenceModule.forward",
      ":my marker",
      ":cpfold:warmup0",
      ":cpfold:iter1",
      ":iteration 0",
      ":step_12",
      ":epoch#3",
      "x:y:iter 4",
      "x:y:z:iter 4",
      ":warm-up",
      ":Warm_up phase",
      ":swarmup",
      "PyTorch:torch.optim.SGD.step",
      "PyTorch:torch.optim",
      "PyTorch:torch.optimizer",
      "PyTorch:torch",
      "PyTorch:",
      "PyTorch:torch.nn.modules.Module.__call__",
      "PyTorch:torch.optim.Adam.step, seq = 12",
      "NCCL:ncclAllGather",
      "CCCL:cub::DeviceScan::InclusiveScan",
      "cuBLASLt:gemm",
      "CUDA Graphs:launch",
      ":aten::linear, seq = 1, op_id = 378, sizes = [[1]]",
      ":nccl:coalesced, op_id = 415",
      ":autograd::engine::evaluate_function: AddmmBackward0, op_id = 633",
      ":Optimizer.step#SGD.step, op_id = 1325",
      ":ProfilerStep#7",
      "Model:pkg.MSAModule.forward",
      "Model:pkg.OuterProductMean.forward",
      "Model:pkg.InputFeatureEmbedder.forward",
      "Model:pkg.AtomAttentionDecoder.forward",
      "Model:pkg.PLDDTHead.forward",
      "Model:pkg.pLDDT",
      "Model:pkg.Template.forward",
      "Model:pkg.Sampler.sample",
      "Model:pkg.Samplerxsample",
      "Model:optimizer_step",
      "",
      ":",
      "no colon at all",
      "unicode:Dreiecksmultiplikation.f\xc3\xbcr",
      "bytes:\xff\xfe:iter1",
  };
  return names;
}

// What the config says, asked one pattern at a time (each compiled alone).
NameClass OnePatternAtATime(const ModuleConfig& c, const std::string& name) {
  auto found = [&](const std::string& pattern) { return RE2::PartialMatch(name, RE2(pattern)); };
  NameClass r;
  for (const auto& e : c.exclude) {
    if (found(e.pattern) && (e.unless.empty() || !found(e.unless))) r.module = false;
  }
  for (size_t g = 0; g < c.groups.size(); ++g) {
    if (found(c.groups[g].pattern)) r.group_mask |= uint64_t{1} << g;
  }
  r.optimizer = !c.optimizer_pattern.empty() && found(c.optimizer_pattern);
  r.warmup = !c.warmup_pattern.empty() && found(c.warmup_pattern);
  r.excluded_work = !c.exclude_work_pattern.empty() && found(c.exclude_work_pattern);
  return r;
}

TEST(ModuleConfig, OneSetPassAnswersAsEachPatternAlone) {
  ModuleConfig c = DefaultModuleConfig();
  ASSERT_TRUE(c.SetExcludedWork("warm|Sampler\\.").ok());
  for (const auto& name : Corpus()) {
    EXPECT_EQ(c.Classify(name), OnePatternAtATime(c, name)) << name;
  }
  // Every group's bit lands where it belongs, up to the 64th group.
  std::string json = R"({"groups": [)";
  for (int g = 0; g < 64; ++g)
    json += (g ? "," : "") + fmt::format(R"j({{"name": "g{}", "match": "^x:b{}(\\.|$)"}})j", g, g);
  json += "]}";
  auto many = ParseModuleConfig(json, "many.json");
  ASSERT_TRUE(many.ok()) << many.status().message();
  for (int g = 0; g < 64; ++g) {
    EXPECT_EQ(many->GroupMask(fmt::format("x:b{}.forward", g)), uint64_t{1} << g) << g;
  }
  EXPECT_EQ(many->GroupMask("x:b1"), 2u);
  EXPECT_EQ(many->GroupMask("x:b100"), 0u);
}

TEST(ModuleConfig, PatternsAreSearchedNotAnchored) {
  auto c = ParseModuleConfig(R"({"exclude": ["^NCCL:", "seq = \\d+$"], "groups": [{"name": "b", "match": "Block"}]})",
                             "m.json");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->GroupMask("x:pkg.Block.forward"), 1u);  // found in the middle
  EXPECT_FALSE(c->IsModule("NCCL:ncclAllReduce"));
  EXPECT_TRUE(c->IsModule("x:NCCL:ncclAllReduce"));  // ^ anchors at the start of the name
  EXPECT_FALSE(c->IsModule(":aten::mm, seq = 3"));
  EXPECT_TRUE(c->IsModule(":aten::mm, seq = 3, op_id = 4"));
}

TEST(ModuleConfig, ExcludeUnlessReplacesTheLookahead) {
  // The built-in config said "^PyTorch:(?!torch\.optim)" (ECMAScript); RE2 has no lookahead.
  ModuleConfig c = DefaultModuleConfig();
  EXPECT_TRUE(c.IsModule("PyTorch:torch.optim.SGD.step"));
  EXPECT_TRUE(c.IsModule("PyTorch:torch.optimizer"));
  EXPECT_FALSE(c.IsModule("PyTorch:torch.optim.Adam.step, seq = 12"));  // another exclude still applies
  EXPECT_FALSE(c.IsModule("PyTorch:torch"));
  EXPECT_FALSE(c.IsModule("PyTorch:"));
  auto bad = ParseModuleConfig(R"({"exclude": [{"match": "^a", "unles": "^ab"}]})", "m.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_CONTAINS(bad.status().message(), "m.json: unknown field 'unles' in an exclude entry");
}

TEST(ModuleConfig, InvalidPatternsSayWhichWhatAndWhy) {
  auto bad = ParseModuleConfig(R"({"groups": [{"name": "trunk", "match": "Pairformer("}]})", "m.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ExitCode::kBadInput);
  EXPECT_CONTAINS(bad.status().message(),
                  "m.json: group 'trunk' match 'Pairformer(' is not a valid regular expression "
                  "(RE2: missing ): Pairformer()");
  EXPECT_CONTAINS(bad.status().message(), "https://github.com/google/re2/wiki/Syntax");
  // A lookahead, as the old built-in config had: the error says how to write it instead.
  bad = ParseModuleConfig(R"j({"exclude": ["^PyTorch:(?!torch\\.optim)"]})j", "m.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_CONTAINS(bad.status().message(),
                  "m.json: exclude pattern '^PyTorch:(?!torch\\.optim)' is not a valid regular "
                  "expression (RE2: invalid perl operator: (?!)");
  EXPECT_CONTAINS(bad.status().message(), "\"unless\"");
  bad = ParseModuleConfig(R"({"warmup": "(a)\\1"})", "m.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_CONTAINS(bad.status().message(), "m.json: warmup pattern '(a)\\1' is not a valid regular expression (RE2: ");

  ModuleConfig c = DefaultModuleConfig();
  Status s = c.SetExcludedWork("warm(");
  EXPECT_EQ(s.code(), ExitCode::kUsage);
  EXPECT_CONTAINS(s.message(), "--exclude-ranges 'warm(' is not a valid regular expression (RE2: missing ): warm()");
  EXPECT_CONTAINS(s.message(), "searched in 'domain:text' of each NVTX range");
  EXPECT_TRUE(c.exclude_work_pattern.empty());
  EXPECT_FALSE(c.IsExcludedWork(":warmup"));  // the config is as it was
}

TEST(ModuleConfig, LongNamesAreLinearNotCatastrophic) {
  // (a+)+$ backtracks exponentially in a backtracking engine on "aaaa...b"; RE2 does not.
  auto c = ParseModuleConfig(R"({"groups": [{"name": "a", "match": "(a+)+$"}]})", "m.json");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->GroupMask(std::string(60000, 'a') + "b"), 0u);
  EXPECT_EQ(c->GroupMask(std::string(60000, 'a')), 1u);
  // Past kMaxMatchedBytes a name is matched on its first 64 KiB only (issue 19, row 2).
  EXPECT_EQ(c->GroupMask(std::string(cpprof::kMaxMatchedBytes, 'a') + "b"), 1u);
}

TEST(NameCache, ClassifiesEachDistinctNameOnce) {
  std::map<std::string, int> calls;
  NameCache<size_t> cache([&](const std::string& name) {
    ++calls[name];
    return name.size();
  });
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back("m:Block" + std::to_string(i) + std::string(i, 'x'));  // long ones too
  for (int event = 0; event < 10000; ++event) {
    const std::string& n = names[(event * 7) % names.size()];
    uint32_t id = cache.Intern(n);
    ASSERT_EQ(cache.name(id), n);
    ASSERT_EQ(cache.info(id), n.size());
  }
  EXPECT_EQ(cache.size(), names.size());
  EXPECT_EQ(calls.size(), names.size());
  for (const auto& [name, n] : calls) EXPECT_EQ(n, 1) << name;
  EXPECT_EQ(cache.Intern(names[0]), 0u);  // ids in order of first sight
  EXPECT_EQ(cache.Intern(names[7]), 1u);
}

}  // namespace
}  // namespace cpprof::analysis
