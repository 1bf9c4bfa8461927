// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The built-in module grouping moved from std::regex (ECMAScript) to RE2. Its patterns must mean
// what they meant: every distinct NVTX range name of every committed real export ("domain:text")
// is classified by the old patterns under std::regex_search and by the new config, and the two
// agree on module, group, optimizer and warm-up. (std::regex lives only here, as the oracle.)
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "analysis/module_config.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

// The built-in config as it was before RE2 (module_config.cc at 8325d00).
const std::vector<std::string> kOldExclude = {
    "^NCCL:",
    "^CCCL:",
    "^(cuBLAS|cuBLASLt|cuDNN|CUDA|NVTX|cuFFT|cuSOLVER|cuSPARSE)[^:]*:",
    "^PyTorch:(?!torch\\.optim)",
    ", seq = \\d+",
    ", op_id = \\d+",
    "^:(aten|autograd|c10d|nccl|record_param_comms|cudaStream|ProfilerStep|Optimizer)",
    "^[^:]*:([A-Za-z_][A-Za-z0-9_]*:)?(iter|iteration|step|warmup|epoch)[ _#-]?\\d+$"};
const std::vector<std::string> kOldGroups = {
    "optim\\.|Optimizer|optimizer",
    "Diffusion|EDMSampler|Sampler\\.sample|AtomAttentionDecoder",
    "Confidence|[Pp]LDDT|PAE|PDE|Distogram",
    "MSA|OuterProductMean",
    "InputEmbedder|InputFeatureEmbedder|RelativePosition|AtomAttentionEncoder",
    "[Tt]runk|Pairformer|Triangle|TriMul|Transition|AttentionPairBias|Template"};
const char* const kOldOptimizer = "optim\\.|Optimizer\\.step|optimizer_step";
const char* const kOldWarmup = "(^|[^A-Za-z])[Ww]arm[-_ ]?up";

std::set<std::string> DistinctRangeNames(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  const char* sql =
      "SELECT DISTINCT coalesce(d.text, '') || ':' || coalesce(n.text, s.value, '') FROM NVTX_EVENTS n "
      "LEFT JOIN StringIds s ON s.id = n.textId "
      "LEFT JOIN (SELECT DISTINCT domainId, text FROM NVTX_EVENTS WHERE eventType = 75) d ON d.domainId = n.domainId "
      "WHERE n.eventType IN (34, 59, 60)";
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::set<std::string> names;
  while (st && sqlite3_step(st) == SQLITE_ROW) {
    names.insert(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return names;
}

TEST(RegexSemantics, BuiltInGroupingMeansWhatTheEcmaScriptPatternsMeant) {
  auto compile = [](const std::string& p) { return std::regex(p, std::regex::ECMAScript | std::regex::optimize); };
  std::vector<std::regex> exclude, groups;
  for (const auto& p : kOldExclude) exclude.push_back(compile(p));
  for (const auto& p : kOldGroups) groups.push_back(compile(p));
  const std::regex optimizer = compile(kOldOptimizer), warmup = compile(kOldWarmup);
  const analysis::ModuleConfig config = analysis::DefaultModuleConfig();
  ASSERT_EQ(config.groups.size(), kOldGroups.size());
  size_t checked = 0, modules = 0;
  for (const auto& name : RealExportNames()) {
    for (const auto& range : DistinctRangeNames(RealExport(name))) {
      analysis::NameClass old;
      for (const auto& re : exclude) old.module = old.module && !std::regex_search(range, re);
      for (size_t g = 0; g < groups.size(); ++g) {
        if (std::regex_search(range, groups[g])) old.group_mask |= uint64_t{1} << g;
      }
      old.optimizer = std::regex_search(range, optimizer);
      old.warmup = std::regex_search(range, warmup);
      ASSERT_EQ(config.Classify(range), old) << name << ": " << range;
      ++checked;
      modules += old.module;
    }
  }
  // The corpus is real: thousands of names, modules among them.
  EXPECT_GT(checked, 1000u);
  EXPECT_GT(modules, 50u);
}

}  // namespace
}  // namespace cpprof::testing
