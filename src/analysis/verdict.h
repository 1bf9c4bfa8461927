// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// What a CP engineer acts on, from the numbers of a report: each rank's window as a budget
// (compute, exposed transfer, waiting for peers, idle for the host), the straggler (the rank the
// others wait for), launch-bound ranks, and a verdict: one paragraph and the largest
// opportunities, each with its number.
#pragma once

#include <vector>

#include "analysis/comm_match.h"
#include "analysis/module_sweep.h"
#include "model/report.h"

namespace cpprof::analysis {

// A rank is launch-bound when short gaps between its GPU ops (the host launching the next
// kernel) take at least this share of its window.
inline constexpr double kLaunchBoundShare = 0.20;

// A straggler is named when it arrived last at most matched NCCL instances and the replay
// (analysis/replay.h) predicts that bringing it on time saves at least this share of the
// median steady iteration.
inline constexpr double kStragglerGain = 0.05;

// Fills rank `r`'s wait/transfer/unmatched sums, its budget (exposed transfer and waiting) and
// its idle split (launch gaps, host stalls) from the matched communication and its sweep.
// Needs `s`'s span, busy, compute and communication unions already set.
void FillCommBudget(const CommMatch& comm, size_t r, const RankModuleTimes& sweep, model::RankSummary& s);

// The straggler (largest waiting caused to the others), the busiest rank and the spreads.
model::Imbalance SummarizeImbalance(const std::vector<model::RankSummary>& ranks,
                                    std::vector<model::CollectiveStats> kinds);

// The verdict of a finished report (ranks, modules, imbalance, window, capture).
model::Verdict MakeVerdict(const model::Report& report);

}  // namespace cpprof::analysis
