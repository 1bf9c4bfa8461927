// Visits a process's GPU ops in start order without copying them: chunks already in order are
// read straight through; otherwise each chunk is sorted in place and the chunks are merged.
#pragma once

#include <functional>

#include "model/gpu_work.h"

namespace cpprof::analysis {

struct SweptOp {
  int64_t start, end;
  model::OpClass cls;
  uint8_t phase;  // model::Phase
  uint16_t node;  // module node
};

// fn(op) for every op of `work`, by non-decreasing start (ties: shorter first is not
// guaranteed; unions and sums do not depend on it). Sorts chunks in place when needed.
void ForEachOpByStart(model::ProcessGpuWork& work, const std::function<void(const SweptOp&)>& fn);

}  // namespace cpprof::analysis
