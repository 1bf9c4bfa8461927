// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/timeline.h"

#include <algorithm>
#include <limits>

#include "analysis/op_sweep.h"
#include "base/saturating.h"

namespace cpprof::analysis {

using model::OpClass;

namespace {

constexpr int64_t kNone = std::numeric_limits<int64_t>::min();

// One lane of one rank. Ops come by start; overlapping ops are merged into intervals. Counting
// only (bins == nullptr), exact (an interval is a bin) or binned (intervals are cut at the
// boundaries of fixed time slices; a slice is a bin).
class LaneBuilder {
 public:
  LaneBuilder(const model::TimelineLane& lane, int64_t first, int64_t slice_ns, int max_bins)
      : classes_(lane.classes), first_(first), slice_ns_(slice_ns), max_bins_(max_bins) {}

  // Pass 2: keep bins, downsampled or not.
  void Keep(bool downsample) {
    keep_ = true;
    downsample_ = downsample;
    if (downsample) {
      slices_.assign(static_cast<size_t>(max_bins_), Slice{});
      if (classes_.size() > 1) slice_class_ns_.assign(static_cast<size_t>(max_bins_) * classes_.size(), 0);
    }
  }

  void Add(const SweptOp& op) {
    ++ops_;
    if (op.end <= op.start) return;  // zero-length ops add no time
    if (open_ && op.start <= end_) {
      end_ = std::max(end_, op.end);
    } else {
      Close();
      open_ = true;
      start_ = op.start;
      end_ = op.end;
    }
    if (!keep_) return;
    const int64_t d = op.end - op.start;
    if (!downsample_) {
      SatAdd(class_ns_[static_cast<int>(op.cls)], d);
    } else if (classes_.size() > 1) {
      size_t k = ClassIndex(op.cls);
      ForSlices(op.start, op.end,
                [&](size_t b, int64_t s, int64_t e) { slice_class_ns_[b * classes_.size() + k] += e - s; });
    }
  }

  void Finish(model::RankLane& out) {
    Close();
    out.ops = ops_;
    out.union_ns = union_ns_;
    out.intervals = intervals_;
    out.downsampled = downsample_;
    out.bin_ns = downsample_ ? slice_ns_ : 0;
    if (!keep_) return;
    if (!downsample_) {
      out.bins = std::move(bins_);
      return;
    }
    for (size_t b = 0; b < slices_.size(); ++b) {
      const Slice& s = slices_[b];
      if (s.busy == 0) continue;
      OpClass cls = classes_.front();
      if (classes_.size() > 1) {
        int64_t best = -1;
        for (size_t k = 0; k < classes_.size(); ++k) {
          int64_t v = slice_class_ns_[b * classes_.size() + k];
          if (v > best) best = v, cls = classes_[k];
        }
      }
      out.bins.push_back({s.start, s.end, s.busy, cls});
    }
  }

  int64_t intervals() const { return intervals_ + (open_ ? 1 : 0); }

 private:
  struct Slice {
    int64_t start = std::numeric_limits<int64_t>::max(), end = kNone, busy = 0;
  };

  size_t ClassIndex(OpClass c) const {
    for (size_t k = 0; k < classes_.size(); ++k) {
      if (classes_[k] == c) return k;
    }
    return 0;
  }

  // fn(slice, piece start, piece end) for each time slice that [s, e) touches (e > s).
  template <typename F>
  void ForSlices(int64_t s, int64_t e, F fn) {
    int64_t b0 = (s - first_) / slice_ns_, b1 = (e - 1 - first_) / slice_ns_;
    b0 = std::clamp<int64_t>(b0, 0, max_bins_ - 1);
    b1 = std::clamp<int64_t>(b1, 0, max_bins_ - 1);
    for (int64_t b = b0; b <= b1; ++b) {
      int64_t lo = b == 0 ? s : std::max(s, first_ + b * slice_ns_);
      int64_t hi = b == max_bins_ - 1 ? e : std::min(e, first_ + (b + 1) * slice_ns_);
      if (hi > lo) fn(static_cast<size_t>(b), lo, hi);
    }
  }

