// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/intervals.h"

#include <algorithm>

namespace cpprof::analysis {

void SortByStart(std::vector<Interval>& v) {
  auto less = [](const Interval& a, const Interval& b) {
    return a.start < b.start || (a.start == b.start && a.end < b.end);
  };
  if (!std::is_sorted(v.begin(), v.end(), less)) std::sort(v.begin(), v.end(), less);
}

void UnionBuilder::Add(const Interval& iv) {
  if (iv.end <= iv.start) return;
  if (!open_) {
    cur_ = iv;
    open_ = true;
    return;
  }
  if (iv.start <= cur_.end) {  // overlapping or touching: extend
    if (iv.end > cur_.end) cur_.end = iv.end;
    return;
  }
  out_.push_back(cur_);
  closed_length_ += cur_.end - cur_.start;
  cur_ = iv;
}

Segments UnionBuilder::Finish() {
  if (open_) {
    out_.push_back(cur_);
    open_ = false;
  }
  closed_length_ = 0;
  Segments out;
  out.swap(out_);
  return out;
}

Segments UnionSorted(std::span<const Interval> sorted) {
  UnionBuilder b;
  for (const auto& iv : sorted) b.Add(iv);
  return b.Finish();
}

Segments Union(std::vector<Interval> intervals) {
  SortByStart(intervals);
  return UnionSorted(intervals);
}

Segments UnionOf(std::span<const Segments* const> lists) {
  std::vector<Interval> all;
  size_t n = 0;
  for (const auto* l : lists) n += l->size();
  all.reserve(n);
  for (const auto* l : lists) all.insert(all.end(), l->begin(), l->end());
  return Union(std::move(all));
}

int64_t Length(const Segments& s) {
  int64_t total = 0;
  for (const auto& iv : s) total += iv.length();
  return total;
}

template <typename Emit>
static void ForEachIntersection(const Segments& a, const Segments& b, Emit emit) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].start, b[j].start);
    int64_t hi = std::min(a[i].end, b[j].end);
    if (lo < hi) emit(Interval{lo, hi});
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
}

Segments Intersect(const Segments& a, const Segments& b) {
  Segments out;
  ForEachIntersection(a, b, [&](const Interval& iv) { out.push_back(iv); });
  return out;
}

int64_t IntersectionLength(const Segments& a, const Segments& b) {
  int64_t total = 0;
  ForEachIntersection(a, b, [&](const Interval& iv) { total += iv.length(); });
  return total;
}

Segments Subtract(const Segments& a, const Segments& b) {
  Segments out;
  size_t j = 0;
  for (const auto& seg : a) {
    int64_t cur = seg.start;
    while (j < b.size() && b[j].end <= cur) ++j;
    size_t k = j;
    while (k < b.size() && b[k].start < seg.end) {
      if (b[k].start > cur) out.push_back({cur, b[k].start});
      cur = std::max(cur, b[k].end);
      if (cur >= seg.end) break;
      ++k;
    }
    if (cur < seg.end) out.push_back({cur, seg.end});
  }
  return out;
}

int64_t LengthWithin(const Segments& s, const Interval& w) {
  auto it = std::lower_bound(s.begin(), s.end(), w.start, [](const Interval& iv, int64_t t) { return iv.end <= t; });
  int64_t total = 0;
  for (; it != s.end() && it->start < w.end; ++it) {
    total += std::max<int64_t>(0, std::min(it->end, w.end) - std::max(it->start, w.start));
  }
  return total;
}

}  // namespace cpprof::analysis
