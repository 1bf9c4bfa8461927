// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// OrderedParts: parts filled on several threads come out in order, batch by batch, whatever the
// number of readers; a consumer that leaves early, a part that fails and a fill that throws all
// stop every reader.
#include "base/ordered_parts.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace cpprof {
namespace {

struct Numbers {
  std::vector<int> values;
  bool empty() const { return values.empty(); }
  void Clear() { values.clear(); }
};

using Parts = OrderedParts<Numbers>;

// Part p holds p * 100 .. p * 100 + size(p) - 1, handed over 7 at a time; parts 3 and 4 hold
// nothing (a gap in a table's rowids).
Parts::Fill Hundreds() {
  return [](size_t part, size_t, Numbers& batch, const Parts::Put& put) {
    const int size = part == 3 || part == 4 ? 0 : static_cast<int>(part % 5) * 11 + 3;
    for (int i = 0; i < size; ++i) {
      batch.values.push_back(static_cast<int>(part) * 100 + i);
      if (batch.values.size() == 7 && !put(batch)) return;
    }
  };
}

std::vector<int> Expected(size_t parts) {
  std::vector<int> want;
  for (size_t part = 0; part < parts; ++part) {
    const int size = part == 3 || part == 4 ? 0 : static_cast<int>(part % 5) * 11 + 3;
    for (int i = 0; i < size; ++i) want.push_back(static_cast<int>(part) * 100 + i);
  }
  return want;
}

TEST(OrderedParts, PartsComeInOrderOnAnyNumberOfReaders) {
  for (size_t readers : {1, 2, 3, 8, 40}) {
    std::vector<size_t> done;
    Parts parts(23, readers, 2, Hundreds(), [&](size_t part) {
      done.push_back(part);
      return true;
    });
    std::vector<int> got;
    Numbers batch;
    while (parts.Take(batch)) {
      EXPECT_FALSE(batch.empty());
      got.insert(got.end(), batch.values.begin(), batch.values.end());
    }
    EXPECT_EQ(got, Expected(23)) << readers << " readers";
    ASSERT_EQ(done.size(), 23u);
    for (size_t p = 0; p < done.size(); ++p) EXPECT_EQ(done[p], p);
    EXPECT_FALSE(parts.Take(batch));  // at the end it stays at the end
  }
}

TEST(OrderedParts, LeavingEarlyStopsTheReaders) {
  std::atomic<int> fills{0};
  {
    Parts parts(
        1000, 4, 1,
        [&](size_t part, size_t reader, Numbers& batch, const Parts::Put& put) {
          ++fills;
          Hundreds()(part, reader, batch, put);
        },
        [](size_t) { return true; });
    Numbers batch;
    ASSERT_TRUE(parts.Take(batch));
    EXPECT_EQ(batch.values.front(), 0);
  }  // the readers are blocked handing over: stopped and joined here
  EXPECT_LT(fills.load(), 1000);
}

TEST(OrderedParts, AFailedPartStopsTheReadingAndAThrowIsRethrown) {
  Parts failing(50, 3, 2, Hundreds(), [](size_t part) { return part < 5; });
  std::vector<int> got;
  Numbers batch;
  while (failing.Take(batch)) got.insert(got.end(), batch.values.begin(), batch.values.end());
  EXPECT_EQ(got, Expected(5));  // part 5's end said stop: its last batch (its 3 rows) is not given
  EXPECT_FALSE(failing.Take(batch));

  Parts throwing(
      50, 3, 2,
      [](size_t part, size_t reader, Numbers& numbers, const Parts::Put& put) {
        if (part == 9) throw std::runtime_error("part 9");
        Hundreds()(part, reader, numbers, put);
      },
      [](size_t) { return true; });
  got.clear();
  try {
    while (throwing.Take(batch)) got.insert(got.end(), batch.values.begin(), batch.values.end());
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "part 9");
  }
  EXPECT_EQ(got, Expected(9));
}

}  // namespace
}  // namespace cpprof
