// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/kernel_names.h"

#include <gtest/gtest.h>

#include <set>

namespace cpprof::render {
namespace {

// Demangled names as nsys 2025.3 writes them (from the committed real exports).
constexpr std::string_view kAddNocast =
    "void at::native::elementwise_kernel<(int)128, (int)4, void "
    "at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16>>(at::TensorIteratorBase &, const "
    "T1 &)::[lambda(int) (instance 1)]>(int, T3)";
constexpr std::string_view kCopy =
    "void at::native::elementwise_kernel<(int)128, (int)4, void "
    "at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() "
    "(instance 3)]::operator ()() const::[lambda() (instance 12)]::operator ()() const::[lambda(c10::BFloat16) "
    "(instance 1)]>(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)";

TEST(ShortKernelName, KeepsTheNameThatTellsKernelsApart) {
  EXPECT_EQ(ShortKernelName(kAddNocast), "at::native::elementwise_kernel<\u2026CUDAFunctor_add<c10::BFloat16>\u2026>");
  EXPECT_EQ(ShortKernelName(kCopy), "at::native::elementwise_kernel<\u2026direct_copy_kernel_cuda\u2026>");
  EXPECT_EQ(ShortKernelName(kAddNocast, "..."), "at::native::elementwise_kernel<...CUDAFunctor_add<c10::BFloat16>...>");
  EXPECT_EQ(ShortKernelName("void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, "
                            "std::array<char *, (unsigned long)1>>(int, T2, T3)",
                            "..."),
            "at::native::vectorized_elementwise_kernel<...FillFunctor<float>...>");
  EXPECT_EQ(ShortKernelName("void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<long, "
                            "at::native::func_wrapper_t<long, at::native::MinNanFunctor<long>>, unsigned int, long, "
                            "(int)4, (int)4>>(T3)",
                            "..."),
            "at::native::reduce_kernel<...MinNanFunctor<long>...>");
  // A wrapper that says something is kept with the functor inside it.
  EXPECT_EQ(ShortKernelName("void at::native::vectorized_elementwise_kernel<(int)4, at::native::AUnaryFunctor<float, "
                            "float, float, at::native::binary_internal::MulFunctor<float>>, std::array<char *, "
                            "(unsigned long)2>>(int, T2, T3)",
                            "..."),
            "at::native::vectorized_elementwise_kernel<...AUnaryFunctor...MulFunctor<float>...>");
}

TEST(ShortKernelName, DropsParametersAndKeepsShortArguments) {
  EXPECT_EQ(ShortKernelName("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)"),
            "ncclDevKernel_SendRecv");
  EXPECT_EQ(ShortKernelName("void at::native::<unnamed>::vectorized_layer_norm_kernel<c10::BFloat16, float, "
                            "(bool)0>(int, T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)"),
            "at::native::<unnamed>::vectorized_layer_norm_kernel<c10::BFloat16, float, (bool)0>");
  // One long name as the only argument: nothing to gain, kept.
  EXPECT_EQ(ShortKernelName("void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_64x1_tn_"
                            "align2>(T1::Params)"),
            "cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_64x1_tn_align2>");
  // Only types inside: the arguments go.
  EXPECT_EQ(ShortKernelName("void <unnamed>::softmax_warp_forward<float, float, float, (int)7, (bool)0, (bool)0>(T2 "
                            "*, const T1 *, int, int, int, const bool *, int, bool)",
                            "..."),
            "<unnamed>::softmax_warp_forward<...>");
}

TEST(ShortKernelName, LeavesOtherNamesAlone) {
  for (std::string_view n : {"[CUDA memcpy Host-to-Device]", "[CUDA memset]", "nvjet_sm90_tst_64x32_64x16_1x4_h_bz_TNT",
                             "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3", "", "()", "f(", "a<b"}) {
    EXPECT_EQ(ShortKernelName(n), n.empty() ? "" : std::string(n)) << n;
  }
}

TEST(ShortKernelName, TwoKernelsThatDifferInTheMiddleStayApart) {
  std::set<std::string> shown{ShortKernelName(kAddNocast), ShortKernelName(kCopy)};
  EXPECT_EQ(shown.size(), 2u);
  // The element type of the functor is kept when short: the same add on float and on long.
  EXPECT_NE(ShortKernelName("void at::native::elementwise_kernel<(int)128, (int)2, void "
                            "at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<long>>(at::"
                            "TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)"),
            ShortKernelName("void at::native::elementwise_kernel<(int)128, (int)2, void "
                            "at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<float>>(at::"
                            "TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)"));
}

TEST(WithoutNamespaces, DropsTheQualifiersBeforeTheOwnNameOnly) {
  EXPECT_EQ(WithoutNamespaces("at::native::<unnamed>::reduce_kernel<...sum_functor...>"),
            "reduce_kernel<...sum_functor...>");
  EXPECT_EQ(WithoutNamespaces("at::native::elementwise_kernel<...at::native::CUDAFunctor_add<float>...>"),
            "elementwise_kernel<...at::native::CUDAFunctor_add<float>...>");
  EXPECT_EQ(WithoutNamespaces("ncclDevKernel_SendRecv"), "ncclDevKernel_SendRecv");
}

TEST(FitKernelName, NamespacesGoFirstThenTheEndNeverTheMiddle) {
  const std::string n = "at::native::elementwise_kernel<...CUDAFunctor_add<float>...>";
  EXPECT_EQ(FitKernelName(n, 0), n);
  EXPECT_EQ(FitKernelName(n, 100), n);
  EXPECT_EQ(FitKernelName(n, 50), "elementwise_kernel<...CUDAFunctor_add<float>...>");
  EXPECT_EQ(FitKernelName(n, 30), "elementwise_kernel<...CUDAF...");
}

}  // namespace
}  // namespace cpprof::render
