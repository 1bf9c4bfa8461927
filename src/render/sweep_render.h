// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The outputs of `cpprof sweep` from its model (model/sweep.h): sweep.json (schema
// cpprof.sweep/1, every point with its commands, timings, module table, memory and efficiency),
// sweep.md (the tables) and sweep.html (one self-contained page: the tables and the plots of
// render/sweep_plots as inline SVG; no script, nothing fetched). Deterministic: the same model
// gives the same bytes.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "model/sweep.h"

namespace cpprof::render {

nlohmann::ordered_json SweepJson(const model::SweepResult& r);
void PrintSweepMarkdown(const model::SweepResult& r, std::ostream& out);
void PrintSweepHtml(const model::SweepResult& r, std::ostream& out);

// "trunk, bf16" / "-m pkg.mod --n {n}": the sweep's workload in one line.
std::string SweepTitle(const model::SweepResult& r);

}  // namespace cpprof::render
