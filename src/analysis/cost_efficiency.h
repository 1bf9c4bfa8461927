// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Efficiency per module: the cost model's FLOPs and bytes per steady-state iteration (cost_model.h)
// against each module's measured GPU time, the device's peaks and its link. Pure: the report in,
// model::Efficiency out (docs/cost-model.md says how each number is computed).
#pragma once

#include <optional>
#include <string>

#include "analysis/cost_model.h"
#include "model/report.h"

namespace cpprof::analysis {

// `dims`: the sizes (nullopt: not known; `missing` then says why and the efficiency says which flag
// gives it). The result goes to Report::efficiency.
model::Efficiency ComputeEfficiency(const model::Report& report, const CostConfig& config,
                                    const std::optional<Dims>& dims, const std::string& missing);

// Whether the report has a triangle module row with a cost model (a Pairformer the model knows): the
// readout then says that efficiency needs the sizes, when they are unknown. (A lone
// PairTransition.forward, as in tools/testdata's cpwork, is not enough: its readout stays as it was.)
bool HasCostedModules(const model::Report& report, const CostConfig& config);

// calls = the product of the dims in `expr` ("blocks*passes"; numbers allowed).
double CallsFromExpression(const std::string& expr, const Dims& dims);

}  // namespace cpprof::analysis
