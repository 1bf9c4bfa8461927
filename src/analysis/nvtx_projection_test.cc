// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/nvtx_projection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>

namespace cpprof::analysis {
namespace {

// The projection as it was computed before the streaming sweep (all ranges and launches in
// memory, parents from NvtxParents): the reference the sweep must agree with.
std::vector<RangeProjection> ReferenceProjectRanges(const std::vector<NvtxRange>& ranges,
                                                    const std::vector<Launch>& launches) {
  std::vector<RangeProjection> out(ranges.size());
  // The last correlation id counted per range: calls sharing an id (a runtime call and the
  // driver call it makes) nest, so they arrive one after the other on their thread.
  std::vector<int64_t> last_corr(ranges.size(), std::numeric_limits<int64_t>::min());
  auto threads = RangesByThread(ranges);  // as before the streaming sweep

  // Launches per thread by API start; sweep each thread's ranges alongside.
  std::map<int64_t, std::vector<const Launch*>> by_thread;
  for (const auto& l : launches) by_thread[l.tid].push_back(&l);
  for (auto& [tid, ls] : by_thread) {
    auto it = threads.find(tid);
    if (it == threads.end()) continue;
    const auto& idx = it->second;
    std::stable_sort(ls.begin(), ls.end(),
                     [](const Launch* a, const Launch* b) { return a->api_start < b->api_start; });
    std::vector<size_t> active;
    size_t next = 0;
    for (const Launch* l : ls) {
      while (next < idx.size() && ranges[idx[next]].start <= l->api_start) active.push_back(idx[next++]);
      std::erase_if(active, [&](size_t a) { return ranges[a].end < l->api_start; });
      for (size_t a : active) {
        if (ranges[a].end < l->api_end) continue;
        RangeProjection& p = out[a];
        if (!p.projected) {
          p.projected = true;
          p.proj_start = l->op_start;
          p.proj_end = l->op_end;
        } else {
          p.proj_start = std::min(p.proj_start, l->op_start);
          p.proj_end = std::max(p.proj_end, l->op_end);
        }
        if (last_corr[a] != l->correlation) ++p.launches;
        last_corr[a] = l->correlation;
      }
    }
  }

  std::vector<int64_t> parent = NvtxParents(ranges);
  // Levels: depth from a root; a cycle (identical ranges parent each other) has no level.
  std::vector<int> level(ranges.size(), -2);  // -2 unknown
  for (size_t i = 0; i < ranges.size(); ++i) {
    std::vector<size_t> path;
    size_t cur = i;
    int base = 0;
    while (true) {
      if (level[cur] != -2) {
        base = level[cur] < 0 ? -1 : level[cur] + 1;
        break;
      }
      if (parent[cur] < 0) {
        level[cur] = 0;
        base = 1;
        break;
      }
      if (std::find(path.begin(), path.end(), cur) != path.end()) {
        base = -1;  // cycle
        break;
      }
      path.push_back(cur);
      cur = static_cast<size_t>(parent[cur]);
    }
    for (auto p = path.rbegin(); p != path.rend(); ++p) {
      if (level[*p] != -2) continue;
      level[*p] = base < 0 ? -1 : base;
      if (base >= 0) ++base;
    }
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    out[i].level = level[i];
    if (out[i].projected && parent[i] >= 0) ++out[parent[i]].children;
  }
  return out;
}

TEST(NvtxParents, TightestContainerOnTheSameThread) {
  std::vector<NvtxRange> r = {
      {0, 100, 1},   // 0: root
      {10, 90, 1},   // 1: in 0
      {20, 30, 1},   // 2: in 1 (tighter than 0)
      {20, 30, 2},   // 3: other thread: no parent
      {5, 95, 1},    // 4: between 0 and 1
      {85, 120, 1},  // 5: crosses 0 and 1 (start/end style): no container
  };
  auto p = NvtxParents(r);
  EXPECT_EQ(p, (std::vector<int64_t>{-1, 4, 1, -1, 0, -1}));
}

TEST(NvtxParents, IdenticalRangesContainEachOther) {
  auto p = NvtxParents({{0, 10, 1}, {0, 10, 1}});
  EXPECT_EQ(p[0], 1);
  EXPECT_EQ(p[1], 0);
}

TEST(ProjectRanges, OpsBelongToEveryEnclosingRangeOfTheLaunchingThread) {
  std::vector<NvtxRange> r = {{0, 100, 1}, {10, 50, 1}, {60, 70, 1}, {0, 100, 2}};
  std::vector<Launch> l = {
      {1, 20, 25, 1000, 1100, 7},   // in 0 and 1
      {1, 21, 24, 1000, 1150, 7},   // the driver call of the same launch: counted once
      {1, 55, 58, 1200, 1300, 8},   // in 0 only
      {1, 95, 105, 1400, 1500, 9},  // crosses the end of 0: in no range
      {3, 20, 25, 1600, 1700, 10},  // another thread without ranges
  };
  auto p = ProjectRanges(r, l);
  ASSERT_TRUE(p[0].projected);
  EXPECT_EQ(p[0].proj_start, 1000);
  EXPECT_EQ(p[0].proj_end, 1300);
  EXPECT_EQ(p[0].launches, 2);
  EXPECT_EQ(p[0].level, 0);
  EXPECT_EQ(p[0].children, 1);  // range 1 is projected; range 2 is not
  ASSERT_TRUE(p[1].projected);
  EXPECT_EQ(p[1].proj_end - p[1].proj_start, 150);
  EXPECT_EQ(p[1].launches, 1);
  EXPECT_EQ(p[1].level, 1);
  EXPECT_FALSE(p[2].projected);
  EXPECT_EQ(p[2].level, 1);
  EXPECT_FALSE(p[3].projected);  // thread 2 launched nothing
}

TEST(ProjectRanges, CyclesHaveNoLevel) {
  auto p = ProjectRanges({{0, 10, 1}, {0, 10, 1}, {2, 3, 1}}, {{1, 2, 3, 5, 6, 1}});
  EXPECT_EQ(p[0].level, -1);
  EXPECT_EQ(p[1].level, -1);
  EXPECT_EQ(p[2].level, -1);  // its ancestors never reach a root
  EXPECT_EQ(p[2].launches, 1);
}

bool Same(const RangeProjection& a, const RangeProjection& b) {
  return a.projected == b.projected && a.launches == b.launches && a.level == b.level && a.children == b.children &&
         (!a.projected || (a.proj_start == b.proj_start && a.proj_end == b.proj_end));
}

// Random nested push/pop ranges, overlapping start/end ranges, identical ranges, shared starts
// and launches sharing correlation ids on a few threads: the sweep agrees with the reference.
TEST(ProjectRanges, SweepAgreesWithTheReference) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    std::vector<NvtxRange> ranges;
    std::vector<Launch> launches;
    for (int64_t tid = 1; tid <= 3; ++tid) {
      int n = static_cast<int>(pick(0, 25));
      for (int i = 0; i < n; ++i) {
        int64_t s = pick(0, 60) * 5, len = pick(0, 20) * 5;
        ranges.push_back({s, s + len, tid});
        if (pick(0, 6) == 0) ranges.push_back({s, s + len, tid});      // an identical twin
        if (pick(0, 6) == 0) ranges.push_back({s, s + len + 5, tid});  // the same start, longer
      }
      int m = static_cast<int>(pick(0, 30));
      for (int i = 0; i < m; ++i) {
        int64_t s = pick(0, 350), len = pick(0, 12);
        int64_t op = pick(400, 900);
        int64_t corr = pick(1, 15);
        launches.push_back({tid, s, s + len, op, op + pick(0, 50), corr});
        if (pick(0, 3) == 0) launches.push_back({tid, s + 1, s + len, op + 1, op + 60, corr});  // its driver call
      }
    }
    std::shuffle(ranges.begin(), ranges.end(), rng);
    auto want = ReferenceProjectRanges(ranges, launches);
    auto got = ProjectRanges(ranges, launches);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_TRUE(Same(got[i], want[i])) << "seed " << seed << " range " << i << " [" << ranges[i].start << ", "
                                         << ranges[i].end << "] on " << ranges[i].tid << ": level " << got[i].level
                                         << " vs " << want[i].level << ", children " << got[i].children << " vs "
                                         << want[i].children << ", launches " << got[i].launches << " vs "
                                         << want[i].launches;
    }
  }
}

