// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace cpprof::analysis {

namespace {

// Elementwise terms (docs/cost-model.md, "Small terms"): FLOPs per element.
constexpr double kLayerNorm = 7;  // mean, subtract, square, variance sum, scale by rsqrt, weight, bias
constexpr double kSigmoid = 4;    // negate, exp, add, divide
constexpr double kSiluMul = 5;    // sigmoid (4) times x, folded with the product by b: silu(a) * b
constexpr double kSoftmax = 5;    // max, subtract, exp, sum, divide
constexpr double kAdd = 1;

// The Hopper parts (H200 NVL and SXM, H100 PCIe and SXM), in the order they are tried.
void AddHopper(std::vector<model::DevicePeaks>& d) {
  // NVIDIA H200 datasheet, H200 SXM: FP32 67 TFLOPS; TF32 989 TFLOPS with sparsity -> 494.5
  // dense; BF16/FP16 1,979 with sparsity -> 989.5 dense; HBM3e 4.8 TB/s; NVLink 900 GB/s (both
  // directions) -> 450 each way; PCIe Gen5 128 GB/s (both directions) -> 64 each way.
  d.push_back({"H200 NVL",
               "H200 NVL",
               {},
               60,
               835,
               1671,
               1671,
               4.8,
               450,
               64,
               "NVIDIA H200 datasheet, H200 NVL column (dense = half the sparse figures)",
               0,
               ""});
  d.push_back({"H200 SXM",
               "H200",
               {"NVL"},
               67,
               494.5,
               989.5,
               989.5,
               4.8,
               450,
               64,
               "NVIDIA H200 datasheet, H200 SXM column (dense = half the sparse figures)",
               0,
               ""});
  // NVIDIA H100 datasheet, H100 SXM: FP32 67; TF32 989 sparse -> 494.5; BF16/FP16 1,979 sparse
  // -> 989.5; HBM3 3.35 TB/s; NVLink 900 GB/s -> 450 each way; PCIe Gen5 128 GB/s -> 64 each way.
  // H100 PCIe: FP32 51; TF32 756 sparse -> 378; BF16 1,513 sparse -> 756.5; HBM2e 2.0 TB/s; NVLink
  // bridge 600 GB/s -> 300 each way.
  d.push_back({"H100 PCIe",
               "H100 PCIe",
               {},
               51,
               378,
               756.5,
               756.5,
               2.0,
               300,
               64,
               "NVIDIA H100 datasheet, H100 PCIe column (dense = half the sparse figures)",
               0,
               ""});
  d.push_back({"H100 SXM",
               "H100",
               {"PCIe", "NVL"},
               67,
               494.5,
               989.5,
               989.5,
               3.35,
               450,
               64,
               "NVIDIA H100 datasheet, H100 SXM column (dense = half the sparse figures)",
               0,
               ""});
}

// The device peaks, dense (no 2:4 sparsity), per GPU, from NVIDIA's datasheets.
std::vector<model::DevicePeaks> BuiltinDevices() {
  std::vector<model::DevicePeaks> d;
  // NVIDIA HGX B200 datasheet (8-GPU board, dense = half the sparse figures, per GPU = / 8):
  // FP32 600 TFLOPS -> 75; TF32 18 PFLOPS sparse -> 1.125 PF dense per GPU; BF16/FP16 36 PFLOPS
  // sparse -> 2.25 PF dense per GPU; HBM3e 8 TB/s per GPU; NVLink 5: 1.8 TB/s per GPU (both
  // directions) -> 900 GB/s each way; PCIe Gen5 x16: 64 GB/s each way.
  d.push_back(
      {"B200", "B200", {}, 75, 1125, 2250, 2250, 8.0, 900, 64, "NVIDIA HGX B200 datasheet (per GPU, dense)", 0, ""});
  AddHopper(d);
  // NVIDIA A100 datasheet, A100 80GB SXM: FP32 19.5; TF32 156; BF16/FP16 312 (dense); HBM2e
  // 2,039 GB/s; NVLink 600 GB/s -> 300 each way; PCIe Gen4 64 GB/s -> 32 each way.
  d.push_back({"A100 SXM",
               "A100",
               {"PCIe"},
               19.5,
               156,
               312,
               312,
               2.039,
               300,
               32,
               "NVIDIA A100 datasheet, A100 80GB SXM column (dense)",
               0,
               ""});
  return d;
}

// What NCCL reaches beside the nominal figures, where known.
void AddAchievable(std::vector<model::DevicePeaks>& devices) {
  // NCCL point-to-point over NVLink 4 (H100 and H200 SXM): about 370 GB/s per direction, not the
  // nominal 450 (issue 35's figure for NCCL send/recv between two GPUs of an HGX board; cpprof's own
  // captures reach 150 to 160 GB/s at 4 MB shifts, tests/data/real/cpfold-ring-1x2).
  for (auto& p : devices) {
    if (p.name == "H200 SXM" || p.name == "H100 SXM") {
      p.nvlink_achievable_gbs = 370;
      p.achievable_source = "NCCL point-to-point over NVLink 4, about 370 GB/s per direction (issue 35)";
    }
  }
}

const std::vector<KnownDim> kKnownDims = {
    {"N", 0, "tokens (the pair tensor is N x N)"},
    {"c_z", 128, "pair channels"},
    {"c_s", 384, "single channels"},
    {"tri_mul_hidden", 128, "TriangleMultiplication hidden channels"},
    {"tri_att_heads", 4, "TriangleAttention heads"},
    {"tri_att_head_dim", 32, "TriangleAttention channels per head"},
    {"single_att_heads", 16, "AttentionPairBias heads (head dim c_s / heads)"},
    {"transition_n", 4, "Transition expansion factor"},
    {"c_m", 64, "MSA channels"},
    {"c_opm", 32, "OuterProductMean hidden channels"},
    {"msa_heads", 8, "MSAPairWeightedAveraging heads"},
    {"msa_head_dim", 8, "MSAPairWeightedAveraging channels per head"},
    {"msa_depth", 64, "MSA sequences"},
    {"blocks", 48, "Pairformer blocks in the trunk"},
    {"msa_blocks", 4, "MSA module blocks"},
    {"passes", 1, "trunk passes per iteration (recycles + 1)"},
    {"c_token_diffusion", 768, "DiffusionTransformer width (c_a)"},
    {"diffusion_blocks", 24, "DiffusionTransformer blocks"},
    {"diffusion_heads", 16, "DiffusionTransformer attention heads"},
    {"diffusion_steps", 200, "diffusion sampling steps (denoiser calls per iteration)"},
    {"samples", 5, "diffusion samples (the denoiser's batch; confidence runs once per sample)"},
    {"confidence_blocks", 4, "Pairformer blocks in the confidence head"},
    {"plddt_bins", 50, "confidence head: pLDDT bins"},
    {"pae_bins", 64, "confidence head: PAE bins"},
    {"pde_bins", 64, "confidence head: PDE bins"},
    {"distogram_bins", 64, "distogram head bins"},
};

const KnownDim* FindDim(std::string_view name) {
  for (const auto& d : kKnownDims) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::string KnownDimNames() {
  std::string s;
  for (const auto& d : kKnownDims) s += (s.empty() ? "" : ", ") + std::string(d.name);
  return s + ", grid (RxC), dtype (bf16|fp16|fp32|tf32)";
}

bool ParseNumber(std::string_view s, double& out) {
  if (s.empty()) return false;
  std::string t(s);
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && std::isfinite(out) && out >= 0;
}

bool ParseGrid(std::string_view s, int& rows, int& cols) {
  size_t x = s.find_first_of("xX");
  if (x == std::string_view::npos) return false;
  auto num = [](std::string_view t, int& v) {
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    return ec == std::errc() && p == t.data() + t.size() && v >= 1 && v <= 4096;
  };
  return num(s.substr(0, x), rows) && num(s.substr(x + 1), cols);
}

// The one rank's share of the bytes a 1-D ring or Cannon shift sends: see docs/cost-model.md.
void AddShifts(ModuleCost& c, const Dims& d, double channels) {
  const int r = d.grid_rows, q = d.grid_cols;
  const double n = d.Get("N"), e = d.dtype_bytes();
  if (r * q <= 1) return;
  if (r == 1 || q == 1) {  // 1-D ring of P ranks: one operand (or partial result) block, channels x N x N/P
    const int p = r * q;
    c.shifts = p - 1;
    c.shift_bytes = channels * n * (n / p) * e;
  } else if (r == q) {  // Cannon on q x q: both operand blocks move each step, q - 1 steps after the skew
    c.shifts = q - 1;
    c.shift_bytes = 2 * channels * (n / q) * (n / q) * e;
    // The skew moves row I's left blocks by I and column J's right blocks by J: a block moves on
    // (q - 1) / q of the ranks, for each operand.
    c.skews = 1;
    c.skew_bytes = c.shift_bytes * (q - 1) / q;
  }
}

}  // namespace

const std::vector<KnownDim>& KnownDims() { return kKnownDims; }

bool KnownDtype(std::string_view t) { return t == "bf16" || t == "fp16" || t == "fp32" || t == "tf32"; }

double Dims::Get(std::string_view name) const {
  auto it = values.find(std::string(name));
  if (it != values.end()) return it->second;
  const KnownDim* d = FindDim(name);
  return d ? d->default_value : 0;
}

std::string Dims::ToString() const {
  std::string s;
  for (const auto& d : kKnownDims) {
    s += fmt::format("{}{}={}", s.empty() ? "" : ",", d.name, Get(d.name));
  }
  return s + fmt::format(",grid={}x{},dtype={}", grid_rows, grid_cols, dtype);
}

Status ParseDims(std::string_view text, const std::string& flag, Dims& into) {
  auto bad = [&](const std::string& what) {
    return Status(ExitCode::kUsage,
                  fmt::format("{}: {}. Give NAME=VALUE pairs separated by commas, e.g. {} "
                              "N=1024,c_z=128,grid=1x2,dtype=bf16; the names: {} (docs/cost-model.md)",
                              flag, what, flag, KnownDimNames()));
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) return bad(fmt::format("'{}' is not NAME=VALUE", item));
    std::string_view name = item.substr(0, eq), value = item.substr(eq + 1);
    if (name == "grid") {
      if (!ParseGrid(value, into.grid_rows, into.grid_cols)) {
        return bad(fmt::format("grid '{}' is not ROWSxCOLS (e.g. 1x2, 2x2)", value));
      }
    } else if (name == "dtype") {
      if (!KnownDtype(value)) return bad(fmt::format("dtype '{}' is not one of bf16, fp16, fp32, tf32", value));
      into.dtype = std::string(value);
    } else if (FindDim(name)) {
      double v = 0;
      if (!ParseNumber(value, v)) return bad(fmt::format("{} = '{}' is not a number >= 0", name, value));
      into.values[std::string(name)] = v;
    } else {
      return bad(fmt::format("unknown dim '{}'", name));
    }
    into.origin[std::string(name)] = flag;
  }
  return OkStatus();
}

