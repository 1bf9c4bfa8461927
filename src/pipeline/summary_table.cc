#include "pipeline/summary_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "render/pyformat.h"

namespace cpprof::pipeline {

using render::PyRound1;

std::vector<SummaryRow> SummarizeGroups(std::vector<KeyedValues> groups) {
  std::vector<SummaryRow> rows;
  rows.reserve(groups.size());
  std::vector<int64_t> scratch;
  for (auto& g : groups) {
    rows.push_back({std::move(g.keys), analysis::Summarize(g.values, scratch)});
    g.values = {};  // peak memory: the values plus the largest group
  }
  return rows;
}

namespace {

// nsys: round(total * 100.0 / grand, 1); NULL (an empty field) when the grand total is 0.
std::string Share(int64_t part, int64_t grand) {
  if (grand == 0) return "";
  return PyRound1(static_cast<double>(part) * 100.0 / static_cast<double>(grand));
}

}  // namespace

void AppendDurationCells(const analysis::Summary& s, int64_t grand, std::vector<std::string>& cells) {
  cells.push_back(Share(s.total, grand));
  cells.push_back(std::to_string(s.total));
  cells.push_back(std::to_string(s.count));
  cells.push_back(PyRound1(s.mean));
  cells.push_back(PyRound1(s.median));
  cells.push_back(std::to_string(s.min));
  cells.push_back(std::to_string(s.max));
  cells.push_back(PyRound1(s.stdev));
}

model::StatsTable DurationSummaryTable(std::vector<SummaryRow> rows, const std::string& count_header,
                                       const std::vector<std::string>& key_headers, TieBreak tie_break,
                                       const std::vector<size_t>& tie_key_order) {
  std::stable_sort(rows.begin(), rows.end(), [&](const SummaryRow& a, const SummaryRow& b) {
    if (a.s.total != b.s.total) return a.s.total > b.s.total;
    if (tie_break == TieBreak::kInputOrder) return false;
    if (tie_break == TieBreak::kCountThenKeys && a.s.count != b.s.count) return a.s.count < b.s.count;
    if (tie_key_order.empty()) return a.keys < b.keys;
    for (size_t k : tie_key_order) {
      if (a.keys[k] != b.keys[k]) return a.keys[k] < b.keys[k];
    }
    return false;
  });
  int64_t grand = 0;
  for (const auto& r : rows) {
    if (__builtin_add_overflow(grand, r.s.total, &grand)) grand = INT64_MAX;  // saturates, as the totals do
  }
  model::StatsTable t;
  t.columns = {{"Time (%)"}, {"Total Time (ns)"}, {count_header}, {"Avg (ns)"},
               {"Med (ns)"}, {"Min (ns)"},        {"Max (ns)"},   {"StdDev (ns)"}};
  for (const auto& h : key_headers) t.columns.push_back({h, false});
  for (auto& r : rows) {
    std::vector<std::string> cells;
    cells.reserve(8 + r.keys.size());
    AppendDurationCells(r.s, grand, cells);
    for (auto& k : r.keys) cells.push_back(std::move(k));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

void NoteDamaged(int64_t damaged, const char* what, model::StatsTable& t) {
  if (damaged == 0) return;
  t.notes.push_back(
      fmt::format("{} {} with damaged values (times that are not integers, end before they start or pass 2^62 "
                  "ns; sizes below 0 or past 2^50 bytes) left out, as 'cpprof report' leaves such ops out (nsys "
                  "would count them)",
                  damaged, what));
}

}  // namespace cpprof::pipeline