  void Close() {
    if (!open_) return;
    open_ = false;
    ++intervals_;
    union_ns_ += end_ - start_;
    if (!keep_) return;
    if (!downsample_) {
      OpClass cls = classes_.front();
      int64_t best = -1;
      for (OpClass c : classes_) {
        if (class_ns_[static_cast<int>(c)] > best) best = class_ns_[static_cast<int>(c)], cls = c;
      }
      bins_.push_back({start_, end_, end_ - start_, cls});
      class_ns_.fill(0);
      return;
    }
    ForSlices(start_, end_, [&](size_t b, int64_t s, int64_t e) {
      Slice& sl = slices_[b];
      sl.start = std::min(sl.start, s);
      sl.end = std::max(sl.end, e);
      sl.busy += e - s;
    });
  }

  const std::vector<OpClass>& classes_;
  const int64_t first_, slice_ns_;
  const int max_bins_;
  bool keep_ = false, downsample_ = false;
  bool open_ = false;
  int64_t start_ = 0, end_ = 0;
  int64_t ops_ = 0, intervals_ = 0, union_ns_ = 0;
  std::array<int64_t, model::kNumOpClasses> class_ns_{};
  std::vector<model::TimelineBin> bins_;
  std::vector<Slice> slices_;
  std::vector<int64_t> slice_class_ns_;
};

// Module runs of one level: consecutive stretches of one row, clipped so they do not overlap.
class RunBuilder {
 public:
  explicit RunBuilder(int64_t gap) : gap_(gap) {}
  void Keep(std::vector<model::ModuleRun>* out) { out_ = out; }

  void Add(int row, int64_t s, int64_t e) {
    if (has_ && row == cur_.row && s <= cur_.end + gap_) {
      cur_.end = std::max(cur_.end, e);
      return;
    }
    Flush(s);
    has_ = true;
    cur_ = {s, e, row};
  }
  void Finish() { Flush(std::numeric_limits<int64_t>::max()); }
  int64_t count() const { return count_; }

 private:
  void Flush(int64_t next_start) {
    if (!has_) return;
    has_ = false;
    int64_t end = std::min(cur_.end, next_start);
    if (end <= cur_.start) return;
    ++count_;
    if (out_) out_->push_back({cur_.start, end, cur_.row});
  }

  const int64_t gap_;
  std::vector<model::ModuleRun>* out_ = nullptr;
  bool has_ = false;
  model::ModuleRun cur_;
  int64_t count_ = 0;
};

// Downsampled module runs: per time slice (of the op's start) the row with the most op time,
// spanning the slice's ops, fed to a RunBuilder (so neighbouring slices of one row join).
class SliceRuns {
 public:
  SliceRuns(RunBuilder& runs, int64_t first, int64_t slice_ns) : runs_(runs), first_(first), slice_ns_(slice_ns) {}
  void Add(int row, int64_t s, int64_t e) {
    int64_t b = (s - first_) / slice_ns_;
    if (b != slice_) Flush();
    slice_ = b;
    lo_ = std::min(lo_, s);
    hi_ = std::max(hi_, e);
    for (auto& [r, ns] : rows_) {
      if (r == row) {
        ns += e - s;
        return;
      }
    }
    rows_.push_back({row, e - s});
  }
  void Finish() {
    Flush();
    runs_.Finish();
  }

 private:
  void Flush() {
    if (rows_.empty()) return;
    auto best = rows_.front();
    for (const auto& p : rows_) {
      if (p.second > best.second || (p.second == best.second && p.first < best.first)) best = p;
    }
    runs_.Add(best.first, lo_, hi_);
    rows_.clear();
    lo_ = std::numeric_limits<int64_t>::max();
    hi_ = kNone;
  }

