// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/divergence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cpprof::analysis {

namespace {

// The side of a square world (2 for 4 ranks); 0 when the world is not a square of 2 or more.
int GridSide(int world) {
  int g = static_cast<int>(std::lround(std::sqrt(static_cast<double>(world))));
  return g >= 2 && g * g == world ? g : 0;
}

std::string Counts(const std::vector<int64_t>& c) {
  std::string s;
  for (size_t r = 0; r < c.size(); ++r) s += fmt::format("{}rank {} {}", r ? ", " : "", r, c[r]);
  return s;
}

}  // namespace

DivergenceRule RuleFor(model::OpClass kind, int world_size, int64_t fewest) {
  using model::OpClass;
  DivergenceRule rule;
  switch (kind) {
    case OpClass::kAllGather:
    case OpClass::kReduceScatter:
    case OpClass::kAllReduce:
    case OpClass::kBroadcast:
    case OpClass::kReduce:
    case OpClass::kAllToAll:
      rule.judged = true;
      rule.max_allowed = fewest + 1;
      rule.why = "a collective runs as often on every rank (give or take one op at the window's edge)";
      return rule;
    case OpClass::kSendRecv:
      rule.judged = true;
      if (int g = GridSide(world_size)) {
        rule.max_allowed = fewest * (g + 1) / (g - 1) + 1;
        rule.why = fmt::format(
            "Cannon's skewed shifts on a {0}x{0} grid let a rank run up to {1:.3g}x the ring shifts of another", g,
            (g + 1) / static_cast<double>(g - 1));
      } else {
        rule.max_allowed = fewest + 1;
        rule.why = "on a ring every rank shifts as often (give or take one op at the window's edge)";
      }
      return rule;
    default:
      return rule;
  }
}

std::optional<model::Diagnostic> DiagnoseDivergence(const model::Imbalance& imbalance, int world_size) {
  if (world_size < 2) return std::nullopt;
  std::vector<std::string> flagged, expected;
  for (const auto& k : imbalance.collectives) {
    const auto& c = k.per_rank_count;
    if (c.size() < 2) continue;
    auto [lo, hi] = std::minmax_element(c.begin(), c.end());
    if (*lo == *hi) continue;
    DivergenceRule rule = RuleFor(k.kind, world_size, *lo);
    if (!rule.judged) continue;
    std::string line = fmt::format("{}: {}", model::Name(k.kind), Counts(c));
    if (*hi > rule.max_allowed) {
      flagged.push_back(line);
    } else if (*hi - *lo > 1) {
      expected.push_back(fmt::format("{} ({})", line, rule.why));
    }
  }
  if (flagged.empty()) return std::nullopt;
  model::Diagnostic d;
  d.severity = model::Diagnostic::Severity::kWarning;
  d.id = "divergent-control-flow";
  d.title = "the ranks ran different numbers of NCCL ops: likely divergent control flow";
  d.detail = fmt::format("per-rank op counts that differ more than the parallel layout explains: {}.",
                         fmt::join(flagged, "; "));
  if (!expected.empty()) {
    d.detail += fmt::format(" Expected and not counted: {}.", fmt::join(expected, "; "));
  }
  d.detail +=
      " Every rank must issue the same collectives in the same order; a count one rank decides for itself (recycles, "
      "sampling steps, an early exit, a data-dependent branch) makes NCCL hang, or match ops of different steps.";
  d.fix =
      "seed every rank alike (torch.manual_seed, cpprof_workload.seed_all) and take control-flow counts from rank 0 "
      "in one collective (cpprof_workload.broadcast_counts(recycles=..., steps=...)); 'cpprof scaffold' writes a "
      "module that does both (docs/workload-kit.md)";
  return d;
}

}  // namespace cpprof::analysis
