// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/cost_model.h"

#include <gtest/gtest.h>

#include <string>

#include "analysis/cost_efficiency.h"

namespace cpprof::analysis {
namespace {

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

Dims Small(const std::string& extra = "") {
  Dims d;
  Status s = ParseDims("N=4,c_z=2,tri_mul_hidden=3,tri_att_heads=2,tri_att_head_dim=3,transition_n=2,c_s=3" + extra,
                       "--dims", d);
  EXPECT_TRUE(s.ok()) << s.message();
  return d;
}

// The numbers below are worked out by hand from the formulas in docs/cost-model.md (N = 4, so
// N^2 = 16 and N^3 = 64; bf16: 2 bytes per element).
TEST(CostModel, TriangleMultiplicationByHand) {
  auto c = CostOf("TriangleMultiplicationOutgoing", Small());
  ASSERT_TRUE(c);
  // 2*16*2*(4*3) + 2*16*2*2 + 2*3*64 + 2*16*3*2 = 768 + 128 + 384 + 192
  EXPECT_DOUBLE_EQ(c->MatmulFlops(), 1472);
  // LN 7*16*2 + gating 6*16*(2*3) + sigmoid 4*16*2 + LN 7*16*3 + product 16*2 = 224+576+128+336+32
  EXPECT_DOUBLE_EQ(c->Flops(), 1472 + 1296);
  EXPECT_DOUBLE_EQ(c->Bytes(), 2 * 16 * (5 * 2 + 6 * 3));
  EXPECT_EQ(c->shifts, 0);
  // Incoming has the same cost.
  EXPECT_DOUBLE_EQ(CostOf("TriangleMultiplicationIncoming", Small())->Flops(), c->Flops());
}

TEST(CostModel, RingAndCannonShifts) {
  auto ring = CostOf("TriangleMultiplicationOutgoing", Small(",grid=1x2"));
  EXPECT_EQ(ring->shifts, 1);
  EXPECT_DOUBLE_EQ(ring->shift_bytes, 3 * 4 * 2 * 2);  // h x N x N/2, bf16
  EXPECT_DOUBLE_EQ(ring->FlopsPerRank(2), ring->Flops() / 2);
  auto ring4 = CostOf("TriangleMultiplicationOutgoing", Small(",grid=4x1"));
  EXPECT_EQ(ring4->shifts, 3);
  EXPECT_DOUBLE_EQ(ring4->shift_bytes, 3 * 4 * 1 * 2);
  auto cannon = CostOf("TriangleMultiplicationIncoming", Small(",grid=2x2,dtype=fp32"));
  EXPECT_EQ(cannon->shifts, 1);
  EXPECT_DOUBLE_EQ(cannon->shift_bytes, 2 * 3 * 2 * 2 * 4);  // both operands, h x N/2 x N/2, fp32
  EXPECT_EQ(cannon->skews, 1);
  EXPECT_DOUBLE_EQ(cannon->skew_bytes, cannon->shift_bytes / 2);  // a block moves on half the ranks
  EXPECT_EQ(ring->skews, 0);
}

TEST(CostModel, TriangleAttentionByHand) {
  auto c = CostOf("TriangleAttentionStartingNode", Small());
  // bias 2*16*2*2 + qkvg 2*16*2*(4*6) + attention 4*6*64 + out 2*16*6*2 = 128 + 1536 + 1536 + 384
  EXPECT_DOUBLE_EQ(c->MatmulFlops(), 3584);
  // LN 7*16*2 + (bias add + softmax) 6*2*64 + gate 5*16*6 = 224 + 768 + 480
  EXPECT_DOUBLE_EQ(c->Flops(), 3584 + 1472);
  EXPECT_DOUBLE_EQ(c->Bytes(), 2 * 16 * (2 * 2 + 10 * 6 + 2 * 2));
  EXPECT_DOUBLE_EQ(CostOf("TriangleAttentionEndingNode", Small())->Flops(), c->Flops());
  // On a 1-D grid every part is split; on 2 x 2 a rank projects the bias and the keys and values of
  // its block's full rows (gathered from its row peers): that work (bias 128 + k, v 768) is split
  // over the 2 grid rows only, the rest (q, g 768, attention 1536, out 384) over the 4 ranks.
  EXPECT_DOUBLE_EQ(CostOf("TriangleAttentionStartingNode", Small(",grid=1x4"))->MatmulFlopsPerRank(4), 3584.0 / 4);
  auto square = CostOf("TriangleAttentionStartingNode", Small(",grid=2x2"));
  EXPECT_DOUBLE_EQ(square->MatmulFlopsPerRank(4), (128 + 768) / 2.0 + (768 + 1536 + 384) / 4.0);
  EXPECT_GT(square->BytesPerRank(4), c->Bytes() / 4);
}

TEST(CostModel, TransitionsAndSharding) {
  auto pair = CostOf("PairTransition", Small(",grid=1x2"));
  EXPECT_DOUBLE_EQ(pair->MatmulFlops(), 6 * 16 * 2 * 2 * 2);  // 6 N^2 n c_z^2
  EXPECT_DOUBLE_EQ(pair->Flops(), 768 + 7 * 16 * 2 + 5 * 16 * 4);
  EXPECT_DOUBLE_EQ(pair->MatmulFlopsPerRank(2), 384);  // sharded
  auto single = CostOf("SingleTransition", Small(",grid=1x2"));
  EXPECT_DOUBLE_EQ(single->MatmulFlops(), 6 * 4 * 2 * 3 * 3);              // 6 N n c_s^2
  EXPECT_DOUBLE_EQ(single->MatmulFlopsPerRank(2), single->MatmulFlops());  // replicated
}

TEST(CostModel, Af3SizesTriMul) {
  Dims d;
  ASSERT_TRUE(ParseDims("N=1024,c_z=128", "--dims", d).ok());
  auto c = CostOf("TriangleMultiplicationOutgoing", d);
  // 2 N^2 (4 c h + c^2 + h c) + 2 h N^3 = 2^20 * 196608 + 2 * 128 * 2^30
  EXPECT_DOUBLE_EQ(c->MatmulFlops(), 481036337152.0);
  for (const auto& k : CostKeys()) EXPECT_TRUE(CostOf(k, d)) << k;
  EXPECT_FALSE(CostOf("Nope", d));
}

// The diffusion transformer and the confidence head at AF3 sizes (N = 1024, 5 samples, c_a = 768,
// c_s = 384, 16 heads, 24 blocks), worked out by hand (docs/cost-model.md).
TEST(CostModel, DiffusionAndConfidenceByHand) {
  Dims d;
  ASSERT_TRUE(ParseDims("N=1024", "--dims", d).ok());
  // K N (6 c_s c_a + 10 c_a^2) + 4 K N^2 c_a = 5120 (1,769,472 + 5,898,240) + 20 * 2^20 * 768
  auto att = *CostOf("DiffusionAttentionPairBias", d);
  EXPECT_DOUBLE_EQ(att.MatmulFlops(), 55364812800.0);
  EXPECT_EQ(att.matmul_flops_sharded, 0) << "replicated on every rank";
  EXPECT_DOUBLE_EQ(att.Bytes(), 2 * (5120.0 * (16 * 768 + 2 * 384) + 7 * 16 * 1048576.0));
  // K N (6 c_s c_a + 6 * 2 c_a^2) = 5120 (1,769,472 + 7,077,888)
  auto tr = *CostOf("DiffusionTransition", d);
  EXPECT_DOUBLE_EQ(tr.MatmulFlops(), 45298483200.0);
  auto dt = *CostOf("DiffusionTransformer", d);
  EXPECT_DOUBLE_EQ(dt.MatmulFlops(), 24 * (55364812800.0 + 45298483200.0));
  EXPECT_DOUBLE_EQ(dt.FlopsPerRank(4), dt.Flops()) << "replicated: a rank does it all";
  // 2 N^2 c_z bins
  EXPECT_DOUBLE_EQ(CostOf("DistogramHead", d)->MatmulFlops(), 2 * 1048576.0 * 128 * 64);
  // The confidence head: per sample 4 Pairformer blocks, the distances (2 N^2 5), the heads
  // (2 N^2 c_z (64 + 64) + 2 N c_s 50); once the s_inputs projections (c_si = c_s + 67 = 451).
  double block = 0;
  for (const char* m :
       {"TriangleMultiplicationOutgoing", "TriangleMultiplicationIncoming", "TriangleAttentionStartingNode",
        "TriangleAttentionEndingNode", "PairTransition", "AttentionPairBias", "SingleTransition"}) {
    block += CostOf(m, d)->MatmulFlops();
  }
  const double n = 1024, n2 = n * n;
  const double per_sample = 4 * block + 2 * n2 * 5 + 2 * n2 * 128 * 128 + 2 * n * 384 * 50;
  auto conf = *CostOf("ConfidenceModule", d);
  EXPECT_DOUBLE_EQ(conf.MatmulFlops(), 5 * per_sample + 4 * n * 451 * 128 + 2 * n * 451 * 384);
  // Under CP the blocks' pair work is sharded, the heads on the gathered z are not.
  Dims cp = d;
  cp.grid_cols = 2;
  auto conf2 = *CostOf("ConfidenceModule", cp);
  EXPECT_LT(conf2.MatmulFlopsPerRank(2), conf.MatmulFlops() * 0.55);
  EXPECT_GT(conf2.MatmulFlopsPerRank(2), conf.MatmulFlops() * 0.5);
}

TEST(CostModel, DimsErrorsNameTheDimAndTheFlag) {
  Dims d;
  Status s = ParseDims("N=64,cz=128", "--dims", d);
  EXPECT_EQ(s.code(), ExitCode::kUsage);
  EXPECT_CONTAINS(s.message(), "--dims: unknown dim 'cz'");
  EXPECT_CONTAINS(s.message(), "c_z");
  EXPECT_CONTAINS(ParseDims("grid=2", "--dims", d).message(), "grid '2' is not ROWSxCOLS");
  EXPECT_CONTAINS(ParseDims("dtype=int8", "--dims", d).message(), "dtype 'int8'");
  EXPECT_CONTAINS(ParseDims("N=abc", "--dims", d).message(), "N = 'abc' is not a number");
  EXPECT_CONTAINS(ParseDims("N", "--dims", d).message(), "'N' is not NAME=VALUE");
  ASSERT_TRUE(ParseDims("N=64,grid=2x2,dtype=fp32", "--dims", d).ok());
  EXPECT_EQ(d.ranks(), 4);
  EXPECT_EQ(d.Get("c_z"), 128);  // AF3 default
  EXPECT_CONTAINS(d.ToString(), "N=64,c_z=128,");
  EXPECT_CONTAINS(d.ToString(), "grid=2x2,dtype=fp32");
}

TEST(CostModel, ConfigLoadingAndErrors) {
  auto c = ParseCostConfig(R"({"dims": {"c_z": 64}, "modules": {"MyTriMul": "TriangleMultiplicationOutgoing"},
                               "calls": {"trunk": "blocks*2"},
                               "devices": [{"name": "Lab GPU", "match": "Lab", "bf16_tflops": 100, "hbm_tbs": 1}]})",
                           "my.json");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->dims.at("c_z"), 64);
  EXPECT_EQ(c->KeyOf("MyTriMul.forward"), "TriangleMultiplicationOutgoing");
  EXPECT_EQ(c->KeyOf("PairTransition.forward"), "PairTransition");
  EXPECT_EQ(c->KeyOf("TriMulRing.forward"), "");
  EXPECT_EQ(c->PeaksFor("NVIDIA Lab 1")->name, "Lab GPU");
  EXPECT_EQ(c->PeaksFor("NVIDIA Lab 1")->fp16_tflops, 100);  // fp16 defaults to bf16
  EXPECT_EQ(c->PeaksFor("NVIDIA H200")->name, "H200 SXM");   // the built-ins stay after the config's
  Dims d;
  d.values["blocks"] = 8;
  EXPECT_EQ(CallsFromExpression(c->calls.at("trunk"), d), 16);

  auto unknown = ParseCostConfig(R"({"dims": {"heads": 4}})", "my.json");
  EXPECT_EQ(unknown.status().code(), ExitCode::kBadInput);
  EXPECT_CONTAINS(unknown.status().message(), "my.json: unknown dim 'heads' in 'dims' (--model-config)");
  EXPECT_CONTAINS(ParseCostConfig("{", "my.json").status().message(), "my.json: not valid JSON");
  EXPECT_CONTAINS(ParseCostConfig(R"({"modules": {"X": "TriMul"}})", "m.json").status().message(),
                  "modules.X: unknown cost key 'TriMul'");
  EXPECT_CONTAINS(ParseCostConfig(R"({"calls": {"trunk": "blocks*layers"}})", "m.json").status().message(),
                  "calls.trunk: 'layers' is not a dim");
  EXPECT_CONTAINS(ParseCostConfig(R"({"device": "Nope"})", "m.json").status().message(), "device 'Nope'");
  EXPECT_CONTAINS(ParseCostConfig(R"({"colour": 1})", "m.json").status().message(), "unknown field 'colour'");
  // The built-in config parses as a config (what --print-cost-model prints can be passed back).
  auto round = ParseCostConfig(DefaultCostConfigJson(), "printed");
  ASSERT_TRUE(round.ok()) << round.status().message();
}

