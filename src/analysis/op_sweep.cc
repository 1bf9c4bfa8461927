#include "analysis/op_sweep.h"

#include <algorithm>
#include <queue>

namespace cpprof::analysis {

using model::GpuOp;

namespace {

bool ByStart(const GpuOp& a, const GpuOp& b) { return a.start < b.start; }

bool InOrder(model::ProcessGpuWork& w) {
  int64_t last = INT64_MIN;
  for (size_t c = 0; c < w.ops.num_chunks(); ++c) {
    auto ch = w.ops.chunk(c);
    if (ch.empty()) continue;
    if (ch.front().start < last || !std::is_sorted(ch.begin(), ch.end(), ByStart)) return false;
    last = ch.back().start;
  }
  return true;
}

void EmitLong(const model::LongOp& op, const std::function<void(const SweptOp&)>& fn) {
  fn(SweptOp{op.iv.start, op.iv.end, op.cls, op.phase, op.node});
}

}  // namespace

void ForEachOpByStart(model::ProcessGpuWork& w, const std::function<void(const SweptOp&)>& fn) {
  std::sort(w.long_ops.begin(), w.long_ops.end(),
            [](const model::LongOp& a, const model::LongOp& b) { return a.iv.start < b.iv.start; });
  size_t li = 0;
  auto emit = [&](const GpuOp& op) {
    // Long ops (rare) are merged in as they come due.
    while (li < w.long_ops.size() && w.long_ops[li].iv.start <= op.start) {
      EmitLong(w.long_ops[li], fn);
      ++li;
    }
    fn(SweptOp{op.start, op.end(), op.cls, op.phase, op.node});
  };

  if (InOrder(w)) {
    for (size_t c = 0; c < w.ops.num_chunks(); ++c) {
      for (const auto& op : w.ops.chunk(c)) emit(op);
    }
  } else {
    // Sort each chunk, then merge them with a min-heap of chunk cursors.
    struct Cursor {
      const GpuOp* cur;
      const GpuOp* end;
    };
    auto later = [](const Cursor& a, const Cursor& b) { return a.cur->start > b.cur->start; };
    std::priority_queue<Cursor, std::vector<Cursor>, decltype(later)> heap(later);
    for (size_t c = 0; c < w.ops.num_chunks(); ++c) {
      auto ch = w.ops.chunk(c);
      if (ch.empty()) continue;
      if (!std::is_sorted(ch.begin(), ch.end(), ByStart)) std::sort(ch.begin(), ch.end(), ByStart);
      heap.push({ch.data(), ch.data() + ch.size()});
    }
    while (!heap.empty()) {
      Cursor c = heap.top();
      heap.pop();
      emit(*c.cur);
      if (++c.cur != c.end) heap.push(c);
    }
  }
  for (; li < w.long_ops.size(); ++li) EmitLong(w.long_ops[li], fn);
}

}  // namespace cpprof::analysis
