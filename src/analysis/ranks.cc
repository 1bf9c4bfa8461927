#include "analysis/ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace cpprof::analysis {

namespace {

template <typename Process>
RankAssignment Assign(const std::vector<Process>& procs, const std::map<int64_t, NcclRankInfo>& nccl) {
  RankAssignment out;
  std::vector<size_t> idx(procs.size());
  std::iota(idx.begin(), idx.end(), 0);

  // NCCL payloads, when they cover every GPU process with distinct ranks.
  bool all = !procs.empty();
  std::set<int> seen;
  int nranks = 0;
  for (const auto& p : procs) {
    auto it = nccl.find(p.global_pid);
    if (it == nccl.end() || it->second.rank < 0 || !seen.insert(it->second.rank).second) {
      all = false;
      break;
    }
    nranks = std::max(nranks, it->second.nranks);
  }
  if (all) {
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      return nccl.at(procs[a].global_pid).rank < nccl.at(procs[b].global_pid).rank;
    });
    out.process_of_rank = idx;
    out.world_size = std::max<int>(nranks, static_cast<int>(procs.size()));
    out.method = "NCCL NVTX payloads (ncclCommInitRank: Rank, No. of ranks)";
    if (nranks != static_cast<int>(procs.size())) {
      out.notes.push_back(
          fmt::format("NCCL reports {} ranks but the export holds GPU work of {} "
                      "processes: a multi-node run profiled on one node?",
                      nranks, procs.size()));
    }
    return out;
  }

  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    int da = procs[a].MainDevice(), db = procs[b].MainDevice();
    return da != db ? da < db : procs[a].pid < procs[b].pid;
  });
  out.process_of_rank = idx;
  out.world_size = static_cast<int>(procs.size());
  out.method = nccl.empty() ? "device order (the export has no NCCL rank payloads)"
                            : "device order (NCCL rank payloads did not cover every GPU process)";
  // Two processes on one device cannot both be "rank by device": say so.
  std::map<int, int> per_device;
  for (const auto& p : procs) ++per_device[p.MainDevice()];
  for (const auto& [dev, n] : per_device) {
    if (n > 1) {
      out.notes.push_back(fmt::format("{} processes ran on device {}; their ranks follow pid order", n, dev));
    }
  }
  return out;
}

}  // namespace

RankAssignment AssignRanks(const model::GpuWork& work, const std::map<int64_t, NcclRankInfo>& nccl) {
  return Assign(work.processes, nccl);
}

RankAssignment AssignRanks(const std::vector<model::GpuProcess>& processes,
                           const std::map<int64_t, NcclRankInfo>& nccl) {
  return Assign(processes, nccl);
}

}  // namespace cpprof::analysis
