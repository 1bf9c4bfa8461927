// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The JSON pieces of `cpprof report --format json` (schema cpprof.report/2) that other renderings
// reuse: the HTML page embeds the same per-rank and module objects, so both say the same numbers.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "model/report.h"
#include "render/report_render.h"

namespace cpprof::render {

// The whole readout of `cpprof report --format json` (schema cpprof.report/2): the one serialiser
// of the report, which the HTML page embeds as it is.
nlohmann::ordered_json ReportJson(const model::Report& r, const RenderOptions& o);
// Busy time per phase (forward, backward, optimizer) and rank.
nlohmann::ordered_json PhasesJson(const model::Report& r);

// The classes a rank ran ops of, by kernel time (then name): the order of the class tables.
std::vector<int> ClassesByTime(const model::RankSummary& s);
// One rank: span, busy split, classes, communication by kind, peak memory, top kernels.
nlohmann::ordered_json RankJson(const model::RankSummary& s);
// The module table: grouping, definition, rows with per-rank times.
nlohmann::ordered_json ModulesJson(const model::Report& r);
// Who waited for whom: the straggler, and waiting vs transfer per kind and rank.
nlohmann::ordered_json ImbalanceJson(const model::Report& r);
// The window the numbers cover, with the iterations found.
nlohmann::ordered_json WindowJson(const model::Report& r);
nlohmann::ordered_json VerdictJson(const model::Report& r);
// A run read from several exports: each export, its ranks and its clock alignment (file paths
// only with `show_paths`).
nlohmann::ordered_json RunExportsJson(const model::Report& r, bool show_paths);

}  // namespace cpprof::render
