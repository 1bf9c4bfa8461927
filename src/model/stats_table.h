// A table of `cpprof stats`: the columns and rows of one nsys stats report, each cell already
// formatted exactly as `nsys stats --format csv` prints it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace cpprof::model {

struct StatsColumn {
  std::string header;  // "Time (%)", "Total Time (ns)", ..., "Name"
  bool numeric = true;
};

struct StatsTable {
  std::string report;  // "cuda_gpu_kern_sum"
  std::string title;   // "CUDA GPU Kernel Summary"
  std::vector<StatsColumn> columns;
  std::vector<std::vector<std::string>> rows;
  // A large table (a million NVTX range names) gives its rows on demand instead, formatted as
  // they are printed, so that the whole table is never held as text: `rows` stays empty and
  // lazy_row(i, cells) fills row i of lazy_count. It cannot fail (all it needs was read already)
  // and may be called from several threads at once.
  size_t lazy_count = 0;
  std::function<void(size_t i, std::vector<std::string>& cells)> lazy_row;
  std::string skipped;             // non-empty when the export lacks the data: why (nsys prints SKIPPED)
  std::vector<std::string> notes;  // what the CLI says beside the table (rows left out, and why)
  bool invalid_utf8 = false;       // some names read were not UTF-8 (shown as U+FFFD): the CLI says so

  size_t num_rows() const { return lazy_row ? lazy_count : rows.size(); }
  // Calls fn(const std::vector<std::string>&) for every row, in order.
  template <class F>
  void ForEachRow(F&& fn) const {
    if (!lazy_row) {
      for (const auto& r : rows) fn(r);
      return;
    }
    std::vector<std::string> cells;
    for (size_t i = 0; i < lazy_count; ++i) {
      cells.clear();
      lazy_row(i, cells);
      fn(static_cast<const std::vector<std::string>&>(cells));
    }
  }
};

}  // namespace cpprof::model