// Mostly push/pop nesting (the projector's nested mode), now and then a range that crosses the
// open ones or a launch that outlives the innermost range (the general mode), on two threads:
// the sweep agrees with the reference through every switch between the modes.
TEST(ProjectRanges, NestedAndCrossingRangesAgreeWithTheReference) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    std::vector<NvtxRange> ranges;
    std::vector<Launch> launches;
    for (int64_t tid = 1; tid <= 2; ++tid) {
      std::vector<int64_t> stack;  // open pushes: their starts
      int64_t now = 0;
      for (int step = 0; step < 60; ++step) {
        now += pick(0, 3);
        int64_t what = pick(0, 9);
        if (what < 3) {
          stack.push_back(now);
        } else if (what < 6 && !stack.empty()) {
          ranges.push_back({stack.back(), now, tid});
          if (pick(0, 5) == 0) ranges.push_back({stack.back(), now, tid});  // an identical twin
          stack.pop_back();
        } else if (what < 9) {
          int64_t corr = pick(1, 6), op = pick(100, 200);
          launches.push_back({tid, now, now + pick(0, 2), op, op + pick(0, 20), corr});
          if (pick(0, 2) == 0) launches.push_back({tid, now, now + pick(0, 4), op + 1, op + 30, corr});
        } else {
          ranges.push_back({now, now + pick(0, 30), tid});  // crosses whatever is open
        }
      }
      while (!stack.empty()) {
        now += pick(0, 3);
        ranges.push_back({stack.back(), now, tid});
        stack.pop_back();
      }
    }
    std::shuffle(ranges.begin(), ranges.end(), rng);
    auto want = ReferenceProjectRanges(ranges, launches);
    auto got = ProjectRanges(ranges, launches);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_TRUE(Same(got[i], want[i])) << "seed " << seed << " range " << i << " [" << ranges[i].start << ", "
                                         << ranges[i].end << "] on " << ranges[i].tid << ": level " << got[i].level
                                         << " vs " << want[i].level << ", children " << got[i].children << " vs "
                                         << want[i].children << ", launches " << got[i].launches << " vs "
                                         << want[i].launches;
    }
  }
}

