// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/gemm_dtype.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

namespace cpprof::analysis {

namespace {

bool Has(const std::string& s, std::initializer_list<std::string_view> any) {
  return std::any_of(any.begin(), any.end(), [&](std::string_view w) { return s.find(w) != std::string::npos; });
}

// The name up to its template arguments, at most 80 characters: what the origin quotes.
std::string Short(std::string_view name) {
  std::string s(name.substr(0, std::min(name.find('<'), name.size())));
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

}  // namespace

std::optional<KernelDtype> GemmKernelDtype(std::string_view name) {
  std::string s(name);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool attention = Has(s, {"fmha", "flash_fwd", "flash_bwd", "flash_attn", "attention"});
  if (Has(s, {"splitkreduce", "reduce_kernel"}) ||
      (!attention && !Has(s, {"gemm", "xmma", "cutlass", "cublas", "s16816", "h16816", "s1688", "h1688"}))) {
    return std::nullopt;
  }
  KernelDtype k;
  if (Has(s, {"bf16", "bfloat16"})) {
    k.dtype = "bf16";
  } else if (Has(s, {"f16", "fp16", "half", "h16816", "h1688", "hgemm"})) {
    k.dtype = "fp16";
  } else if (Has(s, {"tf32", "s16816", "s1688"})) {
    k.dtype = "tf32";
  } else if (Has(s, {"f32", "fp32", "sgemm", "ffma", "float"})) {
    k.dtype = "fp32";
  } else {
    return std::nullopt;
  }
  k.kind = attention ? "attention" : Has(s, {"ffma", "simt", "sgemm"}) ? "SIMT GEMM (FFMA)" : "tensor-core GEMM";
  return k;
}

Dims DtypeFromKernels(const std::map<std::string, int64_t>& launches) {
  struct Share {
    int64_t launches = 0;
    std::string example, kind;  // the most launched kernel of the dtype
    int64_t example_launches = 0;
  };
  std::map<std::string, Share> by_dtype;
  int64_t total = 0;
  for (const auto& [name, n] : launches) {
    auto k = GemmKernelDtype(name);
    if (!k || n <= 0) continue;
    Share& s = by_dtype[k->dtype];
    s.launches += n;
    total += n;
    if (n > s.example_launches) s.example = Short(name), s.kind = k->kind, s.example_launches = n;
  }
  Dims d;
  if (total == 0) return d;
  std::vector<std::pair<std::string, Share>> order(by_dtype.begin(), by_dtype.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second.launches > b.second.launches; });
  d.dtype = order.front().first;
  std::string shares;
  for (const auto& [dtype, s] : order) {
    shares += fmt::format("{}{} {:.0f} % ({}: {})", shares.empty() ? "" : ", ", dtype,
                          100.0 * static_cast<double>(s.launches) / static_cast<double>(total), s.kind, s.example);
  }
  d.origin["dtype"] = "kernels: GEMM and attention launches: " + shares;
  d.source = "the kernels";
  return d;
}

}  // namespace cpprof::analysis
