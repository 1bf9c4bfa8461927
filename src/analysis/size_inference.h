// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The model's sizes found in the capture itself (docs/cost-model.md, "Where the sizes come from"):
// the input shapes PyTorch's op ranges carry under each module (`--pytorch autograd-shapes-nvtx`),
// the workload's command line nsys records, and the ranks. Each size found says where it came
// from (Dims::origin), and the sources are merged in one order: --dims, shapes, command line and
// cpfold's config line, the config's dims, the defaults. Pure: plain structs in, Dims out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/cost_model.h"
#include "model/cost.h"

namespace cpprof::analysis {

// One op range's name and input shapes: "aten::linear, op_id = 7, sizes = [[1, 256, 64], [128, 64],
// []], input_op_ids = ..." -> {"aten::linear", {{1, 256, 64}, {128, 64}, {}}}. nullopt when the
// text carries no "sizes = [[...]]" or it does not parse.
std::optional<model::OpShapes> ParseOpShapes(std::string_view text);

// Whether an op range of this name is worth keeping for the sizes (LayerNorms, linears, batched
// matmuls, einsums, attention): its text starts "aten::<one of them>,".
bool IsSizeBearingOp(std::string_view text);

// The sizes the shapes show, with `ranks` ranks (the per-rank block of the pair tensor times the
// grid gives N; see docs/cost-model.md for which op of which module gives which size). Only the
// sizes found are set (values, grid, origin); dtype is never set (shapes do not carry it).
// `notes` receives the disagreements between modules (the first module's value is kept).
Dims SizesFromShapes(const std::vector<model::ModuleShapes>& modules, const CostConfig& config, int ranks,
                     std::vector<std::string>* notes);

// The sizes the workload's command line names (nsys's PROCESS_0 arguments): --n-token/--tokens (N),
// --c-z/--token-z (c_z), --c-s/--token-s (c_s), --blocks, --recycles (passes = recycles + 1),
// --msa-depth, --diffusion-steps, --samples, --dtype/--precision, --grid RxC, --cp0/--cp1 (the grid).
// Both "--flag VALUE" and "--flag=VALUE"; '-' and '_' alike.
Dims SizesFromCommandLine(const std::vector<std::string>& arguments);

// The sizes of `sources` merged, the first that gives a size winning; `source` summarizes which
// sources gave something ("--dims, the recorded shapes, defaults").
Dims MergeDims(const std::vector<const Dims*>& sources);

// Warnings where `given` (--dims) contradicts the recorded shapes: "--dims N=512 but the recorded
// shapes give N=256 (...)".
std::vector<std::string> ContradictedSizes(const Dims& given, const Dims& shapes);

// Every size of `d` with its origin, grouped by source: "the recorded shapes: N=256, c_z=64; the
// command line: dtype=bf16; default (AF3): c_s=384, ...".
std::string DescribeSizes(const Dims& d);

}  // namespace cpprof::analysis
