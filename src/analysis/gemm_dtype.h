// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The dtype the GPU computed in, from the names of the GEMM and attention kernels that ran (not from
// a flag): cuBLAS's and CUTLASS's names carry it (`sm80_xmma_gemm_f32f32_..._ffma_...` is fp32 on
// the SIMT cores, `sm90_xmma_gemm_bf16bf16_...` bf16 on the tensor cores, `..._tf32f32_...` and
// `s16816gemm` TF32), so do flash and memory-efficient attention's (`cutlass::bfloat16_t`,
// `fmha_cutlassF_f32_...`). docs/cost-model.md lists the rules.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "analysis/cost_model.h"

namespace cpprof::analysis {

struct KernelDtype {
  std::string dtype;  // bf16, fp16, tf32, fp32
  std::string kind;   // "tensor-core GEMM", "SIMT GEMM (FFMA)", "attention"
};

// The dtype of a GEMM or attention kernel by its name; nullopt for other kernels and for GEMMs
// whose name does not say (`gemmk1_kernel`).
std::optional<KernelDtype> GemmKernelDtype(std::string_view name);

// The dtype most GEMM and attention launches ran in, from kernel name -> launches: dtype and
// origin["dtype"] set ("kernels: GEMM and attention launches: fp32 100 % (SIMT GEMM (FFMA): ...)",
// with each dtype's share when several ran). Nothing set when no kernel says.
Dims DtypeFromKernels(const std::map<std::string, int64_t>& launches);

}  // namespace cpprof::analysis
