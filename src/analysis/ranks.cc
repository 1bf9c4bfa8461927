// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>

#include "base/regex.h"

namespace cpprof::analysis {

namespace {

// The launched command without the arguments that differ by rank or node (--node-rank 1,
// --node_rank=1, --rank=3): what every export of one run shares.
std::string RunCommand(const model::CaptureInfo& c) {
  static const RE2 rank_flag(R"(--?(?:node[-_]rank|rank|local[-_]rank|machine[-_]rank)(=.*)?)");
  std::string out = c.command;
  bool skip_value = false;
  for (const auto& a : c.arguments) {
    if (skip_value) {
      skip_value = false;
      continue;
    }
    std::string value;
    if (RE2::FullMatch(a, rank_flag, &value)) {
      skip_value = value.empty();
      continue;
    }
    out += ' ' + a;
  }
  return out;
}

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

Status CheckSameRun(const std::vector<const model::CaptureInfo*>& captures, const std::vector<std::string>& names,
                    bool force) {
  if (force || captures.size() < 2) return OkStatus();
  const model::CaptureInfo& first = *captures[0];
  const std::string command = RunCommand(first);
  for (size_t e = 1; e < captures.size(); ++e) {
    const model::CaptureInfo& c = *captures[e];
    if (first.recorded && c.recorded && RunCommand(c) != command) {
      return Status(ExitCode::kUsage,
                    fmt::format("'{}' and '{}' are not from one run: they profiled different commands ('{}' and "
                                "'{}'; rank and node-rank flags aside). Give the exports of one run, or --force",
                                names[0], names[e], command, RunCommand(c)));
    }
    if (first.utc_start_ns > 0 && c.utc_start_ns > 0) {
      int64_t apart = std::abs(c.utc_start_ns - first.utc_start_ns);
      if (apart > kMaxRunStartSpreadNs) {
        return Status(
            ExitCode::kUsage,
            fmt::format("'{}' and '{}' are not from one run: their captures started {:.0f} s apart (more "
                        "than {} s). Give the exports of one run, or --force",
                        names[0], names[e], static_cast<double>(apart) / 1e9, kMaxRunStartSpreadNs / 1'000'000'000));
      }
    }
  }
  return OkStatus();
}

RankAssignment AssignRunRanks(const std::vector<model::GpuProcess>& procs, const std::map<int64_t, NcclRankInfo>& nccl,
                              const std::vector<size_t>& export_of_process,
                              const std::vector<const model::CaptureInfo*>& captures) {
  RankAssignment ranks = AssignRanks(procs, nccl);
  if (captures.size() < 2 || ranks.method.rfind("NCCL", 0) == 0) return ranks;
  // RANK (torchrun, one nsys per rank) on exports of one GPU process each.
  std::vector<int64_t> env_rank(procs.size(), -1), node(procs.size(), -1);
  std::map<size_t, int> procs_in_export;
  for (size_t p = 0; p < procs.size(); ++p) ++procs_in_export[export_of_process[p]];
  bool all_rank = true, all_node = true;
  std::set<int64_t> seen;
  for (size_t p = 0; p < procs.size(); ++p) {
    const model::CaptureInfo& c = *captures[export_of_process[p]];
    int64_t r = c.EnvInt("RANK");
    if (r < 0) r = c.EnvInt("SLURM_PROCID");
    if (procs_in_export[export_of_process[p]] != 1 || r < 0 || !seen.insert(r).second) all_rank = false;
    env_rank[p] = r;
    int64_t n = c.EnvInt("NODE_RANK");
    if (n < 0) n = c.EnvInt("GROUP_RANK");
    if (n < 0) n = c.EnvInt("SLURM_NODEID");
    if (n < 0) all_node = false;
    node[p] = n;
  }
  std::vector<size_t> order(procs.size());
  std::iota(order.begin(), order.end(), 0);
  auto host = [&](size_t p) -> const std::string& { return captures[export_of_process[p]]->host; };
  if (all_rank) {
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return env_rank[a] < env_rank[b]; });
    ranks.method = "the launcher's RANK (or SLURM_PROCID) recorded in each export";
  } else {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (all_node && node[a] != node[b]) return node[a] < node[b];
      if (!all_node && host(a) != host(b)) return host(a) < host(b);
      if (export_of_process[a] != export_of_process[b]) return export_of_process[a] < export_of_process[b];
      int da = procs[a].MainDevice(), db = procs[b].MainDevice();
      return da != db ? da < db : procs[a].pid < procs[b].pid;
    });
    ranks.method = all_node ? "the launcher's NODE_RANK (GROUP_RANK, SLURM_NODEID) recorded in each export, then "
                              "device order"
                            : "host name, export and device order (no NCCL rank payloads or launcher rank variables)";
  }
  ranks.process_of_rank = order;
  ranks.world_size = static_cast<int>(procs.size());
  ranks.notes.clear();
  return ranks;
}

}  // namespace cpprof::analysis
