// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/size_inference.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cpprof::analysis {
namespace {

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

model::OpShapes Op(const std::string& text) {
  auto op = ParseOpShapes(text);
  EXPECT_TRUE(op) << text;
  return op ? *op : model::OpShapes{};
}

TEST(SizeInference, ParsesAutogradShapeRanges) {
  auto op = ParseOpShapes(
      "aten::linear, op_id = 12787, sizes = [[1, 256, 128, 64], [128, 64], []], input_op_ids = [(12772,0), (2071,0)]");
  ASSERT_TRUE(op);
  EXPECT_EQ(op->op, "aten::linear");
  ASSERT_EQ(op->sizes.size(), 3u);
  EXPECT_EQ(op->sizes[0], (std::vector<int64_t>{1, 256, 128, 64}));
  EXPECT_EQ(op->sizes[1], (std::vector<int64_t>{128, 64}));
  EXPECT_TRUE(op->sizes[2].empty());
  EXPECT_FALSE(ParseOpShapes("aten::mm, seq = 3, op_id = 4"));                      // autograd-nvtx: no shapes
  EXPECT_FALSE(ParseOpShapes("aten::mm, op_id = 4, sizes = [[1, 2], [3"));          // cut short
  EXPECT_FALSE(ParseOpShapes("aten::mm, op_id = 4, sizes = [[1, -2]], input_op"));  // not a size
  EXPECT_TRUE(IsSizeBearingOp("aten::layer_norm, op_id = 1, sizes = [[1]]"));
  EXPECT_TRUE(IsSizeBearingOp("aten::scaled_dot_product_attention, op_id = 1"));
  EXPECT_FALSE(IsSizeBearingOp("aten::layer_norm_backward, op_id = 1"));
  EXPECT_FALSE(IsSizeBearingOp("aten::view, op_id = 1, sizes = [[1]]"));
  EXPECT_FALSE(IsSizeBearingOp("TriangleMultiplicationOutgoing.forward"));
}

// The ops of cpfold's `small` preset on a 1 x 2 grid at N = 256, as the committed
// cpfold-opts-full-1x2 export records them (rank 0's first call of each module).
std::vector<model::ModuleShapes> SmallPresetOnOneByTwo() {
  const std::string p = "trunk/CPFoldModel.trunk/PairformerModule.forward/PairformerBlock.forward/";
  return {
      {p + "TriangleMultiplicationOutgoing.forward",
       {Op("aten::layer_norm, op_id = 1, sizes = [[1, 256, 128, 64], [], [64], [64], [], []], input_op_ids = []"),
        Op("aten::linear, op_id = 2, sizes = [[1, 256, 128, 64], [128, 64], []], input_op_ids = []"),
        Op("aten::bmm, op_id = 3, sizes = [[64, 128, 128], [64, 128, 256]], input_op_ids = []"),
        Op("aten::layer_norm, op_id = 4, sizes = [[1, 256, 128, 64], [], [64], [64], [], []], input_op_ids = []"),
        Op("aten::linear, op_id = 5, sizes = [[1, 256, 128, 64], [64, 64], []], input_op_ids = []")}},
      {p + "TriangleAttentionStartingNode.forward",
       {Op("aten::layer_norm, op_id = 6, sizes = [[1, 128, 256, 64], [], [64], [64], [], []], input_op_ids = []"),
        Op("aten::linear, op_id = 7, sizes = [[1, 128, 256, 64], [4, 64], []], input_op_ids = []"),
        Op("aten::linear, op_id = 8, sizes = [[1, 128, 256, 64], [64, 64], []], input_op_ids = []"),
        Op("aten::scaled_dot_product_attention, op_id = 9, sizes = [[128, 4, 256, 16], [128, 4, 256, 16], [128, 4, "
           "256, 16], [128, 4, 256, 256], [], [], [], []], input_op_ids = []")}},
      {p + "PairTransition.forward",
       {Op("aten::layer_norm, op_id = 10, sizes = [[1, 256, 128, 64], [], [64], [64], [], []], input_op_ids = []"),
        Op("aten::linear, op_id = 11, sizes = [[1, 256, 128, 64], [256, 64], []], input_op_ids = []"),
        Op("aten::linear, op_id = 12, sizes = [[1, 256, 128, 256], [64, 256], []], input_op_ids = []")}},
      {p + "AttentionPairBias.forward",
       {Op("aten::layer_norm, op_id = 13, sizes = [[1, 256, 128, 64], [], [64], [64], [], []], input_op_ids = []"),
        Op("aten::linear, op_id = 14, sizes = [[1, 256, 128, 64], [8, 64], []], input_op_ids = []"),
        Op("aten::layer_norm, op_id = 15, sizes = [[1, 256, 128], [], [128], [128], [], []], input_op_ids = []"),
        Op("aten::scaled_dot_product_attention, op_id = 16, sizes = [[1, 8, 256, 16], [1, 8, 256, 16], [1, 8, 256, "
           "16], [1, 8, 256, 256], [], [], [], []], input_op_ids = []")}},
      {"MSA/MSAModule.forward/MSABlock.forward/OuterProductMean.forward",
       {Op("aten::layer_norm, op_id = 17, sizes = [[1, 32, 256, 32], [], [32], [32], [], []], input_op_ids = []"),
        Op("aten::linear, op_id = 18, sizes = [[1, 32, 256, 32], [16, 32], []], input_op_ids = []")}},
      {"MSA/MSAModule.forward/MSABlock.forward/MSAPairWeightedAveraging.forward",
       {Op("aten::layer_norm, op_id = 19, sizes = [[1, 256, 128, 64], [], [64], [64], [], []], input_op_ids = []"),
        Op("aten::linear, op_id = 20, sizes = [[1, 256, 128, 64], [4, 64], []], input_op_ids = []"),
        Op("aten::linear, op_id = 21, sizes = [[1, 32, 256, 32], [32, 32], []], input_op_ids = []")}},
  };
}

TEST(SizeInference, SmallPresetFromItsShapes) {
  std::vector<std::string> notes;
  Dims d = SizesFromShapes(SmallPresetOnOneByTwo(), DefaultCostConfig(), 2, &notes);
  EXPECT_TRUE(notes.empty()) << notes.front();
  const std::map<std::string, double> want = {
      {"N", 256},          {"c_z", 64},      {"tri_mul_hidden", 64},  {"tri_att_heads", 4}, {"tri_att_head_dim", 16},
      {"transition_n", 4}, {"c_s", 128},     {"single_att_heads", 8}, {"c_m", 32},          {"msa_depth", 32},
      {"c_opm", 16},       {"msa_heads", 4}, {"msa_head_dim", 8}};
  EXPECT_EQ(d.values, want);
  EXPECT_EQ(d.grid_rows, 1);
  EXPECT_EQ(d.grid_cols, 2);
  EXPECT_CONTAINS(
      d.origin.at("N"),
      "shapes: TriangleMultiplicationOutgoing.forward's aten::layer_norm input [1, 256, 128, 64] on 2 ranks");
  EXPECT_CONTAINS(d.origin.at("grid"), "the block of an N = 256 pair tensor");
  EXPECT_EQ(d.origin.count("dtype"), 0u) << "shapes do not carry the dtype";
  // On 4 ranks the same block is a 2 x 2 grid's? 256 x 128 x 4 is not a square: no N, no grid.
  Dims four = SizesFromShapes(SmallPresetOnOneByTwo(), DefaultCostConfig(), 4, &notes);
  EXPECT_FALSE(four.origin.count("grid"));
  EXPECT_EQ(four.Get("c_z"), 64);
}

TEST(SizeInference, CommandLineFlags) {
  Dims d = SizesFromCommandLine({"--standalone", "--nproc_per_node=2", "-m", "cpfold.run", "--cp0", "1", "--cp1", "2",
                                 "--preset", "small", "--n-token", "256", "--recycles", "0", "--blocks", "1", "--dtype",
                                 "bf16"});
  EXPECT_EQ(d.Get("N"), 256);
  EXPECT_EQ(d.Get("passes"), 1);
  EXPECT_EQ(d.Get("blocks"), 1);
  EXPECT_EQ(d.grid_rows, 1);
  EXPECT_EQ(d.grid_cols, 2);
  EXPECT_EQ(d.dtype, "bf16");
  EXPECT_EQ(d.origin.at("N"), "command line: --n-token 256");
  EXPECT_EQ(d.origin.at("grid"), "command line: --cp0 1 --cp1 2");
  Dims lightning = SizesFromCommandLine({"--precision=bf16-mixed", "--token_z", "128", "--grid", "2x2"});
  EXPECT_EQ(lightning.dtype, "bf16");
  EXPECT_EQ(lightning.Get("c_z"), 128);
  EXPECT_EQ(lightning.grid_rows * lightning.grid_cols, 4);
  EXPECT_TRUE(SizesFromCommandLine({"--n-token", "many", "--dtype", "int8"}).origin.empty());
}

TEST(SizeInference, MergeKeepsTheFirstSourceAndSaysWhere) {
  Dims given;
  ASSERT_TRUE(ParseDims("N=512,dtype=fp32", "--dims", given).ok());
  Dims shapes = SizesFromShapes(SmallPresetOnOneByTwo(), DefaultCostConfig(), 2, nullptr);
  Dims command = SizesFromCommandLine({"--dtype", "bf16", "--blocks", "1"});
  Dims d = MergeDims({&given, &shapes, &command});
  EXPECT_EQ(d.Get("N"), 512);
  EXPECT_EQ(d.Get("c_z"), 64);
  EXPECT_EQ(d.Get("blocks"), 1);
  EXPECT_EQ(d.dtype, "fp32");
  EXPECT_EQ(d.grid_cols, 2);
  EXPECT_EQ(d.source, "--dims, shapes, command line, defaults");
  const std::string described = DescribeSizes(d);
  EXPECT_CONTAINS(described, "--dims: N=512, dtype=fp32");
  EXPECT_CONTAINS(described, "shapes: c_z=64");
  EXPECT_CONTAINS(described, "command line: blocks=1");
  EXPECT_CONTAINS(described, "default (AF3): msa_blocks=4, passes=1");
  const std::vector<std::string> warn = ContradictedSizes(given, shapes);
  ASSERT_EQ(warn.size(), 1u);
  EXPECT_CONTAINS(warn[0], "--dims N=512 but the recorded shapes give N=256 (TriangleMultiplicationOutgoing.forward");
  EXPECT_TRUE(ContradictedSizes(shapes, shapes).empty());
}

}  // namespace
}  // namespace cpprof::analysis