std::optional<Dims> DimsFromCpfoldLog(std::string_view log, std::string* why) {
  constexpr std::string_view kTag = "cpfold-config: ";
  size_t at = 0;
  while ((at = log.find(kTag, at)) != std::string_view::npos) {
    if (at == 0 || log[at - 1] == '\n') break;
    at += kTag.size();
  }
  if (at == std::string_view::npos) return std::nullopt;
  size_t end = log.find('\n', at);
  std::string_view line = log.substr(at + kTag.size(), end == std::string_view::npos ? end : end - at - kTag.size());
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    if (why) *why = "cpfold's config line is not valid JSON";
    return std::nullopt;
  }
  if (!j.contains("model") || !j["model"].is_object()) {
    if (why) {
      *why = "cpfold's config line has no model sizes (a cpfold from before the cost model; its preset '" +
             j.value("preset", std::string("?")) + "' is named, not its sizes)";
    }
    return std::nullopt;
  }
  Dims d;
  auto num = [&](const nlohmann::json& o, const char* key, const char* dim) {
    if (o.contains(key) && o[key].is_number()) d.values[dim] = o[key].get<double>();
  };
  num(j, "n_token", "N");
  num(j, "msa_depth", "msa_depth");
  if (j.contains("recycles") && j["recycles"].is_number()) d.values["passes"] = j["recycles"].get<double>() + 1;
  if (j.contains("grid") && j["grid"].is_array() && j["grid"].size() == 2 && j["grid"][0].is_number_integer() &&
      j["grid"][1].is_number_integer()) {
    d.grid_rows = std::max(1, j["grid"][0].get<int>());
    d.grid_cols = std::max(1, j["grid"][1].get<int>());
  }
  if (j.contains("dtype") && j["dtype"].is_string() && KnownDtype(j["dtype"].get<std::string>())) {
    d.dtype = j["dtype"].get<std::string>();
  }
  const auto& m = j["model"];
  num(j, "diffusion_steps", "diffusion_steps");
  num(j, "samples", "samples");
  // A training step runs the denoiser once (on `samples` noise levels), not once per sampling step.
  if (j.value("mode", std::string()) == "train") d.values["diffusion_steps"] = 1;
  for (const char* k : {"c_z",
                        "c_s",
                        "tri_mul_hidden",
                        "tri_att_heads",
                        "tri_att_head_dim",
                        "single_att_heads",
                        "transition_n",
                        "c_m",
                        "c_opm",
                        "msa_heads",
                        "msa_head_dim",
                        "msa_blocks",
                        "c_token_diffusion",
                        "diffusion_blocks",
                        "diffusion_heads",
                        "confidence_blocks",
                        "plddt_bins",
                        "pae_bins",
                        "pde_bins",
                        "distogram_bins"}) {
    num(m, k, k);
  }
  num(m, "pairformer_blocks", "blocks");
  if (!d.Has("N")) {
    if (why) *why = "cpfold's config line has no n_token";
    return std::nullopt;
  }
  return d;
}

