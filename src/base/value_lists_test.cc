// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "base/value_lists.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace cpprof {
namespace {

std::vector<int64_t> Values(const ValueLists& lists, uint32_t id) {
  std::vector<int64_t> v;
  lists.ForEach(id, [&](int64_t x) { v.push_back(x); });
  return v;
}

class ValueListsBlocks : public ::testing::TestWithParam<uint32_t> {};

TEST_P(ValueListsBlocks, KeepsEachListInOrderAcrossBlocks) {
  ValueLists lists(GetParam());
  std::vector<std::vector<int64_t>> reference;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    lists.NewList();
    reference.emplace_back();
  }
  // Interleaved appends; some lists grow past the largest block size (4096).
  for (int n = 0; n < 300000; ++n) {
    uint32_t id = static_cast<uint32_t>(n % 7 == 0 ? 3 : rng() % 1000);
    int64_t v = static_cast<int64_t>(rng() % 1000000);
    lists.Append(id, v);
    reference[id].push_back(v);
  }
  for (uint32_t id = 0; id < reference.size(); ++id) {
    ASSERT_EQ(lists.Count(id), reference[id].size());
    ASSERT_EQ(Values(lists, id), reference[id]) << id;
  }
  EXPECT_GT(reference[3].size(), 40000u);
}

INSTANTIATE_TEST_SUITE_P(FirstBlock, ValueListsBlocks, ::testing::Values(1u, 3u, 7u, 8u));

TEST(ValueLists, ValuesOutsideThirtyTwoBitsComeBackExactly) {
  ValueLists lists;
  const std::vector<int64_t> odd = {0,
                                    -1,
                                    std::numeric_limits<int64_t>::min(),
                                    std::numeric_limits<int64_t>::max(),
                                    0xFFFFFFFE,
                                    0xFFFFFFFF,
                                    int64_t{1} << 32,
                                    5};
  uint32_t a = lists.NewList(), b = lists.NewList();
  for (int64_t v : odd) lists.Append(a, v);
  lists.Append(b, -7);  // escaped inline first value
  EXPECT_EQ(Values(lists, a), odd);
  EXPECT_EQ(Values(lists, b), std::vector<int64_t>{-7});
}

TEST(ValueLists, EmptyListsGiveNothing) {
  ValueLists lists;
  uint32_t id = lists.NewList();
  EXPECT_EQ(lists.Count(id), 0u);
  EXPECT_TRUE(Values(lists, id).empty());
}

}  // namespace
}  // namespace cpprof
