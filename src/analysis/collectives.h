// Matching communication across ranks: the i-th op of a kind on every rank is taken to be one
// collective (SPMD programs issue the same collectives in the same order on every rank). For
// each instance, the last rank to arrive bounds it: the shortest duration is the transfer, and
// what the others spend beyond it is waiting for the slowest rank.
#pragma once

#include <array>
#include <vector>

#include "analysis/module_sweep.h"
#include "model/report.h"

namespace cpprof::analysis {

// `per_rank[r]` is rank r's sweep (its comm_ops). Kinds with no op on any rank are left out.
std::vector<model::CollectiveStats> MatchCollectives(const std::vector<const RankModuleTimes*>& per_rank);

}  // namespace cpprof::analysis