double ModuleCost::FlopsPerRank(int ranks) const {
  return (matmul_flops_sharded + other_flops_sharded) / ranks + matmul_flops_replicated + other_flops_replicated;
}
double ModuleCost::MatmulFlopsPerRank(int ranks) const {
  return matmul_flops_sharded / ranks + matmul_flops_replicated;
}
double ModuleCost::BytesPerRank(int ranks) const { return bytes_sharded / ranks + bytes_replicated; }

const std::vector<std::string>& CostKeys() {
  static const std::vector<std::string> keys = {"TriangleMultiplicationOutgoing",
                                                "TriangleMultiplicationIncoming",
                                                "TriangleAttentionStartingNode",
                                                "TriangleAttentionEndingNode",
                                                "PairTransition",
                                                "AttentionPairBias",
                                                "SingleTransition",
                                                "OuterProductMean",
                                                "MSAPairWeightedAveraging",
                                                "DiffusionAttentionPairBias",
                                                "DiffusionTransition",
                                                "DiffusionTransformer",
                                                "ConfidenceModule",
                                                "DistogramHead"};
  return keys;
}

namespace {

// `times` x c into `to` (the work; a composite has no ring shifts of its own).
void AddWork(ModuleCost& to, const ModuleCost& c, double times) {
  to.matmul_flops_sharded += times * c.matmul_flops_sharded;
  to.matmul_flops_replicated += times * c.matmul_flops_replicated;
  to.other_flops_sharded += times * c.other_flops_sharded;
  to.other_flops_replicated += times * c.other_flops_replicated;
  to.bytes_sharded += times * c.bytes_sharded;
  to.bytes_replicated += times * c.bytes_replicated;
}

// cpfold's c_s_inputs: the single channels plus the residue-type one-hot and profile (33 each)
// and the deletion mean (python/cpfold/config.py).
double SingleInputs(const Dims& d) { return d.Get("c_s") + 2 * 33 + 1; }

// The sizes most formulas use: N, N^2, N^3, bytes per element e, c_z, c_s, transition_n.
struct Common {
  double n, n2, n3, e, cz, cs, tn;
};

// The common sizes of d (see Common).
Common CommonOf(const Dims& d) {
  const double n = d.Get("N"), n2 = n * n, n3 = n2 * n, e = d.dtype_bytes();
  return {n, n2, n3, e, d.Get("c_z"), d.Get("c_s"), d.Get("transition_n")};
}

// TriangleMultiplicationOutgoing and Incoming, with the ring shifts of the distributed product.
ModuleCost TriangleMultiplicationCost(const Dims& d) {
  const auto [n, n2, n3, e, cz, cs, tn] = CommonOf(d);
  ModuleCost c;
  const double h = d.Get("tri_mul_hidden");
  // projections a|b values and gates (c -> 4h), output gate (c -> c), the triangle product
  // (h channels of N x N times N x N), the output projection (h -> c).
  c.matmul_flops_sharded = 2 * n2 * cz * 4 * h + 2 * n2 * cz * cz + 2 * h * n3 + 2 * n2 * h * cz;
  // LN in, gating of a|b (sigmoid, mask, product: 6 per element of 2h), output gate sigmoid,
  // LN out, the final product.
  c.other_flops_sharded = kLayerNorm * n2 * cz + 6 * n2 * 2 * h + kSigmoid * n2 * cz + kLayerNorm * n2 * h + n2 * cz;
  c.bytes_sharded = e * n2 * (5 * cz + 6 * h);
  AddShifts(c, d, h);
  return c;
}

// TriangleAttentionStartingNode and EndingNode, with the work a square grid's row peers repeat.
ModuleCost TriangleAttentionCost(const Dims& d) {
  const auto [n, n2, n3, e, cz, cs, tn] = CommonOf(d);
  ModuleCost c;
  const double heads = d.Get("tri_att_heads"), hd = heads * d.Get("tri_att_head_dim");
  // bias (c -> H), q|k|v|g (c -> 4 Hd), scores and weighted values (2 N^3 d each per head),
  // output (Hd -> c).
  c.matmul_flops_sharded = 2 * n2 * cz * heads + 2 * n2 * cz * 4 * hd + 4 * hd * n3 + 2 * n2 * hd * cz;
  // LN, bias add and softmax over the H N^3 scores, gate sigmoid and product.
  c.other_flops_sharded = kLayerNorm * n2 * cz + (kAdd + kSoftmax) * heads * n3 + (kSigmoid + 1) * n2 * hd;
  c.bytes_sharded = e * n2 * (2 * cz + 10 * hd + 2 * heads);
  // On a q x q grid a rank gathers its block's full rows from its row peers and projects the keys,
  // values and bias of all of them: the q ranks of a grid row repeat that work (counted q times).
  if (d.grid_rows == d.grid_cols && d.grid_rows > 1) {
    const double repeat = d.grid_rows - 1;
    c.matmul_flops_sharded += repeat * (2 * n2 * cz * heads + 2 * n2 * cz * 2 * hd);
    c.bytes_sharded += repeat * e * n2 * (cz + 2 * hd + heads);
  }
  return c;
}

// PairTransition (pair: sharded) or SingleTransition (replicated).
ModuleCost TransitionCost(const Dims& d, bool pair) {
  const auto [n, n2, n3, e, cz, cs, tn] = CommonOf(d);
  ModuleCost c;
  const double rows = pair ? n2 : n, ch = pair ? cz : cs;
  const double mm = 6 * rows * tn * ch * ch;  // a, b (c -> n c) and out (n c -> c)
  const double other = kLayerNorm * rows * ch + kSiluMul * rows * tn * ch;
  const double bytes = e * rows * (3 * ch + 4 * tn * ch);
  (pair ? c.matmul_flops_sharded : c.matmul_flops_replicated) = mm;
  (pair ? c.other_flops_sharded : c.other_flops_replicated) = other;
  (pair ? c.bytes_sharded : c.bytes_replicated) = bytes;
  return c;
}

// AttentionPairBias: the pair bias on this rank's block, the single attention replicated.
ModuleCost AttentionPairBiasCost(const Dims& d) {
  const auto [n, n2, n3, e, cz, cs, tn] = CommonOf(d);
  ModuleCost c;
  const double heads = d.Get("single_att_heads");
  // pair bias LN(z) -> H on this rank's pair block; the single attention is replicated:
  // q, k, v, g, o (c_s -> c_s each), scores and weighted values (2 N^2 c_s each).
  c.matmul_flops_sharded = 2 * n2 * cz * heads;
  c.other_flops_sharded = kLayerNorm * n2 * cz;
  c.bytes_sharded = e * n2 * (cz + heads);
  c.matmul_flops_replicated = 5 * 2 * n * cs * cs + 4 * n2 * cs;
  c.other_flops_replicated = kLayerNorm * n * cs + (kAdd + kSoftmax) * heads * n2 + (kSigmoid + 1) * n * cs;
  c.bytes_replicated = e * (12 * n * cs + heads * n2);
  return c;
}

// OuterProductMean: the projections of every MSA row replicated, the outer product sharded.
ModuleCost OuterProductMeanCost(const Dims& d) {
  const auto [n, n2, n3, e, cz, cs, tn] = CommonOf(d);
  ModuleCost c;
  const double s = d.Get("msa_depth"), cm = d.Get("c_m"), h = d.Get("c_opm");
  // a, b (c_m -> h) on every MSA row (replicated), the outer product summed over the S
  // sequences (2 S per output of N^2 h^2), the output (h^2 -> c_z).
  c.matmul_flops_replicated = 2 * 2 * s * n * cm * h;
  c.other_flops_replicated = kLayerNorm * s * n * cm + 2 * s * n * h;
  c.bytes_replicated = e * (2 * s * n * cm + 2 * s * n * h);
  // the mask's count per pair (an S-long dot product of the masks: 2 S N^2).
  c.matmul_flops_sharded = 2 * s * n2 * h * h + 2 * n2 * h * h * cz + 2 * s * n2;
  c.other_flops_sharded = n2 * h * h;  // divide by the mask's count
  c.bytes_sharded = e * n2 * (2 * h * h + cz);
  return c;
}

// MSAPairWeightedAveraging: the pair bias sharded, the weighted average replicated.
ModuleCost MsaPairWeightedAveragingCost(const Dims& d) {
  const auto [n, n2, n3, e, cz, cs, tn] = CommonOf(d);
  ModuleCost c;
  const double s = d.Get("msa_depth"), cm = d.Get("c_m"), heads = d.Get("msa_heads");
  const double hc = heads * d.Get("msa_head_dim");
  c.matmul_flops_sharded = 2 * n2 * cz * heads;  // the pair bias, on this rank's block
  c.other_flops_sharded = kLayerNorm * n2 * cz;
  c.bytes_sharded = e * n2 * (cz + heads);
  // v, g (c_m -> H c), the weighted average (2 S N^2 H c), the output (H c -> c_m).
  c.matmul_flops_replicated = 2 * 2 * s * n * cm * hc + 2 * s * n2 * hc + 2 * s * n * hc * cm;
  c.other_flops_replicated = (kAdd + kSoftmax) * heads * n2 + kLayerNorm * s * n * cm + (kSigmoid + 1) * s * n * hc;
  c.bytes_replicated = e * (3 * heads * n2 + 3 * s * n * cm + 6 * s * n * hc);
  return c;
}

// DiffusionAttentionPairBias: the diffusion transformer's attention, replicated.
ModuleCost DiffusionAttentionPairBiasCost(const Dims& d) {
  const auto [n, n2, n3, e, cz, cs, tn] = CommonOf(d);
  ModuleCost c;
  // AF3 Algorithm 24 with adaptive LN (Algorithm 26) on the token transformer's activations a
  // [K, N, c_a] conditioned on s [K, N, c_s], K = samples; the pair bias [N, N, H] comes
  // precomputed (DiffusionModule.prepare, once per sampling call). Replicated on every rank.
  const double k = d.Get("samples"), ca = d.Get("c_token_diffusion"), heads = d.Get("diffusion_heads");
  // AdaLN scale and shift (c_s -> c_a), q|k|v|g|o (c_a -> c_a), scores and weighted values
  // (2 N^2 c_a each per sample), the output gate from s (c_s -> c_a).
  c.matmul_flops_replicated = k * n * (3 * 2 * cs * ca + 5 * 2 * ca * ca) + k * 4 * n2 * ca;
  // LN(s), LN(a), sigmoid(scale) * LN(a) + shift, the key mask into the bias (once), bias add and
  // softmax per sample, gate sigmoid and product, output gate sigmoid and product.
  c.other_flops_replicated = k * n * (kLayerNorm * cs + kLayerNorm * ca + (kSigmoid + 2) * ca) + heads * n2 +
                             k * (kAdd + kSoftmax) * heads * n2 + 2 * (kSigmoid + 1) * k * n * ca;
  // AdaLN reads a, s, writes x; q|k|v|g reads x, writes 4; attention reads q, k, v and the bias
  // (each sample), writes o; output reads g, o, writes; the gate reads s and it, writes. The
  // bias with its key mask: read and written once.
  c.bytes_replicated = e * (k * n * (16 * ca + 2 * cs) + (k + 2) * heads * n2);
  return c;
}

// DiffusionTransition: the diffusion transformer's conditioned transition, replicated.
ModuleCost DiffusionTransitionCost(const Dims& d) {
  const auto [n, n2, n3, e, cz, cs, tn] = CommonOf(d);
  ModuleCost c;
  // AF3 Algorithm 25 (ConditionedTransitionBlock, SwiGLU, n = 2): AdaLN, a and b (c_a -> 2 c_a),
  // out (2 c_a -> c_a), the output gate from s (c_s -> c_a). Replicated.
  const double k = d.Get("samples"), ca = d.Get("c_token_diffusion"), tn2 = 2;
  c.matmul_flops_replicated = k * n * (3 * 2 * cs * ca + 6 * tn2 * ca * ca);
  c.other_flops_replicated =
      k * n * (kLayerNorm * cs + kLayerNorm * ca + (kSigmoid + 2) * ca + kSiluMul * tn2 * ca + (kSigmoid + 1) * ca);
  c.bytes_replicated = e * k * n * (6 * ca + 4 * tn2 * ca + 2 * cs);
  return c;
}

// DiffusionTransformer: its blocks' attention and transition, with the residual adds.
ModuleCost DiffusionTransformerCost(const Dims& d) {
  const auto [n, n2, n3, e, cz, cs, tn] = CommonOf(d);
  ModuleCost c;
  // AF3 Algorithm 23: diffusion_blocks x (attention + transition), each with its residual add.
  const double k = d.Get("samples"), ca = d.Get("c_token_diffusion"), blocks = d.Get("diffusion_blocks");
  AddWork(c, DiffusionAttentionPairBiasCost(d), blocks);
  AddWork(c, DiffusionTransitionCost(d), blocks);
  c.other_flops_replicated += blocks * 2 * k * n * ca;
  c.bytes_replicated += blocks * 2 * 3 * e * k * n * ca;
  return c;
}

// One Pairformer block of the confidence head: the trunk's formulas with their residual adds.
ModuleCost ConfidenceBlockCost(const Dims& d) {
  const auto [n, n2, n3, e, cz, cs, tn] = CommonOf(d);
  ModuleCost block;
  for (const char* m :
       {"TriangleMultiplicationOutgoing", "TriangleMultiplicationIncoming", "TriangleAttentionStartingNode",
        "TriangleAttentionEndingNode", "PairTransition", "AttentionPairBias", "SingleTransition"}) {
    AddWork(block, *CostOf(m, d), 1);
  }
  block.other_flops_sharded += 5 * n2 * cz;  // the residual adds: 5 on z, 2 on s
  block.bytes_sharded += 5 * 3 * e * n2 * cz;
  block.other_flops_replicated += 2 * n * cs;
  block.bytes_replicated += 2 * 3 * e * n * cs;
  return block;
}

// One sample of the confidence head: the distances embedded, its blocks, the PAE, PDE and pLDDT
// heads.
ModuleCost ConfidenceSampleCost(const Dims& d) {
  const auto [n, n2, n3, e, cz, cs, tn] = CommonOf(d);
  const double blocks = d.Get("confidence_blocks");
  const double pae = d.Get("pae_bins"), pde = d.Get("pde_bins"), plddt = d.Get("plddt_bins");
  ModuleCost sample;
  // torch.cdist of the block's token positions: PyTorch computes it as one matmul of [r, 5] by
  // [5, c] (-2x, |x|^2, 1 against y, 1, |y|^2) when either side has more than 25 points, else
  // elementwise.
  const double rows = n / d.grid_rows, cols = n / d.grid_cols;
  if (rows > 25 || cols > 25) sample.matmul_flops_sharded = 2 * n2 * 5;
  sample.other_flops_sharded = n2 * cz;  // z0 + the distance bins' embedding
  sample.bytes_sharded = e * 2 * n2 * cz;
  AddWork(sample, ConfidenceBlockCost(d), blocks);
  // PAE: LN + Linear(c_z -> pae_bins) on the full z; PDE: z + z^T, LN + Linear(c_z -> pde_bins);
  // pLDDT: LN + Linear(c_s -> plddt_bins) on s. Replicated (every rank has the gathered z).
  sample.matmul_flops_replicated += 2 * n2 * cz * (pae + pde) + 2 * n * cs * plddt;
  sample.other_flops_replicated +=
      kLayerNorm * n2 * cz * 2 + n2 * cz + n2 * (pae + pde) + kLayerNorm * n * cs + n * plddt;
  sample.bytes_replicated += e * (n2 * (cz + pae) + n2 * (4 * cz + pde) + n * (cs + plddt));
  return sample;
}

// ConfidenceModule: the inputs once, then its samples.
ModuleCost ConfidenceModuleCost(const Dims& d) {
  const auto [n, n2, n3, e, cz, cs, tn] = CommonOf(d);
  ModuleCost c;
  // cpfold's confidence head (python/cpfold/model/confidence.py; AF3 Algorithm 31, simplified),
  // one call: the inputs once, then per sample (K) the distances of the predicted structure
  // embedded into z, confidence_blocks Pairformer blocks (the formulas above, with their
  // residual adds) and the PAE, PDE and pLDDT heads on the gathered (replicated) outputs.
  const double k = d.Get("samples"), csi = SingleInputs(d);
  // Once: LN(z) + the s_inputs projections (row and column: c_si -> c_z each, replicated and
  // sliced), LN(s) + linear_s (c_si -> c_s).
  c.other_flops_sharded = (kLayerNorm + 2) * n2 * cz;
  c.bytes_sharded = e * 2 * n2 * cz;
  c.matmul_flops_replicated = 2 * 2 * n * csi * cz + 2 * n * csi * cs;
  c.other_flops_replicated = (kLayerNorm + 1) * n * cs;
  c.bytes_replicated = e * n * (csi + 2 * cz + 2 * cs);
  AddWork(c, ConfidenceSampleCost(d), k);
  return c;
}

// DistogramHead: Linear(c_z -> distogram_bins)(z + z^T) on the full (gathered) z: replicated.
ModuleCost DistogramHeadCost(const Dims& d) {
  const auto [n, n2, n3, e, cz, cs, tn] = CommonOf(d);
  ModuleCost c;
  const double bins = d.Get("distogram_bins");
  c.matmul_flops_replicated = 2 * n2 * cz * bins;
  c.other_flops_replicated = n2 * cz + n2 * bins;
  c.bytes_replicated = e * n2 * (4 * cz + bins);
  return c;
}

}  // namespace

