// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The cost model: FLOPs and HBM bytes per call of the AF3/Boltz Pairformer modules (and cpfold's,
// which carry the same class names) as functions of the model's sizes and the CP grid, and the
// device peaks they are held against. docs/cost-model.md derives every formula.
//
// The formulas are C++ (CostOf), not expressions in the config: they are few, each is checked by a
// unit test against numbers worked out by hand, and a config language would need its own parser,
// errors and tests for no gain a user has asked for. What a user changes is data: the sizes
// (--dims, or the config's "dims"), which of their module names use which built-in formula
// ("modules"), and the device peaks ("devices"): `cpprof report --print-cost-model` prints the
// built-in config with the per-module numbers for the sizes given.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/cost.h"

namespace cpprof::analysis {

// The model's sizes. Every known name has the AF3 default except N (tokens), which must be given.
struct Dims {
  std::map<std::string, double> values;  // N, c_z, c_s, ... (see KnownDims)
  int grid_rows = 1, grid_cols = 1;      // the CP grid
  std::string dtype = "bf16";            // bf16, fp16, fp32, tf32
  std::string source;                    // where the sizes came from, said in the readout
  // Where each size given here came from, by name (N, c_z, ..., "grid", "dtype"): "--dims",
  // "shapes: ...", "command line: ...". A name without an entry is a default (or the config's).
  std::map<std::string, std::string> origin;

  double Get(std::string_view name) const;  // the value, else the default (0 for N)
  bool Has(std::string_view name) const { return values.count(std::string(name)) > 0; }
  int ranks() const { return grid_rows * grid_cols; }
  double dtype_bytes() const { return dtype == "fp32" || dtype == "tf32" ? 4 : 2; }
  std::string ToString() const;  // "N=256,c_z=64,...,grid=1x2,dtype=bf16": every size used
};

struct KnownDim {
  std::string_view name;
  double default_value;  // AF3 (N: 0, must be given)
  std::string_view meaning;
};
const std::vector<KnownDim>& KnownDims();

// Parses "N=1024,c_z=128,grid=1x2,dtype=bf16" onto `into` (values given override it). Errors
// (kUsage) name the bad entry and `flag`; an unknown name lists the known ones.
// Each name given gets origin `flag`.
Status ParseDims(std::string_view text, const std::string& flag, Dims& into);
bool KnownDtype(std::string_view dtype);  // bf16, fp16, fp32, tf32

// The sizes cpfold prints on its `cpfold-config: {...}` line (python/cpfold/run.py): n_token, grid,
// dtype, recycles, and with "model" its ModelConfig (c_z, c_s, ...). nullopt when the text holds no
// such line; `why` says what was missing when the line lacks the model sizes.
std::optional<Dims> DimsFromCpfoldLog(std::string_view log_text, std::string* why);

// FLOPs and bytes of one call of a module, split into the work that is sharded over the CP grid
// (pair-shaped tensors: each rank does 1/ranks of it) and the work every rank repeats (single
// representation, MSA rows, the weights of replicated GEMMs).
struct ModuleCost {
  double matmul_flops_sharded = 0, matmul_flops_replicated = 0;
  double other_flops_sharded = 0, other_flops_replicated = 0;  // elementwise, softmax, LayerNorm
  double bytes_sharded = 0, bytes_replicated = 0;
  // Ring shifts of a distributed product on one rank: bytes sent per shift, shifts per call; and
  // Cannon's initial skew (one more p2p batch per call), its bytes as a mean over the ranks (not
  // every rank moves both blocks).
  double shift_bytes = 0, shifts = 0;
  double skew_bytes = 0, skews = 0;

  double Flops() const {
    return matmul_flops_sharded + matmul_flops_replicated + other_flops_sharded + other_flops_replicated;
  }
  double MatmulFlops() const { return matmul_flops_sharded + matmul_flops_replicated; }
  double Bytes() const { return bytes_sharded + bytes_replicated; }
  // One rank's share: sharded / ranks + replicated.
  double FlopsPerRank(int ranks) const;
  double MatmulFlopsPerRank(int ranks) const;
  double BytesPerRank(int ranks) const;
};

// The built-in formulas' names ("TriangleMultiplicationOutgoing", ...), in a fixed order.
const std::vector<std::string>& CostKeys();
// One call's cost; nullopt for an unknown key.
std::optional<ModuleCost> CostOf(std::string_view key, const Dims& dims);

// The cost model config (--model-config FILE): sizes, module names mapped to built-in formulas,
// device peaks.
struct CostConfig {
  std::string source = "built-in cost model";
  std::map<std::string, double> dims;  // defaults under --dims and cpfold's record
  // Module name (".forward" dropped), or the end of a module path ("DiffusionTransformer/AttentionPairBias")
  // -> cost key. The longest match with the row's path wins; else a row named as a cost key uses it.
  std::map<std::string, std::string> modules;
  // Calls per iteration when the capture cannot count them: the end of a module path (longest
  // first), else the row's group -> a product of dims ("trunk": "blocks*passes").
  std::map<std::string, std::string> calls;
  std::vector<model::DevicePeaks> devices;  // tried in order; the config's before the built-in
  std::string device;                       // force this device by name ("" = match the GPU name)

  // The cost key of a module row, by its path ("trunk/.../TriangleMultiplicationOutgoing.forward")
  // or its short name; "" none.
  std::string KeyOf(std::string_view module_path) const;
  // The calls expression of a module row by its path (group first); "" none.
  std::string CallsOf(std::string_view module_path) const;
  // The peaks for a GPU name (TARGET_INFO_GPU, "NVIDIA H200"), or for `device` when set.
  std::optional<model::DevicePeaks> PeaksFor(std::string_view gpu_name) const;
};

CostConfig DefaultCostConfig();
std::string DefaultCostConfigJson();  // the built-in config, as --print-cost-model prints it
// A config as JSON that ParseCostConfig reads back as the same config (for `report --partial`).
std::string CostConfigJson(const CostConfig& config);
// Errors (kBadInput) name `source` and the bad field; an unknown dim names it and --model-config.
StatusOr<CostConfig> ParseCostConfig(std::string_view json, const std::string& source);
StatusOr<CostConfig> LoadCostConfig(const std::string& path);

// The model's numbers per module for `dims` (JSON text): what --print-cost-model prints with
// --dims, and what tools/device/flop_check.py compares with PyTorch's own count.
std::string CostTableJson(const CostConfig& config, const Dims& dims);

// Peak TFLOP/s of `p` for a dtype (bf16, fp16, fp32, tf32).
double PeakTflops(const model::DevicePeaks& p, std::string_view dtype);

}  // namespace cpprof::analysis
