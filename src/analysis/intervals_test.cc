// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/intervals.h"

#include <gtest/gtest.h>

#include <random>

namespace cpprof::analysis {
namespace {

// Brute force over a small time axis: which nanoseconds does a set of intervals cover?
std::vector<bool> Cover(const std::vector<Interval>& v, int64_t horizon) {
  std::vector<bool> c(horizon, false);
  for (const auto& iv : v) {
    for (int64_t t = std::max<int64_t>(0, iv.start); t < std::min(iv.end, horizon); ++t) c[t] = true;
  }
  return c;
}

int64_t Count(const std::vector<bool>& c) { return std::count(c.begin(), c.end(), true); }

bool WellFormed(const Segments& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].end <= s[i].start) return false;
    if (i && s[i].start <= s[i - 1].end) return false;  // disjoint and non-touching
  }
  return true;
}

TEST(Intervals, UnionMergesOverlappingAndTouching) {
  Segments u = Union({{5, 10}, {0, 3}, {3, 4}, {8, 12}, {20, 25}});
  EXPECT_EQ(u, (Segments{{0, 4}, {5, 12}, {20, 25}}));
  EXPECT_EQ(Length(u), 4 + 7 + 5);
}

TEST(Intervals, EmptyAndInvertedIntervalsContributeNothing) {
  EXPECT_TRUE(Union({{5, 5}, {9, 3}}).empty());
  EXPECT_EQ(Union({{0, 10}, {4, 4}, {12, 11}}), (Segments{{0, 10}}));
}

TEST(Intervals, NestedAndIdentical) {
  EXPECT_EQ(Union({{0, 100}, {10, 20}, {10, 20}, {0, 100}, {99, 100}}), (Segments{{0, 100}}));
}

TEST(Intervals, IntersectionAndSubtraction) {
  Segments a{{0, 10}, {20, 30}, {40, 50}};
  Segments b{{5, 25}, {45, 60}};
  EXPECT_EQ(Intersect(a, b), (Segments{{5, 10}, {20, 25}, {45, 50}}));
  EXPECT_EQ(IntersectionLength(a, b), 15);
  EXPECT_EQ(Subtract(a, b), (Segments{{0, 5}, {25, 30}, {40, 45}}));
  EXPECT_EQ(Subtract(b, a), (Segments{{10, 20}, {50, 60}}));
  EXPECT_TRUE(Intersect(a, {}).empty());
  EXPECT_EQ(Subtract(a, {}), a);
}

TEST(Intervals, LengthWithinWindow) {
  Segments s{{0, 10}, {20, 30}};
  EXPECT_EQ(LengthWithin(s, {5, 25}), 10);
  EXPECT_EQ(LengthWithin(s, {10, 20}), 0);
  EXPECT_EQ(LengthWithin(s, {-5, 100}), 20);
}

TEST(Intervals, UnionBuilderLengthIsValidWhileBuilding) {
  UnionBuilder b;
  b.Add({0, 10});
  EXPECT_EQ(b.length(), 10);
  b.Add({5, 15});
  EXPECT_EQ(b.length(), 15);
  b.Add({20, 21});
  EXPECT_EQ(b.length(), 16);
  EXPECT_EQ(b.Finish(), (Segments{{0, 15}, {20, 21}}));
  EXPECT_EQ(b.length(), 0);
}

TEST(Intervals, UnionOfLists) {
  Segments a{{0, 5}, {10, 15}}, b{{4, 11}}, c{{30, 31}};
  std::vector<const Segments*> lists{&a, &b, &c};
  EXPECT_EQ(UnionOf(lists), (Segments{{0, 15}, {30, 31}}));
}

// Adversarial random sets checked against the brute-force cover: many duplicates, nesting,
// touching ends, zero-length and inverted intervals.
TEST(Intervals, RandomAgainstBruteForce) {
  std::mt19937 rng(12345);
  const int64_t horizon = 200;
  for (int trial = 0; trial < 500; ++trial) {
    std::uniform_int_distribution<int> n_dist(0, 30);
    std::uniform_int_distribution<int64_t> t(0, horizon);
    std::vector<Interval> a, b;
    for (int i = n_dist(rng); i > 0; --i) a.push_back({t(rng), t(rng)});
    for (int i = n_dist(rng); i > 0; --i) b.push_back({t(rng), t(rng)});
    Segments ua = Union(a), ub = Union(b);
    ASSERT_TRUE(WellFormed(ua));
    ASSERT_TRUE(WellFormed(ub));
    auto ca = Cover(a, horizon), cb = Cover(b, horizon);
    ASSERT_EQ(Length(ua), Count(ca));
    ASSERT_EQ(Cover(ua, horizon), ca);
    std::vector<bool> both(horizon), only_a(horizon);
    for (int64_t i = 0; i < horizon; ++i) {
      both[i] = ca[i] && cb[i];
      only_a[i] = ca[i] && !cb[i];
    }
    Segments inter = Intersect(ua, ub), diff = Subtract(ua, ub);
    ASSERT_TRUE(WellFormed(diff));
    ASSERT_EQ(Cover(inter, horizon), both);
    ASSERT_EQ(IntersectionLength(ua, ub), Count(both));
    ASSERT_EQ(Cover(diff, horizon), only_a);
    // The identity the report relies on: |A u B| = |A| + |B| - |A n B|.
    std::vector<const Segments*> lists{&ua, &ub};
    ASSERT_EQ(Length(UnionOf(lists)), Length(ua) + Length(ub) - IntersectionLength(ua, ub));
  }
}

TEST(Intervals, SortByStartKeepsSortedInputAndSortsOthers) {
  std::vector<Interval> v{{3, 4}, {1, 2}, {1, 1}, {2, 9}};
  SortByStart(v);
  EXPECT_EQ(v, (std::vector<Interval>{{1, 1}, {1, 2}, {2, 9}, {3, 4}}));
}

}  // namespace
}  // namespace cpprof::analysis