// Every formula is derived in docs/cost-model.md; N2 = N^2, N3 = N^3, e = bytes per element.
std::optional<ModuleCost> CostOf(std::string_view key, const Dims& d) {
  if (key == "TriangleMultiplicationOutgoing" || key == "TriangleMultiplicationIncoming") {
    return TriangleMultiplicationCost(d);
  }
  if (key == "TriangleAttentionStartingNode" || key == "TriangleAttentionEndingNode") return TriangleAttentionCost(d);
  if (key == "PairTransition" || key == "SingleTransition") return TransitionCost(d, key == "PairTransition");
  if (key == "AttentionPairBias") return AttentionPairBiasCost(d);
  if (key == "OuterProductMean") return OuterProductMeanCost(d);
  if (key == "MSAPairWeightedAveraging") return MsaPairWeightedAveragingCost(d);
  if (key == "DiffusionAttentionPairBias") return DiffusionAttentionPairBiasCost(d);
  if (key == "DiffusionTransition") return DiffusionTransitionCost(d);
  if (key == "DiffusionTransformer") return DiffusionTransformerCost(d);
  if (key == "ConfidenceModule") return ConfidenceModuleCost(d);
  if (key == "DistogramHead") return DistogramHeadCost(d);
  return std::nullopt;
}

namespace {

// "trunk/A.forward/B.forward" -> {"trunk", "A", "B"}.
std::vector<std::string> PathParts(std::string_view path) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    std::string part(path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos));
    if (part.size() > 8 && part.compare(part.size() - 8, 8, ".forward") == 0) part.resize(part.size() - 8);
    parts.push_back(std::move(part));
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return parts;
}

