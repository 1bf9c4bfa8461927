// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/op_sweep.h"

namespace cpprof::analysis::op_sweep_detail {

namespace {

bool ByStart(const model::GpuOp& a, const model::GpuOp& b) { return OpBefore(a, b); }

// Sorts a nearly sorted chunk (ops of one stream interleaved with a few of another) by insertion
// in O(n + moves). Gives up after `budget` moves, leaving the chunk a permutation of itself.
bool InsertionSort(std::span<model::GpuOp> ch, size_t budget) {
  size_t moves = 0;
  for (size_t i = 1; i < ch.size(); ++i) {
    if (!OpBefore(ch[i], ch[i - 1])) continue;
    model::GpuOp x = ch[i];
    size_t j = i;
    while (j > 0 && OpBefore(x, ch[j - 1])) {
      ch[j] = ch[j - 1];
      --j;
      if (++moves > budget) {
        ch[j] = x;
        return false;
      }
    }
    ch[j] = x;
  }
  return true;
}

}  // namespace

std::vector<RunCursor> PrepareRuns(model::ProcessGpuWork& w) {
  std::sort(w.long_ops.begin(), w.long_ops.end(),
            [](const model::LongOp& a, const model::LongOp& b) { return OpBefore(a, b); });
  std::vector<RunCursor> runs;
  model::GpuOp last{};
  for (size_t c = 0; c < w.ops.num_chunks(); ++c) {
    auto ch = w.ops.chunk(c);
    if (ch.empty()) continue;
    if (!InsertionSort(ch, 8 * ch.size())) std::sort(ch.begin(), ch.end(), ByStart);
    if (!runs.empty() && !OpBefore(ch.front(), last)) {
      runs.back().last = c;  // continues the run
    } else {
      runs.push_back({ch.data(), ch.data() + ch.size(), c, c});
    }
    last = ch.back();
  }
  return runs;
}

}  // namespace cpprof::analysis::op_sweep_detail
