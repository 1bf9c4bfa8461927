// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// What NCCL says about a process in its own NVTX payloads.
#pragma once

namespace cpprof::model {

struct NcclRankInfo {
  int rank = -1;
  int nranks = 0;
  int cuda_device = -1;
};

}  // namespace cpprof::model