// Issue 19 row 4: 200 k properly nested ranges took over a minute (every launch and every
// opening scanned all the open ranges). Nested, each launch is folded into the innermost range
// and handed outwards as ranges close: this finishes at once, with every number as before.
TEST(NvtxProjector, TwoHundredThousandNestedRanges) {
  constexpr int64_t kDepth = 200'000;
  std::vector<RangeProjection> got(kDepth);
  NvtxProjector p([&](const ClosedRange& c) { got[c.seq] = c.proj; });
  // Range i is [i, 4 * kDepth - i]; a launch inside every tenth range, right after it opens
  // (op spans [10 i, 10 i + 5], correlation i), and one after the innermost closes.
  for (int64_t i = 0; i < kDepth; ++i) {
    p.Range(1, i, 4 * kDepth - i, 0, static_cast<uint64_t>(i));
    if (i % 10 == 0) p.Launch(1, i, i, i, 10 * i, 10 * i + 5);
  }
  p.Launch(1, 3 * kDepth, 3 * kDepth + 1, kDepth, 7, 8);
  p.Finish();
  EXPECT_TRUE(p.in_order());
  for (int64_t i : {int64_t{0}, int64_t{1}, int64_t{10}, int64_t{12345}, kDepth - 11, kDepth - 1}) {
    const RangeProjection& r = got[static_cast<size_t>(i)];
    ASSERT_TRUE(r.projected) << i;
    const int64_t first = (i + 9) / 10 * 10;  // the first launch inside range i
    EXPECT_EQ(r.proj_start, std::min<int64_t>(7, 10 * first)) << i;
    EXPECT_EQ(r.proj_end, first < kDepth ? 10 * ((kDepth - 1) / 10 * 10) + 5 : 8) << i;
    EXPECT_EQ(r.launches, (kDepth - first + 9) / 10 + 1) << i;
    EXPECT_EQ(r.level, i) << i;
    EXPECT_EQ(r.children, i + 1 < kDepth ? 1 : 0) << i;
  }
}

