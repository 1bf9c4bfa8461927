// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/cp_grid.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "base/saturating.h"

namespace cpprof::analysis {

namespace {

// The rings of the grid: each row (when it has peers), then each column; a 1 x q or q x 1 grid
// has one, "the ring".
std::vector<model::RingWait> Rings(const model::CpGrid& g) {
  std::vector<model::RingWait> rings;
  for (int i = 0; g.cols > 1 && i < g.rows; ++i) {
    model::RingWait w;
    w.ring = g.rows == 1 ? "the ring" : fmt::format("row {} ring", i);
    for (int j = 0; j < g.cols; ++j) w.ranks.push_back(i * g.cols + j);
    rings.push_back(std::move(w));
  }
  for (int j = 0; g.rows > 1 && j < g.cols; ++j) {
    model::RingWait w;
    w.ring = g.cols == 1 ? "the ring" : fmt::format("column {} ring", j);
    for (int i = 0; i < g.rows; ++i) w.ranks.push_back(i * g.cols + j);
    rings.push_back(std::move(w));
  }
  return rings;
}

// The ring whose ranks hold all of `ranks` (an index into Rings(g)); -1 for none.
int RingOf(const model::CpGrid& g, const std::vector<int>& ranks) {
  auto all = [&](auto key) {
    return std::all_of(ranks.begin(), ranks.end(), [&](int k) { return key(k) == key(ranks.front()); });
  };
  const bool on_grid = std::all_of(ranks.begin(), ranks.end(), [&](int k) { return k >= 0 && k < g.rows * g.cols; });
  if (ranks.empty() || !on_grid) return -1;
  if (g.cols > 1 && all([&](int k) { return g.row(k); })) return g.row(ranks.front());
  if (g.rows > 1 && all([&](int k) { return g.col(k); })) return (g.cols > 1 ? g.rows : 0) + g.col(ranks.front());
  return -1;
}

}  // namespace

std::vector<model::RingWait> RingWaits(const model::Report& r) {
  const model::CpGrid& g = r.grid;
  const size_t n = r.ranks.size();
  if (!g.known() || static_cast<size_t>(g.rows) * static_cast<size_t>(g.cols) != n) return {};
  std::vector<model::RingWait> rings = Rings(g);
  std::vector<int> everyone(n);
  std::iota(everyone.begin(), everyone.end(), 0);
  // Instances of every rank, then of any other set that is on no one ring.
  rings.push_back({"whole grid", everyone});
  rings.push_back({"across rings", everyone});
  std::vector<std::vector<int64_t>> by(rings.size(), std::vector<int64_t>(n, 0));
  for (const auto& c : r.imbalance.collectives) {
    for (const auto& group : c.groups) {
      int ring = RingOf(g, group.ranks);
      if (ring < 0) ring = static_cast<int>(rings.size()) - (group.ranks == everyone ? 2 : 1);
      for (size_t l = 0; l < group.waited_for_ns.size() && l < n; ++l)
        SatAdd(by[static_cast<size_t>(ring)][l], group.waited_for_ns[l]);
    }
  }
  std::vector<model::RingWait> out;
  for (size_t k = 0; k < rings.size(); ++k) {
    for (size_t l = 0; l < n; ++l) {
      SatAdd(rings[k].wait_ns, by[k][l]);
      if (by[k][l] > rings[k].most_ns) rings[k].most_ns = by[k][l], rings[k].most_waited_for = static_cast<int>(l);
    }
    if (rings[k].wait_ns > 0) out.push_back(std::move(rings[k]));
  }
  return out;
}

model::CpGrid GridFor(int rows, int cols, const std::string& source, size_t ranks) {
  if (rows <= 0 || cols <= 0 || static_cast<size_t>(rows) * static_cast<size_t>(cols) != ranks) return {};
  return {rows, cols, source};
}

}  // namespace cpprof::analysis
