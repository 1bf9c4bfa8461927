// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// What a GPU operation is, for the CP readout: communication by NCCL kind, compute by kind,
// memory copies and sets. Names here appear in the output and the JSON schema.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace cpprof::model {

enum class OpClass : uint8_t {
  // communication (NCCL kernels, peer-to-peer copies)
  kSendRecv,
  kAllGather,
  kReduceScatter,
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllToAll,
  kNcclOther,  // ncclDevKernel_Generic and other NCCL kernels of no known kind
  kPeerCopy,   // memcpy peer-to-peer
  // compute
  kGemm,
  kAttention,
  kNormalization,
  kSoftmaxReduction,
  kElementwise,
  kComputeOther,
  // memory
  kMemcpy,  // host<->device and device-to-device copies
  kMemset,
  kCount
};

inline constexpr int kNumOpClasses = static_cast<int>(OpClass::kCount);

inline constexpr bool IsComm(OpClass c) { return c <= OpClass::kPeerCopy; }
inline constexpr bool IsKernelCompute(OpClass c) { return c >= OpClass::kGemm && c <= OpClass::kComputeOther; }

// Stable names used in text, CSV and JSON output.
inline constexpr std::array<std::string_view, kNumOpClasses> kOpClassNames = {
    "SendRecv",          "AllGather",   "ReduceScatter", "AllReduce", "Broadcast", "Reduce",
    "AllToAll",          "NCCL other",  "peer copy",     "GEMM",      "attention", "normalization",
    "softmax/reduction", "elementwise", "other compute", "memcpy",    "memset"};

inline constexpr std::string_view Name(OpClass c) { return kOpClassNames[static_cast<int>(c)]; }

// "comm", "compute" (kernels) or "memory" (memcpy, memset). For overlap and the busy split,
// memory ops count on the non-communication side with the kernels.
inline constexpr std::string_view Kind(OpClass c) {
  return IsComm(c) ? "comm" : IsKernelCompute(c) ? "compute" : "memory";
}

}  // namespace cpprof::model
