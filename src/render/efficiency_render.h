// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The readout's "Efficiency" section (text, Markdown) and its JSON object: the cost model's FLOPs
// and bytes per module against the measured time, the device's peaks and the link
// (model/cost.h; docs/cost-model.md).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "model/report.h"

namespace cpprof::render {

// Nothing when the efficiency was not computed and no module row has a cost model; one line when
// it was not computed (why, and the flag that gives it); else the tables. Then the overlap tax
// (model::OverlapTax): its table, or why not on a run with communication.
void PrintEfficiency(const model::Report& r, bool markdown, std::ostream& out);

// Whether the JSON carries an "efficiency" object: when sizes were given or found (computed or
// not, with the reason).
bool HasEfficiencyJson(const model::Report& r);
nlohmann::ordered_json EfficiencyJson(const model::Report& r);

// Whether the JSON carries an "overlap_tax" object: unless the report was read without it.
bool HasOverlapTaxJson(const model::Report& r);
nlohmann::ordered_json OverlapTaxJson(const model::Report& r);

}  // namespace cpprof::render