// Issue 39 item 4: one range that crosses a deep nest turned the thread to the general mode, where
// every opening and closing scanned all the open ranges: 200 k nested ranges under a crossing one
// took 2.5 min in stats nvtx_gpu_proj_sum, a staircase of 200 k overlapping ranges as long.
// Parents come from the ranges that can still be one, closings in end order: O(log n) each.
TEST(NvtxProjector, TwoHundredThousandRangesInTheGeneralMode) {
  constexpr int64_t kN = 200'000;
  std::vector<RangeProjection> got(2 * kN + 1);
  NvtxProjector p([&](const ClosedRange& c) { got[c.seq] = c.proj; });
  p.Range(1, 0, 10, 0, 2 * kN);  // crossed by all below: the thread is general from range 1 on
  for (int64_t i = 0; i < kN; ++i) p.Range(1, 1 + i, 4 * kN - i, 0, static_cast<uint64_t>(i));
  // A staircase on a second thread: each range crosses the 999 before it.
  for (int64_t i = 0; i < kN; ++i) p.Range(2, i, i + 1000, 0, static_cast<uint64_t>(kN + i));
  p.Launch(1, 3 * kN, 3 * kN + 1, 1, 7, 8);
  p.Finish();
  EXPECT_TRUE(p.in_order());
  EXPECT_EQ(got[2 * kN].level, 0);
  for (int64_t i : {int64_t{0}, int64_t{1}, int64_t{12345}, kN - 1}) {
    EXPECT_EQ(got[static_cast<size_t>(i)].level, i) << i;  // nested in one another, not in the crossing one
    EXPECT_TRUE(got[static_cast<size_t>(i)].projected) << i;
    EXPECT_EQ(got[static_cast<size_t>(i)].children, i + 1 < kN ? 1 : 0) << i;
  }
  for (int64_t i : {int64_t{0}, int64_t{999}, int64_t{1000}, kN - 1}) {
    EXPECT_EQ(got[static_cast<size_t>(kN + i)].level, 0) << i;  // no step contains another
  }
}

TEST(NvtxProjector, HoldsOnlyTheOpenRanges) {
  int64_t closed = 0, projected = 0;
  NvtxProjector p([&](const ClosedRange& c) {
    ++closed;
    projected += c.proj.projected;
    EXPECT_EQ(c.proj.level, c.group);  // the group says the expected level here
  });
  for (int64_t i = 0; i < 100'000; ++i) {
    int64_t t = i * 100;
    p.Range(7, t, t + 90, 0, 2 * i);           // an iteration
    p.Range(7, t + 10, t + 50, 1, 2 * i + 1);  // a module inside it
    p.Launch(7, t + 20, t + 30, i + 1, t + 1000, t + 1500);
  }
  p.Finish();
  EXPECT_EQ(closed, 200'000);
  EXPECT_EQ(projected, 200'000);
  EXPECT_LE(p.max_open(), 3u);
  EXPECT_TRUE(p.in_order());
}

TEST(NvtxProjector, SaysWhenCallsComeOutOfTimeOrder) {
  NvtxProjector p([](const ClosedRange&) {});
  p.Range(1, 100, 200, 0, 0);
  p.Range(2, 50, 60, 0, 1);  // another thread: any order
  EXPECT_TRUE(p.in_order());
  p.Launch(1, 90, 95, 1, 0, 1);
  EXPECT_FALSE(p.in_order());
}

TEST(LaunchSpans, SpanOfTheOpsOfEachLaunch) {
  LaunchSpans s;
  const int64_t p1 = (int64_t{1} << 48) | (int64_t{100} << 24), p2 = (int64_t{1} << 48) | (int64_t{200} << 24);
  s.Reserve(8);
  s.Add(p1, 5, 1000, 1100);
  s.Add(p2, 5, 2000, 2100);  // the same id in another process
  s.Add(p1, 6, 1200, 1300);
  s.Add(p1, 5, 1050, 1400);           // a second op of launch 5 (a graph launch)
  s.Add(p1, 7, -50, 10);              // before the session's start
  s.Add(p1, int64_t{1} << 33, 1, 2);  // an id wider than CUPTI's: kept aside
  s.Add(p1, 8, 0, int64_t{1} << 40);  // a span wider than 32 bits: kept aside
  s.Finish();
  int64_t a, b;
  ASSERT_TRUE(s.Find(p1, 5, &a, &b));
  EXPECT_EQ(a, 1000);
  EXPECT_EQ(b, 1400);
  ASSERT_TRUE(s.Find(p2, 5, &a, &b));
  EXPECT_EQ(a, 2000);
  EXPECT_EQ(b, 2100);
  ASSERT_TRUE(s.Find(p1, 7, &a, &b));
  EXPECT_EQ(a, -50);
  EXPECT_EQ(b, 10);
  ASSERT_TRUE(s.Find(p1, int64_t{1} << 33, &a, &b));
  EXPECT_EQ(b, 2);
  ASSERT_TRUE(s.Find(p1, 8, &a, &b));
  EXPECT_EQ(b, int64_t{1} << 40);
  EXPECT_FALSE(s.Find(p1, 9, &a, &b));
  EXPECT_FALSE(s.Find(p2, 6, &a, &b));
  EXPECT_FALSE(s.Find(12345, 5, &a, &b));
}

}  // namespace
}  // namespace cpprof::analysis