TEST(CostModel, PeaksByGpuName) {
  CostConfig c = DefaultCostConfig();
  EXPECT_EQ(c.PeaksFor("NVIDIA H200")->name, "H200 SXM");
  EXPECT_EQ(c.PeaksFor("NVIDIA H200 NVL")->name, "H200 NVL");
  EXPECT_EQ(c.PeaksFor("NVIDIA H100 80GB HBM3")->name, "H100 SXM");
  EXPECT_EQ(c.PeaksFor("NVIDIA H100 PCIe")->name, "H100 PCIe");
  EXPECT_EQ(c.PeaksFor("NVIDIA B200")->name, "B200");
  EXPECT_EQ(c.PeaksFor("NVIDIA A100-SXM4-80GB")->name, "A100 SXM");
  EXPECT_FALSE(c.PeaksFor("NVIDIA GeForce RTX 4090"));
  auto h200 = *c.PeaksFor("NVIDIA H200");
  EXPECT_DOUBLE_EQ(PeakTflops(h200, "bf16"), 989.5);
  EXPECT_DOUBLE_EQ(PeakTflops(h200, "tf32"), 494.5);
  EXPECT_DOUBLE_EQ(PeakTflops(h200, "fp32"), 67);
  EXPECT_DOUBLE_EQ(h200.hbm_tbs, 4.8);
  EXPECT_DOUBLE_EQ(h200.nvlink_gbs, 450);
  c.device = "B200";
  EXPECT_EQ(c.PeaksFor("NVIDIA H200")->name, "B200");  // forced by the config
}

