// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The readout's "What each fix buys" section (text, Markdown) and its JSON object: the replay's
// self-check, what the dependency graph could and could not tie, each what-if's predicted
// median steady iteration, and the median iteration's critical path (model/replay.h).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "model/report.h"

namespace cpprof::render {

// Nothing when the replay was not asked for; one line when it could not be built (why).
void PrintReplay(const model::Report& r, bool markdown, std::ostream& out);

nlohmann::ordered_json ReplayJson(const model::Report& r);

}  // namespace cpprof::render
