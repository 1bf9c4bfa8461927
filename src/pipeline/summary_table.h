// The layout nsys's summary reports share: per group, the share of the grand total, total,
// count, mean, median, min, max and standard deviation, then the group's key columns; rows by
// total, largest first. Cells are formatted exactly as `nsys stats --format csv` prints them.
#pragma once

#include <string>
#include <vector>

#include "analysis/summary_stats.h"
#include "model/stats_table.h"

namespace cpprof::pipeline {

struct SummaryRow {
  std::vector<std::string> keys;  // the trailing text columns ("Name"; "Style", "Range"; ...)
  analysis::Summary s;
};

struct KeyedValues {
  std::vector<std::string> keys;
  model::ChunkedVector<int64_t> values;  // table order
};

// Summarizes each group, freeing its values as it goes.
std::vector<SummaryRow> SummarizeGroups(std::vector<KeyedValues> groups);

enum class TieBreak {
  kKeys,           // total desc, then keys asc
  kCountThenKeys,  // total desc, count asc, keys asc (cuda_gpu_kern_sum's ORDER BY 2 DESC, 3, "Name")
  kInputOrder      // total desc, then the order given (cuda_api_sum's ORDER BY 2 DESC over its GROUP BY nameId)
};

// The eight numeric cells of one row of a DurationSummaryTable (the share of `grand` first).
void AppendDurationCells(const analysis::Summary& s, int64_t grand, std::vector<std::string>& cells);

// Time (%), Total Time (ns), <count_header>, Avg (ns), Med (ns), Min (ns), Max (ns), StdDev (ns), keys...
// Ties compare the keys in `tie_key_order` (indices into keys; empty: in column order), the
// order of nsys's GROUP BY.
model::StatsTable DurationSummaryTable(std::vector<SummaryRow> rows, const std::string& count_header,
                                       const std::vector<std::string>& key_headers, TieBreak tie_break,
                                       const std::vector<size_t>& tie_key_order = {});

// Adds to `t` the note for `damaged` rows ("kernels", "calls", ...) a report left out for their
// damaged times, as `cpprof report` leaves them out; none when there were none.
void NoteDamaged(int64_t damaged, const char* what, model::StatsTable& t);

}  // namespace cpprof::pipeline