TEST(CostModel, DimsFromCpfoldLog) {
  std::string why;
  EXPECT_FALSE(DimsFromCpfoldLog("nothing here\n", &why));
  EXPECT_FALSE(DimsFromCpfoldLog("cpfold-config: {\"n_token\": 256, \"preset\": \"small\"}\n", &why));
  EXPECT_CONTAINS(why, "no model sizes");
  auto d = DimsFromCpfoldLog(
      "W1130 noise\ncpfold-config: {\"mode\": \"trunk\", \"n_token\": 256, \"grid\": [1, 2], \"dtype\": \"bf16\", "
      "\"recycles\": 0, \"msa_depth\": 32, \"model\": {\"c_z\": 64, \"c_s\": 128, \"pairformer_blocks\": 8, "
      "\"tri_mul_hidden\": 64, \"msa_blocks\": 1, \"init_gain\": 0.1}}\ncpprof-iter: {}\n",
      &why);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->Get("N"), 256);
  EXPECT_EQ(d->Get("c_z"), 64);
  EXPECT_EQ(d->Get("blocks"), 8);
  EXPECT_EQ(d->Get("passes"), 1);
  EXPECT_EQ(d->Get("msa_depth"), 32);
  EXPECT_EQ(d->grid_cols, 2);
  EXPECT_EQ(d->dtype, "bf16");
  // The diffusion and confidence sizes: the run's steps and samples, the model's widths.
  auto e2e = DimsFromCpfoldLog(
      "cpfold-config: {\"mode\": \"e2e\", \"n_token\": 256, \"recycles\": 1, \"diffusion_steps\": 4, "
      "\"samples\": 2, \"model\": {\"c_token_diffusion\": 256, \"diffusion_blocks\": 4, \"diffusion_heads\": 8, "
      "\"confidence_blocks\": 2, \"pae_bins\": 64}}\n",
      &why);
  ASSERT_TRUE(e2e);
  EXPECT_EQ(e2e->Get("diffusion_steps"), 4);
  EXPECT_EQ(e2e->Get("samples"), 2);
  EXPECT_EQ(e2e->Get("c_token_diffusion"), 256);
  EXPECT_EQ(e2e->Get("diffusion_blocks"), 4);
  EXPECT_EQ(e2e->Get("diffusion_heads"), 8);
  EXPECT_EQ(e2e->Get("confidence_blocks"), 2);
  EXPECT_EQ(e2e->Get("passes"), 2);
  // A training step calls the denoiser once, whatever the sampling steps.
  auto train = DimsFromCpfoldLog(
      "cpfold-config: {\"mode\": \"train\", \"n_token\": 128, \"diffusion_steps\": 2, \"samples\": 1, "
      "\"model\": {}}\n",
      &why);
  ASSERT_TRUE(train);
  EXPECT_EQ(train->Get("diffusion_steps"), 1);
  EXPECT_EQ(train->Get("samples"), 1);
}

