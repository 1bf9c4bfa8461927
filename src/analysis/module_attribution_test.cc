// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/module_attribution.h"

#include <gtest/gtest.h>

namespace cpprof::analysis {
namespace {

const std::vector<std::string> kNames = {
    "m:pkg.fold.Model.forward",                                 // 0: wrapper, no group
    "m:pkg.fold.Model.trunk",                                   // 1: trunk
    "m:pkg.msa.MSAModule.forward",                              // 2: MSA (priority over trunk)
    "m:pkg.pairformer.TriangleMultiplicationOutgoing.forward",  // 3: trunk
    "m:pkg.diffusion.DiffusionModule.forward",                  // 4: diffusion
    "m:pkg.embed.AtomAttentionEncoder.forward",                 // 5: input embedder
    "PyTorch:torch.optim.SGD.step",                             // 6: optimizer
    ":Optimizer.step#SGD.step",                                 // 7: not a module, optimizer marker
    ":cpfold:warmup0",                                          // 8: warm-up marker
};

std::string NodePath(const ModuleAttribution& a, uint16_t node) {
  std::string s;
  for (int n = node; n >= 0; n = a.nodes()[n].parent) s = a.nodes()[n].name + (s.empty() ? "" : "/") + s;
  return s;
}

TEST(ModuleAttribution, InnermostRangeGroupPriorityAndAnchor) {
  ModuleConfig c = DefaultModuleConfig();
  constexpr int64_t T = 7;  // main thread
  std::vector<KeptRange> r = {
      {0, 1000, T, 0, true, false},   // Model.forward
      {10, 500, T, 1, true, false},   // trunk
      {20, 100, T, 2, true, false},   // MSA inside trunk
      {30, 60, T, 3, true, false},    // TriMul inside MSA
      {200, 300, T, 3, true, false},  // TriMul directly in trunk
      {600, 900, T, 4, true, false},  // diffusion
      {650, 700, T, 5, true, false},  // atom encoder inside diffusion
  };
  ModuleAttribution a(r, kNames, c, {});
  EXPECT_EQ(NodePath(a, a.ForCall(T, 40).node), "MSA/MSAModule.forward/TriangleMultiplicationOutgoing.forward");
  EXPECT_EQ(NodePath(a, a.ForCall(T, 70).node), "MSA/MSAModule.forward");
  EXPECT_EQ(NodePath(a, a.ForCall(T, 250).node), "trunk/Model.trunk/TriangleMultiplicationOutgoing.forward");
  EXPECT_EQ(NodePath(a, a.ForCall(T, 400).node), "trunk/Model.trunk");
  EXPECT_EQ(NodePath(a, a.ForCall(T, 660).node), "diffusion/DiffusionModule.forward/AtomAttentionEncoder.forward");
  EXPECT_EQ(NodePath(a, a.ForCall(T, 950).node), "[other modules]/Model.forward");
  EXPECT_EQ(a.ForCall(T, 1001).node, kUnattributed);        // after every range
  EXPECT_EQ(a.ForCall(T, 0).node, a.ForCall(T, 950).node);  // a range contains its start
  EXPECT_EQ(a.ForCall(T + 1, 40).node, kUnattributed);      // another thread
  EXPECT_EQ(a.module_ranges(), 6);
  // Node ids: parents before children (the sweep relies on it).
  for (size_t i = 0; i < a.nodes().size(); ++i) EXPECT_LT(a.nodes()[i].parent, static_cast<int>(i));
}

TEST(ModuleAttribution, BackwardThreadsAndOptimizerPhase) {
  ModuleConfig c = DefaultModuleConfig();
  constexpr int64_t Main = 7, Autograd = 9;
  std::vector<KeptRange> r = {
      {0, 100, Main, 1, true, false},
      {200, 300, Main, 6, true, true},
      {210, 290, Main, 7, false, true},
  };
  ModuleAttribution a(r, kNames, c, {Autograd});
  LaunchTag fwd = a.ForCall(Main, 50);
  EXPECT_EQ(fwd.phase, model::Phase::kForward);
  EXPECT_EQ(NodePath(a, fwd.node), "trunk/Model.trunk");
  LaunchTag bwd = a.ForCall(Autograd, 50);
  EXPECT_EQ(bwd.phase, model::Phase::kBackward);
  EXPECT_EQ(NodePath(a, bwd.node), "[backward]");
  LaunchTag opt = a.ForCall(Main, 250);  // inside the non-module marker: node of its module parent
  EXPECT_EQ(opt.phase, model::Phase::kOptimizer);
  EXPECT_EQ(NodePath(a, opt.node), "optimizer/SGD.step");
}

TEST(AutogradSeq, ParsesTheSequenceNumber) {
  EXPECT_EQ(AutogradSeq("aten::mm, seq = 12, op_id = 5, sizes = [[2, 2]]"), 12);
  EXPECT_EQ(AutogradSeq("MmBackward0, seq = 12, op_id = 9"), 12);
  EXPECT_EQ(AutogradSeq("MmBackward0, seq = 7"), 7);
  EXPECT_EQ(AutogradSeq("aten::empty, op_id = 3"), -1);
  EXPECT_EQ(AutogradSeq("x, seq = "), -1);
  EXPECT_EQ(AutogradSeq("x, seq = 99999999999999999999999"), -1);  // overflow: not a number we can use
  EXPECT_TRUE(IsAutogradEvaluate("autograd::engine::evaluate_function: MmBackward0, op_id = 8"));
  EXPECT_FALSE(IsAutogradEvaluate("MmBackward0, seq = 12"));
}

// A seq range: not a module, carries autograd's sequence number.
KeptRange Seq(int64_t start, int64_t end, int64_t tid, int64_t seq) {
  KeptRange r{start, end, tid, 0, false, false};
  r.seq = seq;
  return r;
}

TEST(ModuleAttribution, BackwardWorkGoesToTheForwardOpsModule) {
  ModuleConfig c = DefaultModuleConfig();
  constexpr int64_t P = int64_t{5} << 24;
  constexpr int64_t Main = P | 1, Other = P | 2, Autograd = P | 3, OtherProcessAutograd = (int64_t{6} << 24) | 3;
  KeptRange warm{0, 2000, Main, 8, false, false, true};  // a warm-up range around it all
  std::vector<KeptRange> r = {
      warm,
      {0, 1000, Main, 1, true, false},   // trunk
      {100, 200, Main, 3, true, false},  // TriMul inside trunk
      Seq(110, 120, Main, 5),            // aten::mm, seq = 5 (in TriMul)
      Seq(112, 118, Main, 5),            // nested op with the same number: the last one counts
      Seq(300, 310, Main, 6),            // an op of trunk itself
      Seq(1500, 1510, Main, 7),          // outside every module
      Seq(400, 410, Main, 8),
      Seq(500, 510, Other, 8),  // the same number on two threads: ambiguous
      // autograd's thread: evaluate_function(seq 5) > MmBackward0, seq = 5 > a module range inside it
      KeptRange{3000, 3100, Autograd, 0, false, false, false, false, kSeqOfChild},
      Seq(3010, 3050, Autograd, 5),
      {3020, 3030, Autograd, 4, true, false},  // DiffusionModule.forward (as if a traced backward helper)
      Seq(3200, 3210, Autograd, 6),
      Seq(3300, 3310, Autograd, 7),
      Seq(3400, 3410, Autograd, 8),
      Seq(3500, 3510, Autograd, 99),             // no forward op with that number
      Seq(3600, 3610, OtherProcessAutograd, 5),  // numbers are per process
  };
  ModuleAttribution a(r, kNames, c, {Autograd, OtherProcessAutograd});
  LaunchTag fwd = a.ForCall(Main, 115);
  EXPECT_EQ(NodePath(a, fwd.node), "trunk/Model.trunk/TriangleMultiplicationOutgoing.forward");
  LaunchTag bwd = a.ForCall(Autograd, 3040);
  EXPECT_EQ(bwd.phase, model::Phase::kBackward);
  EXPECT_EQ(NodePath(a, bwd.node), NodePath(a, fwd.node));
  EXPECT_EQ(bwd.flags & kInWarmup, kInWarmup);  // the forward op's warm-up range counts for its backward
  // Inside the evaluate_function range, outside the seq range (adding up gradients): same node.
  EXPECT_EQ(a.ForCall(Autograd, 3080).node, fwd.node);
  // A module range inside the backward range hangs below the forward module.
  EXPECT_EQ(NodePath(a, a.ForCall(Autograd, 3025).node),
            "trunk/Model.trunk/TriangleMultiplicationOutgoing.forward/DiffusionModule.forward");
  EXPECT_EQ(NodePath(a, a.ForCall(Autograd, 3205).node), "trunk/Model.trunk");
  for (int64_t t : {3305, 3405, 3505, 3700}) EXPECT_EQ(NodePath(a, a.ForCall(Autograd, t).node), "[backward]") << t;
  EXPECT_EQ(NodePath(a, a.ForCall(OtherProcessAutograd, 3605).node), "[backward]");
  EXPECT_EQ(a.backward_ranges(), 6);  // the evaluate_function wrapper is not counted twice
  EXPECT_EQ(a.backward_ranges_mapped(), 2);
}

TEST(CallTags, FindsByProcessAndCorrelationInAnyOrder) {
  CallTags tags;
  constexpr int64_t P = 1 << 24, Q = 2 << 24;
  for (int64_t c : {10, 12, 14, 20, 30}) tags.Add(P, c, LaunchTag{static_cast<uint16_t>(c), model::Phase::kForward, 0});
  tags.Add(Q, 12, LaunchTag{99, model::Phase::kBackward, kInWarmup});
  tags.Finish();
  // Ascending with misses between and after, then descending, then another process, then back.
  std::vector<std::pair<int64_t, int>> asks = {{9, 0},   {10, 10}, {11, 0}, {12, 12},  {13, 0},  {14, 14}, {15, 0},
                                               {20, 20}, {30, 30}, {31, 0}, {1000, 0}, {30, 30}, {12, 12}, {10, 10}};
  for (auto [c, want] : asks) EXPECT_EQ(tags.Find(P, c).node, want) << c;
  EXPECT_EQ(tags.Find(Q, 12).node, 99);
  EXPECT_EQ(tags.Find(Q, 12).flags, kInWarmup);
  EXPECT_EQ(tags.Find(Q, 14).node, 0);
  EXPECT_EQ(tags.Find(P, 14).node, 14);
  EXPECT_EQ(tags.Find(3 << 24, 14).node, 0);  // a process without tags
  EXPECT_EQ(tags.size(), 6u);
}

TEST(CallTags, CorrelationIdsBeyond32BitsStillFound) {
  CallTags tags;
  constexpr int64_t P = 1 << 24;
  constexpr int64_t kWide = (int64_t{1} << 32) + 12;  // would alias 12 if cut to 32 bits
  tags.Add(P, 12, LaunchTag{1, model::Phase::kForward, 0});
  tags.Add(P, kWide, LaunchTag{2, model::Phase::kBackward, 0});
  tags.Add(P, -5, LaunchTag{3, model::Phase::kForward, 0});
  tags.Finish();
  EXPECT_EQ(tags.Find(P, 12).node, 1);
  EXPECT_EQ(tags.Find(P, kWide).node, 2);
  EXPECT_EQ(tags.Find(P, kWide + 1).node, 0);
  EXPECT_EQ(tags.Find(P, -5).node, 3);
  EXPECT_EQ(tags.size(), 3u);
}

TEST(ModuleConfig, DefaultsSayWhatIsAModule) {
  ModuleConfig c = DefaultModuleConfig();
  EXPECT_TRUE(c.IsModule("cpfold:cpfold.model.pairformer.TriangleMultiplicationOutgoing.forward"));
  EXPECT_TRUE(c.IsModule(":my marker"));
  EXPECT_TRUE(c.IsModule("PyTorch:torch.optim.SGD.step"));
  for (const char* not_module :
       {"NCCL:ncclAllGather", "PyTorch:torch.nn.modules.Module.__call__", ":cpfold:iter1", ":cpfold:warmup0",
        ":iteration 0", ":aten::linear, seq = 1, op_id = 378, sizes = [[1]]", ":nccl:coalesced, op_id = 415",
        "CCCL:cub::DeviceScan::InclusiveScan", ":autograd::engine::evaluate_function: AddmmBackward0, op_id = 633"}) {
    EXPECT_FALSE(c.IsModule(not_module)) << not_module;
  }
  EXPECT_TRUE(c.IsOptimizer(":Optimizer.step#SGD.step, op_id = 1325"));
  EXPECT_FALSE(c.IsOptimizer("cpfold:cpfold.model.fold.CPFoldModel.trunk"));
}

TEST(ModuleConfig, ParseErrorsSayWhatToFix) {
  auto bad = ParseModuleConfig(R"({"groups": [{"name": "x"}]})", "m.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("m.json: each group needs a \"name\" and a \"match\""), std::string::npos);
  bad = ParseModuleConfig(R"({"grups": []})", "m.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown field 'grups'"), std::string::npos);
  bad = ParseModuleConfig("[1,", "m.json");
  EXPECT_FALSE(bad.ok());
  auto ok = ParseModuleConfig(R"({"groups": [{"name": "blocks", "match": "Block"}]})", "m.json");
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok.value().IsModule("NCCL:ncclAllGather"));  // no exclude list given: everything
  EXPECT_EQ(ok.value().GroupMask("x:pkg.Block.forward"), 1u);
}

