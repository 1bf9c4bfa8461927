// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Interval algebra over GPU time: unions ("busy"), intersections ("overlap") and their lengths.
// Times are nanoseconds (int64). An Interval is half-open [start, end); empty and inverted
// intervals contribute nothing. A Segments list is sorted, disjoint and non-touching.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/interval.h"

namespace cpprof::analysis {

using model::Interval;
using model::Segments;

// Sorts by start (then end) unless already sorted; most exports list kernels nearly in time
// order, so the check usually saves the sort.
void SortByStart(std::vector<Interval>& v);

// Builds a union from intervals fed in non-decreasing start order (streaming, O(1) per add).
class UnionBuilder {
 public:
  void Add(const Interval& iv);
  // The finished union; the builder is left empty.
  Segments Finish();
  // Total length of everything added so far (valid at any time).
  int64_t length() const { return closed_length_ + (open_ ? cur_.end - cur_.start : 0); }

 private:
  Segments out_;
  Interval cur_{};
  bool open_ = false;
  int64_t closed_length_ = 0;
};

// The length of a union, fed in non-decreasing start order, in O(1) memory.
class UnionLength {
 public:
  void Add(int64_t start, int64_t end) {
    if (end <= start) return;
    if (!open_) {
      cur_start_ = start, cur_end_ = end, open_ = true;
    } else if (start <= cur_end_) {
      if (end > cur_end_) cur_end_ = end;
    } else {
      closed_ += cur_end_ - cur_start_;
      cur_start_ = start, cur_end_ = end;
    }
  }
  int64_t length() const { return closed_ + (open_ ? cur_end_ - cur_start_ : 0); }

 private:
  int64_t cur_start_ = 0, cur_end_ = 0, closed_ = 0;
  bool open_ = false;
};

// Union of intervals in any order (sorts a copy).
Segments Union(std::vector<Interval> intervals);
// Union of intervals already sorted by start.
Segments UnionSorted(std::span<const Interval> sorted);
// Union of several segment lists.
Segments UnionOf(std::span<const Segments* const> lists);

int64_t Length(const Segments& s);
Segments Intersect(const Segments& a, const Segments& b);
int64_t IntersectionLength(const Segments& a, const Segments& b);
// Parts of `a` not covered by `b`.
Segments Subtract(const Segments& a, const Segments& b);
// Length of the part of `s` inside the window [w.start, w.end).
int64_t LengthWithin(const Segments& s, const Interval& w);

}  // namespace cpprof::analysis
