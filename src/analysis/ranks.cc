// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <string_view>

#include "base/regex.h"
#include "base/saturating.h"

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

namespace {

// The launcher's identity of the run an export belongs to: variables every rank of one run shares.
constexpr const char* kRunIdentityVars[] = {"TORCHELASTIC_RUN_ID", "SLURM_JOB_ID", "MASTER_ADDR", "MASTER_PORT",
                                            "WORLD_SIZE"};

const std::string* EnvValue(const model::CaptureInfo& c, std::string_view name) {
  for (const auto& [k, v] : c.env) {
    if (k == name) return &v;
  }
  return nullptr;
}

Status NotOneRun(const std::string& a, const std::string& b, const std::string& why) {
  return Status(ExitCode::kUsage, fmt::format("'{}' and '{}' are not from one run: {}. Give the exports of one run, "
                                              "or --force",
                                              a, b, why));
}

// Why captures `a` and `b` are not of one run ("" when they may be): another command, starts far
// apart, capture times that do not overlap, another launcher identity.
std::string OtherRun(const model::CaptureInfo& a, const model::CaptureInfo& b) {
  if (a.recorded && b.recorded && RunCommand(a) != RunCommand(b)) {
    return fmt::format("they profiled different commands ('{}' and '{}'; rank and node-rank flags aside)",
                       RunCommand(a), RunCommand(b));
  }
  if (a.utc_start_ns > 0 && b.utc_start_ns > 0) {
    const int64_t apart = std::abs(SatSum(b.utc_start_ns, -a.utc_start_ns));
    if (apart > kMaxRunStartSpreadNs) {
      return fmt::format("their captures started {:.0f} s apart (more than {} s)", static_cast<double>(apart) / 1e9,
                         kMaxRunStartSpreadNs / 1'000'000'000);
    }
    // Each capture's span, with a second's slack for the hosts' clocks.
    if (a.run_duration_ms > 0 && b.run_duration_ms > 0) {
      constexpr int64_t kMaxMs = 1'000'000'000'000;  // 31 years: the product below fits
      const int64_t a_end = SatSum(a.utc_start_ns, std::min(a.run_duration_ms, kMaxMs) * 1'000'000 + 1'000'000'000);
      const int64_t b_end = SatSum(b.utc_start_ns, std::min(b.run_duration_ms, kMaxMs) * 1'000'000 + 1'000'000'000);
      if (a_end < b.utc_start_ns || b_end < a.utc_start_ns) {
        return fmt::format(
            "their captures do not overlap in time (one ran {:.1f} s, the other {:.1f} s, and they "
            "started {:.1f} s apart)",
            a.run_duration_ms / 1e3, b.run_duration_ms / 1e3, static_cast<double>(apart) / 1e9);
      }
    }
  }
  for (const char* var : kRunIdentityVars) {
    const std::string *va = EnvValue(a, var), *vb = EnvValue(b, var);
    if (va && vb && *va != *vb) {
      return fmt::format("the launcher's {} differs ({} and {})", var, *va, *vb);
    }
  }
  return "";
}

}  // namespace

Status CheckSameRun(const std::vector<const model::CaptureInfo*>& captures, const std::vector<std::string>& names,
                    bool force) {
  if (force || captures.size() < 2) return OkStatus();
  for (size_t e = 1; e < captures.size(); ++e) {
    if (std::string why = OtherRun(*captures[0], *captures[e]); !why.empty()) {
      return NotOneRun(names[0], names[e], why);
    }
  }
  std::map<std::string, size_t> by_content;  // content id -> the first export with it
  for (size_t e = 0; e < captures.size(); ++e) {
    if (captures[e]->content_id.empty()) continue;
    auto [at, added] = by_content.emplace(captures[e]->content_id, e);
    if (!added) {
      return Status(ExitCode::kUsage,
                    fmt::format("'{}' and '{}' are the same capture (the same content under two names): give each "
                                "export of the run once, or --force",
                                names[at->second], names[e]));
    }
  }
  return OkStatus();
}

namespace {

// The launcher's WORLD_SIZE, the same in every export, above the ranks found: an export missing.
void AddMissingRankNote(const std::vector<const model::CaptureInfo*>& captures, RankAssignment& ranks) {
  int64_t world = -1;
  for (const model::CaptureInfo* c : captures) {
    const int64_t w = c->EnvInt("WORLD_SIZE");
    if (w < 0 || (world >= 0 && w != world)) return;
    world = w;
  }
  if (world > ranks.world_size) {
    ranks.notes.push_back(
        fmt::format("the launcher's WORLD_SIZE is {}, but the exports hold {} rank{}: the exports "
                    "of {} rank{} are missing, and the readout covers the ranks given",
                    world, ranks.world_size, ranks.world_size == 1 ? "" : "s", world - ranks.world_size,
                    world - ranks.world_size == 1 ? "" : "s"));
  }
}

}  // namespace

RankAssignment AssignRunRanks(const std::vector<model::GpuProcess>& procs, const std::map<int64_t, NcclRankInfo>& nccl,
                              const std::vector<size_t>& export_of_process,
                              const std::vector<const model::CaptureInfo*>& captures) {
  RankAssignment ranks = AssignRanks(procs, nccl);
  if (captures.size() < 2 || ranks.method.rfind("NCCL", 0) == 0) {
    AddMissingRankNote(captures, ranks);
    return ranks;
  }
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
  AddMissingRankNote(captures, ranks);
  return ranks;
}

}  // namespace cpprof::analysis
