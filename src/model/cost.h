// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// How well the GPUs are used: the cost model's numbers per module (analysis/cost_model.h: FLOPs
// and bytes as functions of the model's sizes and the CP grid) against the measured time per
// steady-state iteration, and the device's peaks. Plain structs, filled by
// analysis/cost_efficiency, printed by the renderers (docs/cost-model.md says how each number is
// computed).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cpprof::model {

// A device's dense peaks (vendor datasheets; see analysis/cost_model.cc and docs/cost-model.md).
struct DevicePeaks {
  std::string name;                 // "H200 SXM"
  std::string match;                // substring of the GPU name nsys records ("H200")
  std::vector<std::string> unless;  // substrings that rule a GPU out ("NVL", "PCIe")
  double fp32_tflops = 0;
  double tf32_tflops = 0;
  double bf16_tflops = 0;  // fp16 is the same on these parts
  double fp16_tflops = 0;
  double hbm_tbs = 0;     // HBM bandwidth, TB/s (1e12 B/s)
  double nvlink_gbs = 0;  // NVLink per direction, GB/s (1e9 B/s)
  double pcie_gbs = 0;    // PCIe per direction, GB/s
  std::string source;     // the datasheet the numbers come from
  // What NCCL's point-to-point transfers reach over NVLink per direction, below the nominal
  // figure (0: not known), and where that figure comes from.
  double nvlink_achievable_gbs = 0;
  std::string achievable_source;
};

// One module row of the readout with a cost model, over the steady-state window (mean over ranks).
struct ModuleEfficiency {
  std::string module;    // the module row's short name ("TriangleMultiplicationOutgoing.forward")
  std::string path;      // group/.../module, as the module table nests it
  std::string cost_key;  // the cost model used ("TriangleMultiplicationOutgoing")
  // Calls per iteration and rank: counted from the capture (the module's NVTX ranges that started
  // in the window, per steady-state iteration, mean over ranks) when it has them, else from the
  // config's expression of the sizes.
  double calls_per_iteration = 0;
  std::string calls_source;      // "capture" or "config"
  std::string calls_expression;  // the config's ("blocks*passes"); "" none
  double config_calls = -1;      // what the expression gives for the sizes; -1 no expression
  // The ranks counted different calls per iteration (the mean is used); min and max.
  double calls_min = 0, calls_max = 0;
  // Model numbers per iteration and rank: this rank's share of the sharded (pair) work plus the
  // replicated work it repeats.
  double flops = 0;         // all FLOPs (matmul + elementwise terms)
  double matmul_flops = 0;  // the matmul part (2*M*N*K each)
  double bytes = 0;         // HBM bytes moved (each stage reads its inputs and writes its outputs once)
  // Measured, per iteration and rank (mean over ranks): the module's GPU busy time less its
  // communication that no compute hid (exposed comm is not the kernels' work).
  double time_ns = 0;
  double backward_share = 0;  // the part of the module's time launched by the backward pass
  double achieved_tflops = 0;
  double peak_tflops = 0;  // for the dtype
  double percent_of_peak = 0;
  double achieved_gbs = 0;     // bytes / time
  double intensity = 0;        // FLOPs per byte
  double ridge = 0;            // peak FLOP/s / HBM B/s: the roofline's knee
  std::string bound;           // "compute" (intensity >= ridge) or "memory"
  double roof_ns = 0;          // max(flops / peak, bytes / HBM): the time at the roof
  double percent_of_roof = 0;  // roof_ns / time_ns
  // Not "" when the numbers break a physical limit (above 100 % of the peak FLOP rate, of the HBM
  // bandwidth or of the roofline): "impossible: ..." with the limit and what the capture shows.
  // The renderers then print no rate as achieved.
  std::string impossible;
};

// The ring shifts of a distributed product (the TriMul's Cannon or 1-D ring), per module.
struct CommEfficiency {
  std::string module;
  std::string path;
  double bytes_per_shift = 0;  // sent by one rank in one shift
  double shifts_per_call = 0;
  double shifts_per_iteration = 0;
  double skew_bytes_per_call = 0;    // Cannon's initial skew: mean bytes per rank, one batch per call
  double transfer_ns_per_shift = 0;  // measured: the module's NCCL transfer time (waiting left out) per p2p batch
  double achieved_gbs = 0;           // all bytes sent (shifts and skews) / the transfer time
  std::string link;                  // "NVLink" or "PCIe"
  double link_gbs = 0;
  double ideal_ns_per_shift = 0;  // bytes_per_shift / link
  double percent_of_link = 0;
  double achievable_gbs = 0;         // what NCCL reaches on this link (0: not known)
  double percent_of_achievable = 0;  // achieved / achievable
  std::string impossible;            // "impossible: ..." above 100 % of the link; "" otherwise
};

