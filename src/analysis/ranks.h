// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Which process is which CP rank, and which exports are of one run: the run's rank policy, the
// same for one export, several exports (one nsys per rank or per node) and merged partials.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/capture.h"
#include "model/gpu_work.h"
#include "model/nccl.h"

namespace cpprof::analysis {

using model::NcclRankInfo;

struct RankAssignment {
  std::vector<size_t> process_of_rank;  // rank -> index into GpuWork::processes
  int world_size = 0;
  std::string method;  // said in the output
  std::vector<std::string> notes;
};

// Every process with GPU work becomes a rank. Ranks come from NCCL's payloads when every such
// process has one (keyed by globalPid), otherwise from device order (then pid).
// process_of_rank indexes `work.processes` or `processes`.
RankAssignment AssignRanks(const model::GpuWork& work, const std::map<int64_t, NcclRankInfo>& nccl);
RankAssignment AssignRanks(const std::vector<model::GpuProcess>& processes,
                           const std::map<int64_t, NcclRankInfo>& nccl);

// Ranks over a run's processes (several exports): NCCL's payloads; else the launcher's rank
// variables each export recorded; else host, export and device order.
// `export_of_process[p]` indexes `captures`. One export: AssignRanks.
RankAssignment AssignRunRanks(const std::vector<model::GpuProcess>& processes,
                              const std::map<int64_t, NcclRankInfo>& nccl, const std::vector<size_t>& export_of_process,
                              const std::vector<const model::CaptureInfo*>& captures);

// Exports of one run whose captures started further apart than this are refused (without force).
inline constexpr int64_t kMaxRunStartSpreadNs = 600'000'000'000;  // 10 minutes

// Exports not from one run are refused (kUsage, unless `force`): another command (rank flags
// aside), session starts more than kMaxRunStartSpreadNs apart, captures that do not overlap in
// time (RUN_DURATION_MS), another launcher identity (TORCHELASTIC_RUN_ID, SLURM_JOB_ID,
// MASTER_ADDR, MASTER_PORT, WORLD_SIZE), or one capture given twice (the same content_id under
// two names). `names[i]` names captures[i].
Status CheckSameRun(const std::vector<const model::CaptureInfo*>& captures, const std::vector<std::string>& names,
                    bool force);

}  // namespace cpprof::analysis
