// Visits a process's GPU ops in start order without copying them: each chunk is sorted in place
// when out of order, consecutive chunks already in order among themselves form one run, and the
// runs (kernels, memcpys and memsets come as a few long runs) are merged.
#pragma once

#include <algorithm>
#include <cstddef>
#include <queue>
#include <vector>

#include "model/gpu_work.h"

namespace cpprof::analysis {

struct SweptOp {
  int64_t start, end;
  model::OpClass cls;
  uint8_t phase;  // model::Phase
  uint16_t node;  // module node
};

namespace op_sweep_detail {

// A run of chunks [chunk, last] whose ops are in start order across chunk boundaries.
struct RunCursor {
  const model::GpuOp* cur;
  const model::GpuOp* end;  // of the current chunk
  size_t chunk, last;
};

// Sorts out-of-order chunks and the long ops in place; returns the runs.
std::vector<RunCursor> PrepareRuns(model::ProcessGpuWork& w);

inline SweptOp Swept(const model::GpuOp& op) { return SweptOp{op.start, op.end(), op.cls, op.phase, op.node}; }
inline SweptOp Swept(const model::LongOp& op) { return SweptOp{op.iv.start, op.iv.end, op.cls, op.phase, op.node}; }

}  // namespace op_sweep_detail

// fn(op) for every op of `work`, by non-decreasing start (ties in no particular order; unions
// and sums do not depend on it). Sorts chunks in place when needed.
template <typename Fn>
void ForEachOpByStart(model::ProcessGpuWork& w, Fn&& fn) {
  using op_sweep_detail::RunCursor;
  using op_sweep_detail::Swept;
  std::vector<RunCursor> runs = op_sweep_detail::PrepareRuns(w);
  size_t li = 0;
  auto emit = [&](const model::GpuOp& op) {
    // Long ops (rare) are merged in as they come due.
    while (li < w.long_ops.size() && w.long_ops[li].iv.start <= op.start) fn(Swept(w.long_ops[li++]));
    fn(Swept(op));
  };
  // Advances a cursor past its current op; false when the run is exhausted.
  auto advance = [&](RunCursor& c) {
    if (++c.cur != c.end) return true;
    while (c.chunk < c.last) {
      auto ch = w.ops.chunk(++c.chunk);
      if (!ch.empty()) {
        c.cur = ch.data();
        c.end = ch.data() + ch.size();
        return true;
      }
    }
    return false;
  };
  auto later = [](const RunCursor& a, const RunCursor& b) { return a.cur->start > b.cur->start; };
  std::priority_queue<RunCursor, std::vector<RunCursor>, decltype(later)> heap(later, std::move(runs));
  while (!heap.empty()) {
    RunCursor c = heap.top();
    heap.pop();
    // Stay on this run while it is still the earliest: long streaks when runs come in blocks.
    bool more;
    do {
      emit(*c.cur);
      more = advance(c);
    } while (more && (heap.empty() || c.cur->start <= heap.top().cur->start));
    if (more) heap.push(c);
  }
  for (; li < w.long_ops.size(); ++li) fn(Swept(w.long_ops[li]));
}

}  // namespace cpprof::analysis
