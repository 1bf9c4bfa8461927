// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/divergence.h"

#include <gtest/gtest.h>

namespace cpprof::analysis {
namespace {

using model::OpClass;

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

model::CollectiveStats Kind(OpClass k, std::vector<int64_t> counts) {
  model::CollectiveStats s;
  s.kind = k;
  s.per_rank_count = std::move(counts);
  return s;
}

model::Imbalance With(std::vector<model::CollectiveStats> kinds) {
  model::Imbalance i;
  i.collectives = std::move(kinds);
  return i;
}

// The per-kind counts of the committed real exports (tests/data/golden/*.report.json) are all
// within their rules: cpfold's trunk on 2x2 (Cannon), cpfold's training on 1x2 (an all-gather cut at
// the window's edge), the rest equal.
TEST(Divergence, RealRunsAreNotFlagged) {
  EXPECT_FALSE(DiagnoseDivergence(
      With({Kind(OpClass::kSendRecv, {72, 216, 216, 144}), Kind(OpClass::kAllGather, {110, 110, 110, 110}),
            Kind(OpClass::kAllReduce, {1, 1, 1, 1})}),
      4));
  EXPECT_FALSE(DiagnoseDivergence(With({Kind(OpClass::kSendRecv, {90, 90}), Kind(OpClass::kAllGather, {29, 28}),
                                        Kind(OpClass::kAllReduce, {5, 5})}),
                                  2));
  EXPECT_FALSE(DiagnoseDivergence(With({Kind(OpClass::kAllReduce, {3})}), 1));  // one rank
}

// The toy model's divergent variant (python/tests/toy_user_model: rank r runs 1 + r recycles, an
// all-reduce each, over 3 iterations) as a readout would count it.
TEST(Divergence, CollectiveCountsThatDifferAreFlaggedWithTheFix) {
  auto d = DiagnoseDivergence(
      With({Kind(OpClass::kAllReduce, {3, 6}), Kind(OpClass::kSendRecv, {8, 8}), Kind(OpClass::kBroadcast, {1, 1})}),
      2);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->id, "divergent-control-flow");
  EXPECT_EQ(d->severity, model::Diagnostic::Severity::kWarning);
  EXPECT_EQ(d->title, "the ranks ran different numbers of NCCL ops: likely divergent control flow");
  EXPECT_CONTAINS(d->detail, "more than the parallel layout explains: AllReduce: rank 0 3, rank 1 6.");
  EXPECT_EQ(d->detail.find("SendRecv"), std::string::npos);
  EXPECT_CONTAINS(d->fix, "cpprof_workload.broadcast_counts(recycles=..., steps=...)");
  EXPECT_CONTAINS(d->fix, "seed every rank alike");
}

// On a 2x2 grid SendRecv may differ up to 3x (Cannon's skew), and is said when collectives are
// flagged; past that it is flagged too. On a 1-D ring it must be equal.
TEST(Divergence, CannonSkewIsExpectedOnAGridNotOnARing) {
  auto d = DiagnoseDivergence(
      With({Kind(OpClass::kSendRecv, {72, 216, 216, 144}), Kind(OpClass::kAllGather, {110, 110, 112, 110})}), 4);
  ASSERT_TRUE(d.has_value());
  EXPECT_CONTAINS(d->detail, "AllGather: rank 0 110, rank 1 110, rank 2 112, rank 3 110.");
  EXPECT_CONTAINS(d->detail,
                  "Expected and not counted: SendRecv: rank 0 72, rank 1 216, rank 2 216, rank 3 144 "
                  "(Cannon's skewed shifts on a 2x2 grid let a rank run up to 3x");
  auto grid = DiagnoseDivergence(With({Kind(OpClass::kSendRecv, {72, 300, 216, 144})}), 4);
  ASSERT_TRUE(grid.has_value());
  EXPECT_CONTAINS(grid->detail, "SendRecv: rank 0 72, rank 1 300");
  EXPECT_TRUE(DiagnoseDivergence(With({Kind(OpClass::kSendRecv, {8, 12})}), 2).has_value());
  EXPECT_EQ(RuleFor(OpClass::kSendRecv, 9, 100).max_allowed, 201);  // 3x3: 2x, plus one
  EXPECT_FALSE(RuleFor(OpClass::kPeerCopy, 2, 1).judged);
  EXPECT_FALSE(DiagnoseDivergence(With({Kind(OpClass::kNcclOther, {1, 9})}), 2).has_value());
}

}  // namespace
}  // namespace cpprof::analysis