// One of PyTorch's op ranges with the shapes of its inputs, as `--pytorch autograd-shapes-nvtx`
// records them ("aten::linear, op_id = 7, sizes = [[1, 256, 128, 64], [128, 64], []], ..."): what the
// model's sizes are read from (analysis/size_inference.h).
struct OpShapes {
  std::string op;                           // "aten::linear"
  std::vector<std::vector<int64_t>> sizes;  // each input's shape; empty for a non-tensor input
};

// The shape-carrying op ranges under one module row (its own and its children's), from the first
// calls on one process, in the order they ran (at most kMaxOpsPerModule).
struct ModuleShapes {
  static constexpr size_t kMaxOpsPerModule = 64;
  std::string path;  // group/.../module, as the module table nests it
  std::vector<OpShapes> ops;
};

// The overlap tax (analysis/overlap_tax.h): per module, the same compute kernels' median
// duration while NCCL kernels ran on the same GPU against while none did, over the report's window.
// An op runs "under communication" when NCCL kernels ran during at least half of it, "alone" when
// during none of it; a kernel (name, grid and block sizes, module, rank) is compared only with
// kMinOverlapSamples of each.
inline constexpr int64_t kMinOverlapSamples = 3;
struct ModuleOverlapTax {
  std::string module;                 // the module row's short name; "all GPU work" for the whole
  std::string path;                   // group/.../module, as the module table nests it
  bool is_group = false;              // a row of the grouping (trunk, ...): its modules' sum
  int64_t kernels = 0;                // kernels compared (name, grid and block sizes, module, rank)
  int64_t ops_under = 0;              // their ops under communication, all ranks
  int64_t ops_alone = 0;              // their ops alone
  int64_t alone_ns = 0;               // what the ops under communication take at their kernels' median alone
  int64_t extra_ns = 0;               // what they took more (median under - median alone, each op); < 0: faster
  double slowdown = 0;                // extra_ns / alone_ns
  double extra_ns_per_iteration = 0;  // extra_ns per steady iteration and rank (per window without iterations)
};

// OverlapTax::why_not of a report read without it (merge, --no-overlap-tax): not printed.
inline constexpr std::string_view kOverlapTaxNotAsked = "not asked for";

struct OverlapTax {
  bool computed = false;
  std::string why_not = std::string(kOverlapTaxNotAsked);  // when !computed
  int ranks = 0;
  int iterations = 0;  // steady iterations in the window (0: none, the numbers are per window)
  // Compute kernels of the window, all ranks: under communication, alone, and partly under it
  // (neither: left out of the comparison).
  int64_t ops_under = 0, ops_alone = 0, ops_partial = 0;
  ModuleOverlapTax all;                   // every compared kernel, whatever its module
  std::vector<ModuleOverlapTax> modules;  // module rows (and their subtrees) with a compared kernel, by extra_ns
};

struct Efficiency {
  bool computed = false;
  bool applicable = false;  // a module row has a built-in cost (the readout then says what is missing)
  std::string reason;       // why not computed (and which flag gives it); "" when computed
  std::string dims_source;  // "--dims", "cpfold's config line in X.stdout.log", ...
  std::string dims;         // the sizes used, "N=256,c_z=64,...,grid=1x2,dtype=bf16"
  // Where each size came from, by name (N, c_z, ..., grid, dtype): "--dims", "shapes: <module>'s
  // <op> input [...]", "command line: --n-token 256", "cpfold's config line", "default (AF3)".
  std::map<std::string, std::string> dims_origin;
  std::string dims_by_source;  // the sizes grouped by source: "shapes: N=256, c_z=64; command line: dtype=bf16; ..."
  std::string dtype;           // bf16, fp16, fp32, tf32
  std::string gpu;             // the GPU name the export records ("NVIDIA H200")
  DevicePeaks device;          // the peaks used
  std::string link_source;     // how the link was chosen ("doctor: NVLink ..." or "assumed NVLink")
  int iterations = 0;          // steady-state iterations in the window
  std::vector<ModuleEfficiency> modules;
  std::vector<CommEfficiency> comm;
  std::vector<std::string> notes;  // limits the reader must know
};

}  // namespace cpprof::model
