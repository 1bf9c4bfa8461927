// Iteration markers of an export: NVTX ranges whose name ends in "iteration N", "iter N",
// "iterN" or "iter_N" (any case), such as cpwork's ":iteration 0" or cpfold's ":cpfold:iter1".
// Used by the HTML report to zoom onto one iteration.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/timeline.h"
#include "nsys/nvtx_reader.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

// True when the last ':'-separated part of `name` is an iteration marker (see above).
bool IsIterationName(std::string_view name);

// Collects the windows from ranges as a pass over NVTX gives them (ScanNvtx's range callback),
// so that the report's one pass serves the HTML too.
class IterationWindowCollector {
 public:
  // `domain` = the first name of the range's domain (NvtxDomains::NamesFor(...).front()).
  void Add(const NvtxRangeRow& r, const std::string& domain);
  void Clear() { by_name_.clear(); }
  // One window per distinct marker name, by start then name; at most `max_windows` (the earliest).
  std::vector<model::IterationWindow> Windows(size_t max_windows = 1000) const;

 private:
  std::map<std::string, model::IterationWindow> by_name_;
  std::string full_;
};

// One window per distinct marker name, over every process and thread that recorded it (earliest
// start, latest end), by start then name; at most `max_windows` (the earliest). Empty when the
// export has no NVTX table.
StatusOr<std::vector<model::IterationWindow>> ReadIterationWindows(const Database& db, size_t max_windows = 1000);

}  // namespace cpprof::nsys
