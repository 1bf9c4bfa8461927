// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Visits a process's GPU ops in start order without copying them: each chunk is sorted in place
// when out of order, consecutive chunks already in order among themselves form one run, and the
// runs (kernels, memcpys and memsets come as a few long runs) are merged. Ops that start together
// come in one order whatever the chunks (by end, class, phase, node: see OpBefore), so results
// that depend on it (which module a gap's idle goes to, how ops pair across ranks) do not change
// with the number of reading threads, or when a window is cut from ops already in memory.
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

// The order of the sweep: start, then end, class, phase and node (ops equal in all of them are
// interchangeable).
inline bool OpBefore(const model::GpuOp& a, const model::GpuOp& b) {
  if (a.start != b.start) return a.start < b.start;
  if (a.duration != b.duration) return a.duration < b.duration;
  if (a.cls != b.cls) return a.cls < b.cls;
  if (a.phase != b.phase) return a.phase < b.phase;
  return a.node < b.node;
}
inline bool OpBefore(const model::LongOp& a, const model::LongOp& b) {
  if (a.iv.start != b.iv.start) return a.iv.start < b.iv.start;
  if (a.iv.end != b.iv.end) return a.iv.end < b.iv.end;
  if (a.cls != b.cls) return a.cls < b.cls;
  if (a.phase != b.phase) return a.phase < b.phase;
  return a.node < b.node;
}

namespace op_sweep_detail {

// A run of chunks [chunk, last] whose ops are in start order across chunk boundaries.
struct RunCursor {
  const model::GpuOp* cur;
  const model::GpuOp* end;  // of the current chunk
  size_t chunk, last;
};

// Sorts out-of-order chunks and the long ops in place (ProcessGpuWork::op_hosts, when parallel to
// the ops, permuted alike); returns the runs.
std::vector<RunCursor> PrepareRuns(model::ProcessGpuWork& w);

inline SweptOp Swept(const model::GpuOp& op) { return SweptOp{op.start, op.end(), op.cls, op.phase, op.node}; }
inline SweptOp Swept(const model::LongOp& op) { return SweptOp{op.iv.start, op.iv.end, op.cls, op.phase, op.node}; }

}  // namespace op_sweep_detail

// fn(op) for every op of `work`, in OpBefore order (long ops before the other ops that start
// with them). Sorts chunks in place when needed.
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
  auto later = [](const RunCursor& a, const RunCursor& b) { return OpBefore(*b.cur, *a.cur); };
  std::priority_queue<RunCursor, std::vector<RunCursor>, decltype(later)> heap(later, std::move(runs));
  while (!heap.empty()) {
    RunCursor c = heap.top();
    heap.pop();
    // Stay on this run while it is still the earliest: long streaks when runs come in blocks.
    bool more;
    do {
      emit(*c.cur);
      more = advance(c);
    } while (more && (heap.empty() || !OpBefore(*heap.top().cur, *c.cur)));
    if (more) heap.push(c);
  }
  for (; li < w.long_ops.size(); ++li) fn(Swept(w.long_ops[li]));
}

}  // namespace cpprof::analysis
