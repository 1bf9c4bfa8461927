// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The efficiency section says where each module's calls per iteration come from: counted from the
// capture (plain), or from the config's expression ('*', explained under the table), in text,
// Markdown and JSON.
#include "render/efficiency_render.h"

#include <gtest/gtest.h>

#include <sstream>

namespace cpprof::render {
namespace {

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

// The line of `text` that holds `needle`.
std::string LineWith(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  size_t start = text.rfind('\n', at) + 1, end = text.find('\n', at);
  return text.substr(start, end - start);
}

model::Report TwoModules() {
  model::Report r;
  model::Efficiency& e = r.efficiency;
  e.computed = true;
  e.dims_source = "--dims";
  e.dims = "N=256,grid=1x2";
  e.dtype = "bf16";
  e.gpu = "NVIDIA H200";
  e.device.name = "H200 SXM";
  e.device.hbm_tbs = 4.8;
  e.iterations = 2;
  model::ModuleEfficiency counted;
  counted.module = "TriangleMultiplicationOutgoing.forward";
  counted.path = "trunk/TriangleMultiplicationOutgoing.forward";
  counted.cost_key = "TriangleMultiplicationOutgoing";
  counted.calls_per_iteration = 16;
  counted.calls_source = "capture";
  counted.config_calls = 16;
  model::ModuleEfficiency guessed = counted;
  guessed.module = "PairTransition.forward";
  guessed.path = "MSA/PairTransition.forward";
  guessed.cost_key = "PairTransition";
  guessed.calls_per_iteration = 3;
  guessed.calls_source = "config";
  guessed.calls_expression = "msa_blocks*passes";
  guessed.config_calls = 3;
  e.modules = {counted, guessed};
  return r;
}

TEST(EfficiencyRender, CallsSayWhereTheyComeFrom) {
  model::Report r = TwoModules();
  std::ostringstream text, md;
  PrintEfficiency(r, false, text);
  PrintEfficiency(r, true, md);
  EXPECT_CONTAINS(LineWith(text.str(), "TriangleMultiplicationOutgoing.forward"), " 16   0.00 ");
  EXPECT_CONTAINS(LineWith(text.str(), "MSA    PairTransition.forward"), " 3*   0.00 ");
  EXPECT_CONTAINS(text.str(), "* = not in the capture: from the config's calls expression of the sizes");
  EXPECT_CONTAINS(md.str(), "| 3* |");
  EXPECT_CONTAINS(md.str(), "| 16 |");
  nlohmann::ordered_json j = EfficiencyJson(r);
  EXPECT_EQ(j["modules"][0]["calls_source"], "capture");
  EXPECT_EQ(j["modules"][1]["calls_source"], "config");
  EXPECT_EQ(j["modules"][1]["calls_expression"], "msa_blocks*passes");
  // All counted: no legend for '*'.
  r.efficiency.modules.pop_back();
  std::ostringstream counted_only;
  PrintEfficiency(r, false, counted_only);
  EXPECT_EQ(counted_only.str().find("* = not in the capture"), std::string::npos) << counted_only.str();
  EXPECT_CONTAINS(counted_only.str(), "calls = the module's NVTX ranges per iteration, counted from the capture");
}

}  // namespace
}  // namespace cpprof::render
