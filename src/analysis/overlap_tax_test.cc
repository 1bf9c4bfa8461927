// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/overlap_tax.h"

#include <gtest/gtest.h>

#include <vector>

namespace cpprof::analysis {
namespace {

using model::OpClass;

struct Builder {
  model::ProcessGpuWork w;
  void Add(int64_t start, int64_t end, OpClass cls, uint16_t node, int64_t key, uint32_t launch = 1) {
    w.ops.push_back({start, static_cast<uint32_t>(end - start), cls, 0, node});
    w.op_keys.push_back(key);
    w.op_launches.push_back(launch);
  }
};

const std::vector<ModuleTreeNode> kNodes = {
    {"[unattributed]", "", -1, 0, false},
    {"trunk", "", -1, 0, true},
    {"TriangleMultiplicationOutgoing", "cpfold:TriMul", 1, 1, false},
};

TEST(OverlapTax, SameKernelTimedUnderCommunicationAndAlone) {
  Builder b;
  // Kernel 7 of the TriMul: 100 ns alone four times, 150 ns under an NCCL kernel four times.
  for (int i = 0; i < 4; ++i) b.Add(1000 * i, 1000 * i + 100, OpClass::kGemm, 2, 7);
  b.Add(10'000, 20'000, OpClass::kSendRecv, 2, 3);
  for (int i = 0; i < 4; ++i) b.Add(10'000 + 1000 * i, 10'000 + 1000 * i + 150, OpClass::kGemm, 2, 7);
  // Kernel 8: under communication only twice (too few to compare), alone four times.
  for (int i = 0; i < 2; ++i) b.Add(15'000 + 1000 * i, 15'000 + 1000 * i + 500, OpClass::kElementwise, 2, 8);
  for (int i = 0; i < 4; ++i) b.Add(30'000 + 1000 * i, 30'000 + 1000 * i + 400, OpClass::kElementwise, 2, 8);
  // Partly under communication (a quarter of it): neither side.
  b.Add(19'900, 20'300, OpClass::kGemm, 2, 7);
  // A memset and a memcpy are not compute kernels.
  b.Add(11'000, 11'050, OpClass::kMemset, 2, model::kOpKeyMemOp | 0xFFFFFFFF);
  OverlapTaxInput in;
  in.ranks = {&b.w};
  in.nodes = &kNodes;
  in.iterations = 2;
  const model::OverlapTax t = ComputeOverlapTax(in);
  ASSERT_TRUE(t.computed) << t.why_not;
  EXPECT_EQ(t.ops_under, 6);
  EXPECT_EQ(t.ops_alone, 8);
  EXPECT_EQ(t.ops_partial, 1);
  EXPECT_EQ(t.all.kernels, 1);
  EXPECT_EQ(t.all.ops_under, 4);
  EXPECT_EQ(t.all.alone_ns, 400);
  EXPECT_EQ(t.all.extra_ns, 200);
  EXPECT_DOUBLE_EQ(t.all.slowdown, 0.5);
  EXPECT_DOUBLE_EQ(t.all.extra_ns_per_iteration, 100);
  // The module and its group, the largest extra first, then by path.
  ASSERT_EQ(t.modules.size(), 2u);
  EXPECT_EQ(t.modules[0].path, "trunk");
  EXPECT_TRUE(t.modules[0].is_group);
  EXPECT_EQ(t.modules[1].path, "trunk/TriangleMultiplicationOutgoing");
  EXPECT_EQ(t.modules[1].extra_ns, 200);
}

TEST(OverlapTax, KernelsAreComparedPerRankAndModule) {
  // The same kernel id alone on rank 0 and under communication on rank 1: nothing to compare.
  Builder r0, r1;
  for (int i = 0; i < 4; ++i) r0.Add(1000 * i, 1000 * i + 100, OpClass::kGemm, 2, 7);
  r1.Add(0, 10'000, OpClass::kAllGather, 0, 3);
  for (int i = 0; i < 4; ++i) r1.Add(1000 * i, 1000 * i + 200, OpClass::kGemm, 2, 7);
  // And in another module on rank 0, under communication: not the TriMul's kernel either.
  r0.Add(20'000, 30'000, OpClass::kSendRecv, 0, 3);
  for (int i = 0; i < 4; ++i) r0.Add(20'000 + 1000 * i, 20'000 + 1000 * i + 300, OpClass::kGemm, 0, 7);
  OverlapTaxInput in;
  in.ranks = {&r0.w, &r1.w};
  in.nodes = &kNodes;
  const model::OverlapTax t = ComputeOverlapTax(in);
  EXPECT_FALSE(t.computed);
  EXPECT_EQ(t.ops_under, 8);
  EXPECT_EQ(t.ops_alone, 4);
  EXPECT_NE(t.why_not.find("both under communication and alone 3 times"), std::string::npos) << t.why_not;
}

TEST(OverlapTax, OnlyOpsWhollyInsideTheWindowCount) {
  Builder b;
  b.Add(0, 100'000, OpClass::kSendRecv, 0, 3);
  for (int i = 0; i < 8; ++i) b.Add(10'000 * i, 10'000 * i + 300, OpClass::kGemm, 1, 7);                  // under
  for (int i = 0; i < 8; ++i) b.Add(200'000 + 1000 * i, 200'000 + 1000 * i + 100, OpClass::kGemm, 1, 7);  // alone
  const model::Interval window{20'000, 205'000};
  OverlapTaxInput in;
  in.ranks = {&b.w};
  in.window = &window;
  const model::OverlapTax t = ComputeOverlapTax(in);
  ASSERT_TRUE(t.computed) << t.why_not;
  EXPECT_EQ(t.ops_under, 5);  // after 20'000 (one starting at the edge may have been cut there)
  EXPECT_EQ(t.ops_alone, 5);  // those ending before 205'000
  EXPECT_EQ(t.all.extra_ns, 5 * 200);
  EXPECT_DOUBLE_EQ(t.all.extra_ns_per_iteration, 1000);  // no iterations: per window and rank
  ASSERT_EQ(t.modules.size(), 1u);
  EXPECT_EQ(t.modules[0].module, "[unattributed]");  // no module tree
}

TEST(OverlapTax, OneNameOnOtherGridSizesIsAnotherKernel) {
  // elementwise_kernel on a small grid under communication, on a large one alone: not compared.
  Builder b;
  b.Add(0, 10'000, OpClass::kSendRecv, 0, 3);
  for (int i = 0; i < 4; ++i) b.Add(1000 * i, 1000 * i + 100, OpClass::kElementwise, 0, 9, /*launch=*/11);
  for (int i = 0; i < 4; ++i) b.Add(20'000 + 1000 * i, 20'000 + 1000 * i + 900, OpClass::kElementwise, 0, 9, 22);
  OverlapTaxInput in;
  in.ranks = {&b.w};
  EXPECT_FALSE(ComputeOverlapTax(in).computed);
  for (int i = 0; i < 4; ++i) b.Add(40'000 + 1000 * i, 40'000 + 1000 * i + 80, OpClass::kElementwise, 0, 9, 11);
  const model::OverlapTax t = ComputeOverlapTax(in);
  ASSERT_TRUE(t.computed);
  EXPECT_DOUBLE_EQ(t.all.slowdown, 0.25);  // 100 ns under communication, 80 alone
}

TEST(OverlapTax, SaysWhyWhenTheKernelNamesWereNotKept) {
  Builder b;
  b.w.ops.push_back({0, 100, OpClass::kGemm, 0, 0});  // no key
  OverlapTaxInput in;
  in.ranks = {&b.w};
  const model::OverlapTax t = ComputeOverlapTax(in);
  EXPECT_FALSE(t.computed);
  EXPECT_EQ(t.why_not, "the ops' kernel names and launches were not kept");
}

}  // namespace
}  // namespace cpprof::analysis
