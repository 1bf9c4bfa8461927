// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/classify.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace cpprof::analysis {

using model::OpClass;
using M = KernelPattern::Match;

// Order matters: NCCL first (its names contain "Reduce"), the compound collective names before
// their parts (ReduceScatter and AllReduce before Reduce), attention before GEMM (fused attention
// kernels are often CUTLASS-based), normalization before reductions and elementwise.
static constexpr std::array kTable = {
    // NCCL: legacy ncclKernel_*, current ncclDevKernel_*, symmetric-memory ncclSymk*/ncclSym*.
    // Every kernel whose name starts with "nccl" is communication; its kind is read below.
    KernelPattern{M::kPrefix, "nccl", OpClass::kNcclOther},
    // compute
    KernelPattern{M::kContains, "flash", OpClass::kAttention},
    KernelPattern{M::kContains, "fmha", OpClass::kAttention},
    KernelPattern{M::kContains, "sdpa", OpClass::kAttention},
    KernelPattern{M::kContains, "attention", OpClass::kAttention},
    KernelPattern{M::kContains, "gemm", OpClass::kGemm},  // sgemm, s1688gemm, implicit_gemm, gemmSN
    KernelPattern{M::kContains, "gemv", OpClass::kGemm},
    KernelPattern{M::kContains, "cutlass", OpClass::kGemm},
    KernelPattern{M::kContains, "xmma", OpClass::kGemm},
    KernelPattern{M::kContains, "cublas", OpClass::kGemm},
    KernelPattern{M::kPrefix, "nvjet", OpClass::kGemm},  // cuBLASLt kernels on Hopper/Blackwell
    KernelPattern{M::kContains, "wgmma", OpClass::kGemm},
    KernelPattern{M::kPrefix, "triton_tem", OpClass::kGemm},  // Inductor template kernels (mm/bmm)
    KernelPattern{M::kContains, "layer_norm", OpClass::kNormalization},
    KernelPattern{M::kContains, "layernorm", OpClass::kNormalization},
    KernelPattern{M::kContains, "rms_norm", OpClass::kNormalization},
    KernelPattern{M::kContains, "rmsnorm", OpClass::kNormalization},
    KernelPattern{M::kContains, "batch_norm", OpClass::kNormalization},
    KernelPattern{M::kContains, "batchnorm", OpClass::kNormalization},
    KernelPattern{M::kContains, "group_norm", OpClass::kNormalization},
    KernelPattern{M::kContains, "groupnorm", OpClass::kNormalization},
    KernelPattern{M::kContains, "instance_norm", OpClass::kNormalization},
    KernelPattern{M::kContains, "gammabeta", OpClass::kNormalization},  // LayerNorm backward
    KernelPattern{M::kContains, "softmax", OpClass::kSoftmaxReduction},
    KernelPattern{M::kContains, "reduce_kernel", OpClass::kSoftmaxReduction},
    KernelPattern{M::kContains, "reduction", OpClass::kSoftmaxReduction},
    KernelPattern{M::kContains, "devicereduce", OpClass::kSoftmaxReduction},
    KernelPattern{M::kContains, "devicesegmentedreduce", OpClass::kSoftmaxReduction},
    KernelPattern{M::kContains, "devicescan", OpClass::kSoftmaxReduction},
    KernelPattern{M::kPrefix, "triton_red", OpClass::kSoftmaxReduction},
    KernelPattern{M::kPrefix, "triton_per", OpClass::kSoftmaxReduction},
    KernelPattern{M::kContains, "elementwise", OpClass::kElementwise},         // vectorized_/unrolled_
    KernelPattern{M::kContains, "multi_tensor_apply", OpClass::kElementwise},  // foreach / optimizers
    KernelPattern{M::kContains, "catarraybatchedcopy", OpClass::kElementwise},
    KernelPattern{M::kContains, "copy_kernel", OpClass::kElementwise},
    KernelPattern{M::kContains, "fill_kernel", OpClass::kElementwise},
    KernelPattern{M::kPrefix, "triton_poi", OpClass::kElementwise},
};

// NCCL kinds, read from the kernel name after its "nccl..." prefix.
struct NcclKind {
  std::string_view token;
  OpClass cls;
};
static constexpr std::array kNcclKinds = {
    NcclKind{"sendrecv", OpClass::kSendRecv},   NcclKind{"reducescatter", OpClass::kReduceScatter},
    NcclKind{"allreduce", OpClass::kAllReduce}, NcclKind{"allgather", OpClass::kAllGather},
    NcclKind{"alltoall", OpClass::kAllToAll},   NcclKind{"broadcast", OpClass::kBroadcast},
    NcclKind{"reduce", OpClass::kReduce},       NcclKind{"send", OpClass::kSendRecv},
    NcclKind{"recv", OpClass::kSendRecv},
};

std::span<const KernelPattern> KernelPatterns() { return kTable; }

// Kernel names start with "void " when demangled from a function returning void.
static std::string_view StripReturnType(std::string_view name) {
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  return name;
}

OpClass ClassifyKernel(std::string_view raw) {
  std::string lower(StripReturnType(raw));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& p : kTable) {
    bool hit = p.match == M::kPrefix ? lower.starts_with(p.text) : lower.find(p.text) != std::string::npos;
    if (!hit) continue;
    if (p.cls != OpClass::kNcclOther) return p.cls;
    // The kind is the first token after the prefix: ncclDevKernel_AllGather_RING_LL,
    // ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t. Kind-less ncclDevKernel_Generic stays "other".
    std::string_view rest(lower);
    size_t us = rest.find('_');
    if (us == std::string_view::npos) return OpClass::kNcclOther;
    rest.remove_prefix(us + 1);
    for (const auto& k : kNcclKinds) {
      if (rest.starts_with(k.token)) return k.cls;
    }
    return OpClass::kNcclOther;
  }
  return OpClass::kComputeOther;
}

}  // namespace cpprof::analysis