// The value of the longest key of `map` that is an end of `parts` ("B", "A/B", ...).
const std::string* LongestEnd(const std::map<std::string, std::string>& map, const std::vector<std::string>& parts) {
  const std::string* found = nullptr;
  std::string end;
  for (size_t i = parts.size(); i-- > 0;) {
    end = end.empty() ? parts[i] : parts[i] + "/" + end;
    auto it = map.find(end);
    if (it != map.end()) found = &it->second;
  }
  return found;
}

}  // namespace

std::string CostConfig::KeyOf(std::string_view module_path) const {
  const std::vector<std::string> parts = PathParts(module_path);
  if (const std::string* key = LongestEnd(modules, parts)) return *key;
  for (const auto& k : CostKeys()) {
    if (k == parts.back()) return k;
  }
  return "";
}

std::string CostConfig::CallsOf(std::string_view module_path) const {
  const std::vector<std::string> parts = PathParts(module_path);
  if (const std::string* expr = LongestEnd(calls, parts)) return *expr;
  auto it = calls.find(parts.front());  // the group
  return it == calls.end() ? "" : it->second;
}

std::optional<model::DevicePeaks> CostConfig::PeaksFor(std::string_view gpu) const {
  for (const auto& p : devices) {
    if (!device.empty()) {
      if (p.name == device) return p;
      continue;
    }
    if (p.match.empty() || gpu.find(p.match) == std::string_view::npos) continue;
    bool ruled_out = false;
    for (const auto& u : p.unless) ruled_out = ruled_out || gpu.find(u) != std::string_view::npos;
    if (!ruled_out) return p;
  }
  return std::nullopt;
}