// A report with one TriMul row in the trunk on 2 ranks, 2 steady iterations: the numbers follow
// from the model and the times by hand.
TEST(CostEfficiency, OneModuleByHand) {
  model::Report r;
  r.world_size = 2;
  r.capture.gpu_names = {"NVIDIA H200"};
  r.window.iterations = {{"it0", 0, 1, true, false}, {"it1", 1, 2, false, true}, {"it2", 2, 3, false, true}};
  model::ModuleNode trunk;
  trunk.name = "trunk";
  trunk.is_group = true;
  model::ModuleNode tri;
  tri.name = "TriangleMultiplicationOutgoing.forward";
  tri.parent = 0;
  tri.depth = 1;
  model::ModuleRankTime t;
  t.busy_ns = 3'000'000;  // 3 ms over 2 iterations, of which 1 ms exposed comm
  t.comm_ns = 1'200'000;
  t.hidden_ns = 200'000;
  t.transfer_ns = 400'000;
  tri.per_rank = {t, t};
  r.modules = {trunk, tri};
  CostConfig config = DefaultCostConfig();
  Dims d;
  ASSERT_TRUE(ParseDims("N=1024,c_z=128,grid=1x2,blocks=2", "--dims", d).ok());
  d.source = "--dims";

  auto none = ComputeEfficiency(r, config, std::nullopt, "give --dims");
  EXPECT_FALSE(none.computed);
  EXPECT_TRUE(none.applicable);
  EXPECT_EQ(none.reason, "give --dims");

  auto e = ComputeEfficiency(r, config, d, "");
  ASSERT_TRUE(e.computed) << e.reason;
  ASSERT_EQ(e.modules.size(), 1u);
  const auto& m = e.modules[0];
  EXPECT_EQ(m.calls_per_iteration, 2);
  EXPECT_EQ(m.path, "trunk/TriangleMultiplicationOutgoing.forward");
  const auto cost = *CostOf("TriangleMultiplicationOutgoing", d);
  EXPECT_DOUBLE_EQ(m.flops, 2 * cost.Flops() / 2);
  EXPECT_DOUBLE_EQ(m.time_ns, 1'000'000);  // (3 - (1.2 - 0.2)) ms / 2 iterations
  EXPECT_NEAR(m.achieved_tflops, m.flops / 1e-3 / 1e12, 1e-9);
  EXPECT_NEAR(m.percent_of_peak, 100 * m.achieved_tflops / 989.5, 1e-9);
  // 164 FLOP/B (485.2 GFLOP / 2.95 GB per call) is below H200's ridge, 989.5 / 4.8 = 206 FLOP/B.
  EXPECT_NEAR(m.intensity, 164.318, 1e-3);
  EXPECT_NEAR(m.ridge, 989.5e12 / 4.8e12, 1e-9);
  EXPECT_EQ(m.bound, "memory");
  ASSERT_EQ(e.comm.size(), 1u);
  const auto& c = e.comm[0];
  EXPECT_EQ(c.shifts_per_iteration, 2);
  EXPECT_DOUBLE_EQ(c.bytes_per_shift, 128.0 * 1024 * 512 * 2);
  EXPECT_DOUBLE_EQ(c.transfer_ns_per_shift, 100'000);  // 0.4 ms / 2 iterations / 2 shifts
  EXPECT_DOUBLE_EQ(c.ideal_ns_per_shift, c.bytes_per_shift / 450e9 * 1e9);
  EXPECT_EQ(c.link, "NVLink");
  EXPECT_CONTAINS(e.link_source, "NVLink assumed");

  r.interconnect = "PCIe only (1 GPU pairs)";
  EXPECT_EQ(ComputeEfficiency(r, config, d, "").comm[0].link_gbs, 64);
  EXPECT_EQ(m.calls_source, "config") << "no calls in the capture: the config's expression";
  EXPECT_EQ(m.calls_expression, "blocks*passes");
  r.capture.gpu_names = {"NVIDIA GeForce RTX 4090"};
  auto unknown = ComputeEfficiency(r, config, d, "");
  EXPECT_FALSE(unknown.computed);
  EXPECT_CONTAINS(unknown.reason, "not in the device table");
}

// Calls per iteration counted from the capture (each rank's module ranges in the window) win over
// the config's expression; a disagreement between the two, and between ranks, is said.
TEST(CostEfficiency, CallsCountedFromTheCapture) {
  model::Report r;
  r.world_size = 2;
  r.capture.gpu_names = {"NVIDIA H200"};
  r.window.iterations = {{"it1", 1, 2, false, true}, {"it2", 2, 3, false, true}};
  model::ModuleNode trunk;
  trunk.name = "trunk";
  trunk.is_group = true;
  model::ModuleNode tri;
  tri.name = "TriangleMultiplicationOutgoing.forward";
  tri.parent = 0;
  tri.depth = 1;
  model::ModuleRankTime t;
  t.busy_ns = 2'000'000;
  t.calls = 8;  // 4 per iteration
  tri.per_rank = {t, t};
  model::ModuleNode conf;  // in a group without a calls expression: counted only
  conf.name = "confidence";
  conf.is_group = true;
  model::ModuleNode pt;
  pt.name = "PairTransition.forward";
  pt.parent = 2;
  pt.depth = 1;
  model::ModuleRankTime a = t, b = t;
  a.calls = 2;
  b.calls = 4;
  pt.per_rank = {a, b};
  r.modules = {trunk, tri, conf, pt};
  CostConfig config = DefaultCostConfig();
  config.calls.erase("confidence");
  Dims d;
  ASSERT_TRUE(ParseDims("N=256,grid=1x2,blocks=4,passes=1", "--dims", d).ok());

  auto e = ComputeEfficiency(r, config, d, "");
  ASSERT_TRUE(e.computed) << e.reason;
  ASSERT_EQ(e.modules.size(), 2u);
  EXPECT_EQ(e.modules[0].calls_per_iteration, 4);
  EXPECT_EQ(e.modules[0].calls_source, "capture");
  EXPECT_EQ(e.modules[0].config_calls, 4);
  EXPECT_DOUBLE_EQ(e.modules[0].flops, 4 * CostOf("TriangleMultiplicationOutgoing", d)->FlopsPerRank(2));
  EXPECT_EQ(e.modules[1].calls_per_iteration, 1.5) << "the mean over ranks";
  EXPECT_EQ(e.modules[1].calls_min, 1);
  EXPECT_EQ(e.modules[1].calls_max, 2);
  EXPECT_EQ(e.modules[1].config_calls, -1);
  std::string notes;
  for (const auto& n : e.notes) notes += n + "\n";
  EXPECT_EQ(notes.find("calls disagree"), std::string::npos) << notes;
  EXPECT_CONTAINS(notes, "the ranks counted different calls per iteration of 1 module row");
  EXPECT_CONTAINS(notes, "confidence/PairTransition.forward (1 to 2)");

  // The config says 8 blocks, the capture 4 calls per iteration: the capture's count, and a warning.
  d.values["blocks"] = 8;
  auto wrong = ComputeEfficiency(r, config, d, "");
  EXPECT_EQ(wrong.modules[0].calls_per_iteration, 4);
  EXPECT_EQ(wrong.modules[0].config_calls, 8);
  notes.clear();
  for (const auto& n : wrong.notes) notes += n + "\n";
  EXPECT_CONTAINS(notes,
                  "calls disagree: the capture counts 4 calls per iteration of "
                  "trunk/TriangleMultiplicationOutgoing.forward where the config's calls 'blocks*passes' (blocks=8, "
                  "passes=1) give 8");

  // Without counts (an older partial, ranges outside the window): the expression, or left out.
  for (auto& x : r.modules) {
    for (auto& p : x.per_rank) p.calls = 0;
  }
  auto fallback = ComputeEfficiency(r, config, d, "");
  ASSERT_EQ(fallback.modules.size(), 1u);
  EXPECT_EQ(fallback.modules[0].calls_source, "config");
  EXPECT_EQ(fallback.modules[0].calls_per_iteration, 8);
  notes.clear();
  for (const auto& n : fallback.notes) notes += n + "\n";
  EXPECT_CONTAINS(notes,
                  "have no calls in the capture's window and no calls-per-iteration entry (first: "
                  "confidence/.../PairTransition.forward)");
}

TEST(CostModel, ModulesAndCallsByTheEndOfTheModulePath) {
  auto c = ParseCostConfig(R"({"modules": {"Outer/MyTriMul": "TriangleMultiplicationIncoming",
                                           "MyTriMul": "TriangleMultiplicationOutgoing"},
                               "calls": {"trunk": "blocks", "Outer/MyTriMul": "2*blocks"}})",
                           "my.json");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->KeyOf("trunk/Outer.forward/MyTriMul.forward"), "TriangleMultiplicationIncoming") << "the longest end";
  EXPECT_EQ(c->KeyOf("trunk/Other.forward/MyTriMul.forward"), "TriangleMultiplicationOutgoing");
  EXPECT_EQ(c->KeyOf("MyTriMul.forward"), "TriangleMultiplicationOutgoing");
  EXPECT_EQ(c->KeyOf("trunk/Outer.forward"), "");
  EXPECT_EQ(c->CallsOf("trunk/Outer.forward/MyTriMul.forward"), "2*blocks");
  EXPECT_EQ(c->CallsOf("trunk/Other.forward/MyTriMul.forward"), "blocks") << "the group's";
  EXPECT_EQ(c->CallsOf("diffusion/MyTriMul.forward"), "");
}

}  // namespace
}  // namespace cpprof::analysis
