// NVTX GPU projection, nsys's contract (nvtx_gpu_proj_sum): a GPU op belongs to every NVTX range
// on the same thread whose time contains the CUDA API call that launched it; a range's projected
// time runs from the first start to the last end of its ops. Ranges that end on another thread
// take no part. Each range's parent is the tightest range on its thread that contains it; its
// level is its depth in that tree; its children are the projected ranges whose parent it is.
#pragma once

#include <cstdint>
#include <vector>

namespace cpprof::analysis {

struct NvtxRange {
  int64_t start = 0, end = 0;
  int64_t tid = 0;  // globalTid
};

// One CUDA API call that launched GPU work, with the span of that work.
struct Launch {
  int64_t tid = 0;  // globalTid of the API call
  int64_t api_start = 0, api_end = 0;
  int64_t op_start = 0, op_end = 0;  // first start and last end of the ops it launched
  int64_t correlation = 0;  // a runtime call and the driver call inside it share one id
};

struct RangeProjection {
  bool projected = false;  // at least one GPU op
  int64_t proj_start = 0, proj_end = 0;
  int64_t launches = 0;  // distinct correlation ids whose ops it holds ("GPU ops" in nsys)
  int level = -1;        // depth in the parent tree; -1 when the tree has a cycle there
  int64_t children = 0;  // projected ranges whose parent this is
};

// Index i of the result describes ranges[i].
std::vector<RangeProjection> ProjectRanges(const std::vector<NvtxRange>& ranges,
                                           const std::vector<Launch>& launches);

// The tightest enclosing range on the same thread, per range (-1: none). Exposed for tests.
std::vector<int64_t> NvtxParents(const std::vector<NvtxRange>& ranges);

}  // namespace cpprof::analysis