TEST(ModuleConfig, ShortNames) {
  EXPECT_EQ(ShortModuleName("cpfold:cpfold.model.pairformer.TriangleMultiplicationOutgoing.forward"),
            "TriangleMultiplicationOutgoing.forward");
  EXPECT_EQ(ShortModuleName("cpfold:cpfold.cp.comm.batch_p2p"), "comm.batch_p2p");
  EXPECT_EQ(ShortModuleName(":my range"), "my range");
  EXPECT_EQ(ShortModuleName("d:forward"), "forward");
  EXPECT_EQ(ShortModuleName("d:.hidden"), ".hidden");
}

}  // namespace
}  // namespace cpprof::analysis

TEST(OpRangeKey, PerCallNumbersAndShapesDoNotMakeNamesDistinct) {
  auto key = [](std::string_view text) {
    std::string out = "d:";
    cpprof::analysis::AppendOpRangeKey(text, out);
    return out;
  };
  EXPECT_EQ(key("aten::view, op_id = 49486, sizes = [[512, 1]], input_op_ids = [(1,0)]"), "d:aten::view, op_id = 0");
  EXPECT_EQ(key("MmBackward0, seq = 17, op_id = 220"), "d:MmBackward0, seq = 0, op_id = 0");
  EXPECT_EQ(key("aten::mm, sizes = [[2, 3], [3, 4]]"), "d:aten::mm");
  EXPECT_EQ(key("autograd::engine::evaluate_function: CloneBackward0, op_id = 3"),
            "d:autograd::engine::evaluate_function: CloneBackward0, op_id = 0");
  // Not an op range: whole, commas and all.
  EXPECT_EQ(key("PairformerBlock.forward"), "d:PairformerBlock.forward");
  EXPECT_EQ(key("step, seqlen = 4, sizes_hint"), "d:step, seqlen = 4, sizes_hint");
  EXPECT_EQ(key(""), "d:");
  // The built-in patterns answer the canonical form as they answer the original.
  const auto config = cpprof::analysis::DefaultModuleConfig();
  for (std::string_view t : {"aten::view, op_id = 49486, sizes = [[512, 1]]", "MmBackward0, seq = 17, op_id = 220",
                             "torch::autograd::AccumulateGrad, op_id = 7"}) {
    std::string whole = std::string(":") + std::string(t);
    EXPECT_EQ(config.IsModule(whole), config.IsModule(key(t).replace(0, 2, ":"))) << t;
  }
}