double PeakTflops(const model::DevicePeaks& p, std::string_view dtype) {
  if (dtype == "fp32") return p.fp32_tflops;
  if (dtype == "tf32") return p.tf32_tflops;
  if (dtype == "fp16") return p.fp16_tflops;
  return p.bf16_tflops;
}

namespace {

nlohmann::ordered_json DeviceJson(const model::DevicePeaks& p) {
  nlohmann::ordered_json j;
  j["name"] = p.name;
  j["match"] = p.match;
  j["unless"] = p.unless;
  j["fp32_tflops"] = p.fp32_tflops;
  j["tf32_tflops"] = p.tf32_tflops;
  j["bf16_tflops"] = p.bf16_tflops;
  j["fp16_tflops"] = p.fp16_tflops;
  j["hbm_tbs"] = p.hbm_tbs;
  j["nvlink_gbs"] = p.nvlink_gbs;
  j["pcie_gbs"] = p.pcie_gbs;
  j["source"] = p.source;
  if (p.nvlink_achievable_gbs > 0) {
    j["nvlink_achievable_gbs"] = p.nvlink_achievable_gbs;
    j["achievable_source"] = p.achievable_source;
  }
  return j;
}

}  // namespace

CostConfig DefaultCostConfig() {
  CostConfig c;
  c.devices = BuiltinDevices();
  AddAchievable(c.devices);
  // Calls per iteration when the capture cannot count them (cpfold's e2e mode: diffusion_steps
  // denoiser calls, the confidence head once, its blocks once per sample).
  c.calls = {{"trunk", "blocks*passes"},
             {"MSA", "msa_blocks*passes"},
             {"confidence", "confidence_blocks*samples"},
             {"ConfidenceModule", "1"},
             {"DistogramHead", "1"},
             {"DiffusionTransformer", "diffusion_steps"},
             {"DiffusionTransformer/AttentionPairBias", "diffusion_blocks*diffusion_steps"},
             {"DiffusionTransformer/ConditionedTransitionBlock", "diffusion_blocks*diffusion_steps"}};
  // The diffusion transformer's blocks: AttentionPairBias and ConditionedTransitionBlock with the
  // conditioning (their class names are shared with the trunk's and the atom transformer's).
  c.modules = {{"DiffusionTransformer/AttentionPairBias", "DiffusionAttentionPairBias"},
               {"DiffusionTransformer/ConditionedTransitionBlock", "DiffusionTransition"}};
  return c;
}

