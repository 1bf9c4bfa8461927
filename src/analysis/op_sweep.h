// Visits a process's GPU ops in start order without copying them: chunks already in order are
// read straight through; otherwise each chunk is sorted in place and the chunks are merged.
#pragma once

#include <functional>

#include "model/gpu_work.h"

namespace cpprof::analysis {

// fn(start, end, cls) for every op of `work`, by non-decreasing start (ties: shorter first is
// not guaranteed; unions and sums do not depend on it). Sorts chunks in place when needed.
void ForEachOpByStart(model::ProcessGpuWork& work,
                      const std::function<void(int64_t, int64_t, model::OpClass)>& fn);

}  // namespace cpprof::analysis
