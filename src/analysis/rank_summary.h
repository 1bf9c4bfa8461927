// Per-rank readout: span, busy, compute vs communication, time per class, top kernels.
#pragma once

#include <functional>
#include <string>

#include "model/gpu_work.h"
#include "model/report.h"

namespace cpprof::analysis {

// `kernel_name` maps a StringIds id to its name. `top` bounds top_kernels (0: all).
// May reorder the process's ops (chunks are sorted in place when they are out of order).
model::RankSummary SummarizeRank(model::ProcessGpuWork& work,
                                 const std::function<std::string(int64_t)>& kernel_name,
                                 const std::function<model::OpClass(int64_t)>& kernel_class,
                                 size_t top);

}  // namespace cpprof::analysis