std::string DefaultCostConfigJson() { return CostConfigJson(DefaultCostConfig()); }

std::string CostConfigJson(const CostConfig& c) {
  nlohmann::ordered_json j;
  j["dims"] = nlohmann::ordered_json::object();
  for (const auto& d : kKnownDims) {
    if (d.name == "N" && !c.dims.count("N")) continue;
    auto it = c.dims.find(std::string(d.name));
    j["dims"][std::string(d.name)] = it != c.dims.end() ? it->second : d.default_value;
  }
  j["modules"] = nlohmann::ordered_json::object();
  for (const auto& k : CostKeys()) j["modules"][k] = k;
  for (const auto& [name, key] : c.modules) j["modules"][name] = key;
  j["calls"] = nlohmann::ordered_json::object();
  for (const auto& [g, expr] : c.calls) j["calls"][g] = expr;
  j["devices"] = nlohmann::ordered_json::array();
  for (const auto& p : c.devices) j["devices"].push_back(DeviceJson(p));
  if (!c.device.empty()) j["device"] = c.device;
  return j.dump(2);
}

namespace {

// The error of a bad --model-config, with the format it wants.
Status BadConfig(const std::string& source, const std::string& what) {
  return Status(ExitCode::kBadInput, fmt::format("{}: {}. The format: {{\"dims\": {{\"c_z\": 128, ...}}, \"modules\": "
                                                 "{{\"MyTriMul\": \"TriangleMultiplicationOutgoing\"}}, \"calls\": "
                                                 "{{\"trunk\": \"blocks*passes\"}}, \"devices\": [{{\"name\": ..., "
                                                 "\"match\": ..., \"bf16_tflops\": ..., ...}}], \"device\": NAME}}; "
                                                 "'cpprof report --print-cost-model' prints the built-in one "
                                                 "(docs/cost-model.md)",
                                                 source, what));
}

// The config's "dims" into c.dims; returns what is wrong ("" when nothing).
std::string ReadDims(nlohmann::json& value, CostConfig& c) {
  if (!value.is_object()) return "'dims' must be an object of numbers";
  for (const auto& [name, v] : value.items()) {
    if (!FindDim(name)) {
      return fmt::format("unknown dim '{}' in 'dims' (--model-config); the names: {}", name, KnownDimNames());
    }
    if (!v.is_number() || v.get<double>() < 0) return fmt::format("dims.{} must be a number >= 0", name);
    c.dims[name] = v.get<double>();
  }
  return "";
}

// The config's "modules" into c.modules; returns what is wrong ("" when nothing).
std::string ReadModules(nlohmann::json& value, CostConfig& c) {
  if (!value.is_object()) return "'modules' must be an object: module name -> built-in cost key";
  for (const auto& [name, v] : value.items()) {
    if (!v.is_string()) return fmt::format("modules.{} must be a string", name);
    std::string k = v.get<std::string>();
    if (std::find(CostKeys().begin(), CostKeys().end(), k) == CostKeys().end()) {
      std::string keys;
      for (const auto& x : CostKeys()) keys += (keys.empty() ? "" : ", ") + x;
      return fmt::format("modules.{}: unknown cost key '{}' (the built-in: {})", name, k, keys);
    }
    c.modules[name] = k;
  }
  return "";
}

// The config's "calls" into c.calls; returns what is wrong ("" when nothing).
std::string ReadCalls(nlohmann::json& value, CostConfig& c) {
  if (!value.is_object()) return "'calls' must be an object: group -> a product of dims (\"blocks*passes\")";
  for (const auto& [group, v] : value.items()) {
    if (!v.is_string()) return fmt::format("calls.{} must be a string such as \"blocks*passes\"", group);
    std::string expr = v.get<std::string>();
    std::stringstream ss(expr);
    std::string part;
    while (std::getline(ss, part, '*')) {
      double unused = 0;
      if (!FindDim(part) && !ParseNumber(part, unused)) {
        return fmt::format("calls.{}: '{}' is not a dim or a number (write a product: \"blocks*passes\")", group, part);
      }
    }
    c.calls[group] = expr;
  }
  return "";
}

// One field f of a device into p; returns what is wrong ("" when nothing).
std::string ReadDeviceField(const std::string& f, const nlohmann::json& fv, model::DevicePeaks& p) {
  double* num = f == "fp32_tflops"             ? &p.fp32_tflops
                : f == "tf32_tflops"           ? &p.tf32_tflops
                : f == "bf16_tflops"           ? &p.bf16_tflops
                : f == "fp16_tflops"           ? &p.fp16_tflops
                : f == "hbm_tbs"               ? &p.hbm_tbs
                : f == "nvlink_gbs"            ? &p.nvlink_gbs
                : f == "pcie_gbs"              ? &p.pcie_gbs
                : f == "nvlink_achievable_gbs" ? &p.nvlink_achievable_gbs
                                               : nullptr;
  if (num) {
    if (!fv.is_number() || fv.get<double>() <= 0) return fmt::format("devices: {} must be a number > 0", f);
    *num = fv.get<double>();
  } else if (f == "name" || f == "match" || f == "source" || f == "achievable_source") {
    if (!fv.is_string()) return fmt::format("devices: {} must be a string", f);
    (f == "name"     ? p.name
     : f == "match"  ? p.match
     : f == "source" ? p.source
                     : p.achievable_source) = fv.get<std::string>();
  } else if (f == "unless") {
    if (!fv.is_array()) return "devices: unless must be an array of strings";
    for (const auto& u : fv) {
      if (!u.is_string()) return "devices: unless must be an array of strings";
      p.unless.push_back(u.get<std::string>());
    }
  } else {
    return fmt::format("devices: unknown field '{}'", f);
  }
  return "";
}

// The config's "devices" ahead of the built-in ones in c.devices; returns what is wrong ("" when
// nothing).
std::string ReadDevices(nlohmann::json& value, const std::string& source, CostConfig& c) {
  if (!value.is_array()) return "'devices' must be an array";
  std::vector<model::DevicePeaks> mine;
  for (const auto& dj : value) {
    if (!dj.is_object() || !dj.contains("name") || !dj["name"].is_string()) return "each device needs a \"name\"";
    model::DevicePeaks p;
    for (const auto& [f, fv] : dj.items()) {
      if (std::string err = ReadDeviceField(f, fv, p); !err.empty()) return err;
    }
    if (p.fp16_tflops == 0) p.fp16_tflops = p.bf16_tflops;
    if (p.bf16_tflops == 0 || p.hbm_tbs == 0) {
      return fmt::format("device '{}' needs at least bf16_tflops and hbm_tbs", p.name);
    }
    if (p.source.empty()) p.source = source;
    mine.push_back(std::move(p));
  }
  mine.insert(mine.end(), c.devices.begin(), c.devices.end());
  c.devices = std::move(mine);
  return "";
}

// One top-level field of the config into c; returns what is wrong ("" when nothing).
std::string ReadConfigField(const std::string& key, nlohmann::json& value, const std::string& source, CostConfig& c) {
  if (key == "dims") return ReadDims(value, c);
  if (key == "modules") return ReadModules(value, c);
  if (key == "calls") return ReadCalls(value, c);
  if (key == "devices") return ReadDevices(value, source, c);
  if (key == "device") {
    if (!value.is_string()) return "'device' must be a device's name";
    c.device = value.get<std::string>();
    return "";
  }
  return fmt::format("unknown field '{}'", key);
}

}  // namespace

