// The JSON pieces of `cpprof report --format json` (schema cpprof.report/1) that other renderings
// reuse: the HTML page embeds the same per-rank and module objects, so both say the same numbers.
#pragma once

#include <nlohmann/json.hpp>

#include "model/report.h"

namespace cpprof::render {

// One rank: span, busy split, classes, communication by kind, peak memory, top kernels.
nlohmann::ordered_json RankJson(const model::RankSummary& s);
// The module table: grouping, definition, rows with per-rank times.
nlohmann::ordered_json ModulesJson(const model::Report& r);

}  // namespace cpprof::render
