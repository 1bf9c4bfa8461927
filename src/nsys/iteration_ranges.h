// Iteration markers of an export: NVTX ranges whose name ends in "iteration N", "iter N",
// "iterN" or "iter_N" (any case), such as cpwork's ":iteration 0" or cpfold's ":cpfold:iter1".
// Used by the HTML report to zoom onto one iteration.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/timeline.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

// True when the last ':'-separated part of `name` is an iteration marker (see above).
bool IsIterationName(std::string_view name);

// One window per distinct marker name, over every process and thread that recorded it (earliest
// start, latest end), by start then name; at most `max_windows` (the earliest). Empty when the
// export has no NVTX table.
StatusOr<std::vector<model::IterationWindow>> ReadIterationWindows(const Database& db, size_t max_windows = 1000);

}  // namespace cpprof::nsys