StatusOr<CostConfig> ParseCostConfig(std::string_view text, const std::string& source) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return BadConfig(source, "not valid JSON");
  if (!j.is_object()) return BadConfig(source, "the top level must be an object");
  CostConfig c = DefaultCostConfig();
  c.source = source;
  for (auto& [key, value] : j.items()) {
    if (std::string err = ReadConfigField(key, value, source, c); !err.empty()) return BadConfig(source, err);
  }
  if (!c.device.empty() && !c.PeaksFor("")) {
    std::string names;
    for (const auto& p : c.devices) names += (names.empty() ? "" : ", ") + p.name;
    return BadConfig(source, fmt::format("device '{}' is not in the devices ({})", c.device, names));
  }
  return c;
}

StatusOr<CostConfig> LoadCostConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(ExitCode::kBadInput, fmt::format("--model-config: cannot read '{}'", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseCostConfig(ss.str(), path);
}

std::string CostTableJson(const CostConfig& config, const Dims& dims) {
  nlohmann::ordered_json j;
  j["schema"] = "cpprof.cost-model/1";
  j["dims"] = dims.ToString();
  j["ranks"] = dims.ranks();
  j["modules"] = nlohmann::ordered_json::array();
  for (const auto& k : CostKeys()) {
    auto c = CostOf(k, dims);
    nlohmann::ordered_json m;
    m["key"] = k;
    m["flops"] = c->Flops();
    m["matmul_flops"] = c->MatmulFlops();
    m["bytes"] = c->Bytes();
    m["flops_per_rank"] = c->FlopsPerRank(dims.ranks());
    m["matmul_flops_per_rank"] = c->MatmulFlopsPerRank(dims.ranks());
    m["bytes_per_rank"] = c->BytesPerRank(dims.ranks());
    m["shift_bytes"] = c->shift_bytes;
    m["shifts"] = c->shifts;
    m["skew_bytes"] = c->skew_bytes;
    m["skews"] = c->skews;
    j["modules"].push_back(m);
  }
  (void)config;
  return j.dump(2);
}

}  // namespace cpprof::analysis
