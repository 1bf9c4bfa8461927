#include "analysis/op_sweep.h"

namespace cpprof::analysis::op_sweep_detail {

namespace {
bool ByStart(const model::GpuOp& a, const model::GpuOp& b) { return a.start < b.start; }
}  // namespace

std::vector<RunCursor> PrepareRuns(model::ProcessGpuWork& w) {
  std::sort(w.long_ops.begin(), w.long_ops.end(),
            [](const model::LongOp& a, const model::LongOp& b) { return a.iv.start < b.iv.start; });
  std::vector<RunCursor> runs;
  int64_t last_start = 0;
  for (size_t c = 0; c < w.ops.num_chunks(); ++c) {
    auto ch = w.ops.chunk(c);
    if (ch.empty()) continue;
    if (!std::is_sorted(ch.begin(), ch.end(), ByStart)) std::sort(ch.begin(), ch.end(), ByStart);
    if (!runs.empty() && ch.front().start >= last_start) {
      runs.back().last = c;  // continues the run
    } else {
      runs.push_back({ch.data(), ch.data() + ch.size(), c, c});
    }
    last_start = ch.back().start;
  }
  return runs;
}

}  // namespace cpprof::analysis::op_sweep_detail
