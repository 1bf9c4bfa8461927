// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Tests only: a process's GPU work written as a list of ops, for the analysis unit tests.
#pragma once

#include <cstdint>
#include <vector>

#include "model/gpu_work.h"

namespace cpprof::analysis::test_ops {

struct Op {
  int64_t start, end;
  model::OpClass cls;
  uint16_t node = 0;
  uint8_t phase = 0;
};

// Ops longer than model::kMaxOpDuration go to long_ops, as the loader puts them.
inline model::ProcessGpuWork Work(const std::vector<Op>& ops) {
  model::ProcessGpuWork w;
  for (const auto& o : ops) {
    if (o.end - o.start > model::kMaxOpDuration) {
      w.long_ops.push_back({{o.start, o.end}, o.cls, o.phase, o.node});
    } else {
      w.ops.push_back({o.start, static_cast<uint32_t>(o.end - o.start), o.cls, o.phase, o.node});
    }
  }
  return w;
}

}  // namespace cpprof::analysis::test_ops
