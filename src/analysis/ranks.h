// Which process is which CP rank.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

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

}  // namespace cpprof::analysis
