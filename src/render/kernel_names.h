// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Kernel names short enough to read, still telling kernels apart. C++ kernel names differ in the
// middle (`elementwise_kernel<128, 4, gpu_kernel_impl<CUDAFunctor_add<float>>...>` vs
// `<..., direct_copy_kernel_cuda...>`), so cutting the middle of the string (right for file
// paths) makes two kernels print alike. Instead the return type and the parameter list are
// dropped and long template argument lists shrink to the one name inside them that says what the
// kernel does: `at::native::elementwise_kernel<…CUDAFunctorOnSelf_add…>`. Full names stay in
// JSON, on hover in HTML and with --full-names in text.
#pragma once

#include <string>
#include <string_view>

namespace cpprof::render {

// Template argument lists up to this many characters are kept whole (`<c10::BFloat16, float>`).
inline constexpr size_t kKeptTemplateArgs = 32;

// The short form of a demangled kernel name (or any other op name, returned unchanged when it
// has nothing to shorten: `[CUDA memcpy Host-to-Device]`, `sm90_xmma_gemm_...`): a leading
// `void ` and the trailing parameter list dropped; the outer template argument list, when longer
// than kKeptTemplateArgs, replaced by the (at most two) most deeply nested names in it that are
// not types, wrappers or helpers (`<…CUDAFunctor_add…>`), or by `<…>` when there is none.
// `ellipsis` is "…" for HTML and JSON, "..." for text tables (which count bytes).
std::string ShortKernelName(std::string_view name, std::string_view ellipsis = "\u2026");

// `name` without the namespaces or classes before its own name (`at::native::<unnamed>::` in
// `at::native::<unnamed>::reduce_kernel<...>`); those inside its template arguments stay.
std::string WithoutNamespaces(std::string_view name);

// A text name made to fit `room` characters (0: any length): its namespaces go first, then its
// end ("..."), never its middle.
std::string FitKernelName(std::string name, size_t room);

// The name a text table shows: the full name when `full`, else the short one with "...".
inline std::string KernelNameForText(std::string_view name, bool full) {
  return full ? std::string(name) : ShortKernelName(name, "...");
}

}  // namespace cpprof::render
