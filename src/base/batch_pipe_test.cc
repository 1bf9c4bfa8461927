// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// BatchThread: batches consumed in order on their own thread; a consumer that refuses or throws
// makes the next hand-overs fail, and Finish says why.
#include "base/batch_pipe.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace cpprof {
namespace {

TEST(BatchThread, ConsumesEveryBatchInOrder) {
  std::vector<int> seen;
  BatchThread<std::vector<int>> consumer(2, [&](std::vector<int>& batch) {
    seen.insert(seen.end(), batch.begin(), batch.end());
    batch.clear();
    return true;
  });
  std::vector<int> batch, want;
  for (int i = 0; i < 1000; ++i) {
    batch.push_back(i);
    want.push_back(i);
    if (batch.size() == 7) {
      ASSERT_TRUE(consumer.Put(batch));
      EXPECT_TRUE(batch.empty());  // a spare (cleared by the consumer) or a new one
    }
  }
  ASSERT_TRUE(consumer.Put(batch));
  consumer.Finish();
  EXPECT_EQ(seen, want);
}

TEST(BatchThread, ARefusalOrAThrowStopsTheHandOversAndFinishSaysWhy) {
  int consumed = 0;
  BatchThread<std::vector<int>> refusing(1, [&](std::vector<int>&) { return ++consumed < 3; });
  std::vector<int> batch{1};
  bool refused = false;
  for (int i = 0; i < 100 && !refused; ++i) refused = !refusing.Put(batch);
  EXPECT_TRUE(refused);
  EXPECT_NO_THROW(refusing.Finish());
  EXPECT_EQ(consumed, 3);

  BatchThread<std::vector<int>> throwing(1, [](std::vector<int>& b) -> bool {
    if (b.front() == 5) throw std::runtime_error("batch 5");
    return true;
  });
  bool failed = false;
  for (int i = 0; i < 100 && !failed; ++i) {
    std::vector<int> b{i};
    failed = !throwing.Put(b);
  }
  EXPECT_TRUE(failed);
  try {
    throwing.Finish();
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "batch 5");
  }
}

}  // namespace
}  // namespace cpprof