  RunBuilder& runs_;
  const int64_t first_, slice_ns_;
  int64_t slice_ = -1;
  int64_t lo_ = std::numeric_limits<int64_t>::max(), hi_ = kNone;
  std::vector<std::pair<int, int64_t>> rows_;
};

int RowOf(const std::vector<int>& rows, uint16_t node) { return node < rows.size() ? rows[node] : -1; }

}  // namespace

std::vector<model::TimelineLane> TimelineLanes(const std::vector<model::RankSummary>& ranks) {
  auto used = [&](OpClass c) {
    return std::any_of(ranks.begin(), ranks.end(),
                       [&](const model::RankSummary& s) { return s.classes[static_cast<int>(c)].instances > 0; });
  };
  std::vector<model::TimelineLane> lanes;
  model::TimelineLane compute{"compute", {}}, memory{"memcpy/memset", {}};
  for (int k = 0; k < model::kNumOpClasses; ++k) {
    auto c = static_cast<OpClass>(k);
    if (model::IsKernelCompute(c)) compute.classes.push_back(c);
    if (c == OpClass::kMemcpy || c == OpClass::kMemset) memory.classes.push_back(c);
  }
  if (std::any_of(compute.classes.begin(), compute.classes.end(), used)) lanes.push_back(compute);
  for (int k = 0; k < model::kNumOpClasses; ++k) {
    auto c = static_cast<OpClass>(k);
    if (model::IsComm(c) && used(c)) lanes.push_back({std::string(model::Name(c)), {c}});
  }
  if (std::any_of(memory.classes.begin(), memory.classes.end(), used)) lanes.push_back(memory);
  return lanes;
}

model::RankTimeline BuildRankTimeline(model::ProcessGpuWork& work, const TimelineInput& in) {
  model::RankTimeline out;
  const auto& lanes = *in.lanes;
  const int max_bins = std::max(1, in.max_bins);
  const int64_t span = std::max<int64_t>(0, in.last_end - in.first_start);
  const int64_t slice_ns = std::max<int64_t>(1, (span + max_bins - 1) / max_bins);
  out.bin_ns = slice_ns;

  std::array<int, model::kNumOpClasses> lane_of{};
  lane_of.fill(-1);
  for (size_t l = 0; l < lanes.size(); ++l) {
    for (OpClass c : lanes[l].classes) lane_of[static_cast<int>(c)] = static_cast<int>(l);
  }
  const bool modules = !in.level0_row.empty();

  // Pass 1: how many merged intervals and module runs there are.
  std::vector<LaneBuilder> count;
  for (const auto& l : lanes) count.emplace_back(l, in.first_start, slice_ns, max_bins);
  RunBuilder count_runs[2] = {RunBuilder(slice_ns), RunBuilder(slice_ns)};
  ForEachOpByStart(work, [&](const SweptOp& op) {
    int l = lane_of[static_cast<int>(op.cls)];
    if (l >= 0) count[l].Add(op);
    if (!modules || op.end <= op.start) return;
    int r0 = RowOf(in.level0_row, op.node), r1 = RowOf(in.level1_row, op.node);
    if (r0 >= 0) count_runs[0].Add(r0, op.start, op.end);
    if (r1 >= 0) count_runs[1].Add(r1, op.start, op.end);
  });
  for (auto& r : count_runs) r.Finish();

  // Pass 2: the bins, exact where they fit.
  std::vector<LaneBuilder> keep;
  for (size_t l = 0; l < lanes.size(); ++l) {
    keep.emplace_back(lanes[l], in.first_start, slice_ns, max_bins);
    keep.back().Keep(count[l].intervals() > max_bins);
  }
  RunBuilder runs[2] = {RunBuilder(slice_ns), RunBuilder(slice_ns)};
  std::vector<SliceRuns> sliced;
  for (int v = 0; v < 2; ++v) {
    out.module_run_count[v] = count_runs[v].count();
    out.modules_downsampled[v] = count_runs[v].count() > max_bins;
    runs[v].Keep(&out.module_runs[v]);
    sliced.emplace_back(runs[v], in.first_start, slice_ns);
  }
  ForEachOpByStart(work, [&](const SweptOp& op) {
    int l = lane_of[static_cast<int>(op.cls)];
    if (l >= 0) keep[l].Add(op);
    if (!modules || op.end <= op.start) return;
    int row[2] = {RowOf(in.level0_row, op.node), RowOf(in.level1_row, op.node)};
    for (int v = 0; v < 2; ++v) {
      if (row[v] < 0) continue;
      if (out.modules_downsampled[v]) {
        sliced[v].Add(row[v], op.start, op.end);
      } else {
        runs[v].Add(row[v], op.start, op.end);
      }
    }
  });
  for (int v = 0; v < 2; ++v) {
    if (out.modules_downsampled[v]) {
      sliced[v].Finish();
    } else {
      runs[v].Finish();
    }
  }
  for (size_t l = 0; l < lanes.size(); ++l) {
    model::RankLane rl;
    rl.lane = static_cast<int>(l);
    keep[l].Finish(rl);
    if (rl.ops > 0) out.lanes.push_back(std::move(rl));
  }
  return out;
}

}  // namespace cpprof::analysis
