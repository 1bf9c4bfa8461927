// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/classify.h"

#include <gtest/gtest.h>

namespace cpprof::analysis {
namespace {

using model::OpClass;

struct Case {
  const char* name;
  OpClass cls;
};

// Every distinct kernel name in the real H200 exports under tests/data/real (torch 2.11,
// NCCL 2.28, cuBLAS 13), with the class a reader of the profile would give it.
const Case kRealNames[] = {
    {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)", OpClass::kAllGather},
    {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)", OpClass::kAllReduce},
    {"ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)",
     OpClass::kReduceScatter},
    {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)", OpClass::kSendRecv},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__"
     "5x_cublas",
     OpClass::kGemm},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x128x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__"
     "5x_cublas",
     OpClass::kGemm},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__"
     "5x_cublas",
     OpClass::kGemm},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__"
     "5x_cublas",
     OpClass::kGemm},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x32x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__"
     "5x_cublas",
     OpClass::kGemm},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__"
     "5x_cublas",
     OpClass::kGemm},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x128x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__"
     "5x_cublas",
     OpClass::kGemm},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__"
     "5x_cublas",
     OpClass::kGemm},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_tt_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__"
     "5x_cublas",
     OpClass::kGemm},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_tt_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__"
     "5x_cublas",
     OpClass::kGemm},
    {"void <unnamed>::softmax_warp_backward<float, float, float, (int)4, (bool)0, (bool)0>(T2 *, const T1 *, const T1 "
     "*, int, int, int, const bool *)",
     OpClass::kSoftmaxReduction},
    {"void <unnamed>::softmax_warp_forward<float, float, float, (int)4, (bool)0, (bool)0>(T2 *, const T1 *, int, int, "
     "int, const bool *, int, bool)",
     OpClass::kSoftmaxReduction},
    {"void at::native::<unnamed>::GammaBetaBackwardCUDAKernelTemplate<float, float, (unsigned int)32, (unsigned "
     "int)32, (unsigned int)256, (bool)0, (bool)1, (bool)0>(long, long, const T1 *, const T1 *, const T2 *, const T2 "
     "*, T1 *, T1 *)",
     OpClass::kNormalization},
    {"void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4, void "
     "at::native::templates::cuda::normal_and_transform<float, float, at::CUDAGeneratorImpl *, void "
     "at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *>(const at::TensorBase &, double, double, "
     "T1)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 2)]::operator ()() const::[lambda(float) "
     "(instance 1)]>(at::TensorIteratorBase &, T3, T4)::[lambda(curandStatePhilox4_32_10 *) (instance 2)], void "
     "at::native::<unnamed>::distribution_nullary_kernel<float, float, float4, at::CUDAGeneratorImpl *, void "
     "at::native::templates::cuda::normal_and_transform<float, float, at::CUDAGeneratorImpl *, void "
     "at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *>(const at::TensorBase &, double, double, "
     "T1)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 2)]::operator ()() const::[lambda(float) "
     "(instance 1)]>(at::TensorIteratorBase &, T3, T4)::[lambda(curandStatePhilox4_32_10 *) (instance 2)], void "
     "at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *>(const at::TensorBase &, double, double, "
     "T1)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 2)]::operator ()() const::[lambda(float) "
     "(instance 1)]>(at::TensorIteratorBase &, T4, const T5 &, T6)::[lambda(int, float) (instance 1)]>(long, "
     "at::PhiloxCudaState, T3, T4)",
     OpClass::kElementwise},
    {"void at::native::<unnamed>::layer_norm_grad_input_kernel_vectorized<float, float, (bool)0>(const T1 *, const T1 "
     "*, const T2 *, const T2 *, const T1 *, T1 *, int)",
     OpClass::kNormalization},
    {"void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>::TensorListMetadata<(int)2>, "
     "at::native::<unnamed>::BinaryOpListAlphaFunctor<float, (int)2, (int)2, (int)0>, std::plus<float>, float>(T1, T2, "
     "T3...)",
     OpClass::kElementwise},
    {"void at::native::<unnamed>::vectorized_layer_norm_kernel<float, float, (bool)0>(int, T2, const T1 *, const T1 *, "
     "const T1 *, T2 *, T2 *, T1 *)",
     OpClass::kNormalization},
    {"void at::native::elementwise_kernel<(int)128, (int)2, void "
     "at::native::gpu_kernel_impl_nocast<at::native::BUnaryFunctor<float, float, float, "
     "at::native::binary_internal::MulFunctor<float>>>(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance "
     "1)]>(int, T3)",
     OpClass::kElementwise},
    {"void at::native::elementwise_kernel<(int)128, (int)2, void "
     "at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<float>>(at::TensorIteratorBase &, const T1 "
     "&)::[lambda(int) (instance 1)]>(int, T3)",
     OpClass::kElementwise},
    {"void at::native::elementwise_kernel<(int)128, (int)2, void "
     "at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() "
     "(instance 3)]::operator ()() const::[lambda() (instance 7)]::operator ()() const::[lambda(float) (instance "
     "1)]>(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
     OpClass::kElementwise},
    {"void at::native::reduce_kernel<(int)128, (int)4, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
     "at::native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::[lambda(float, float) (instance "
     "1)]>, unsigned int, float, (int)4, (int)4>>(T3)",
     OpClass::kSoftmaxReduction},
    {"void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::MeanOps<float, float, "
     "float, float>, unsigned int, float, (int)4, (int)4>>(T3)",
     OpClass::kSoftmaxReduction},
    {"void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
     "at::native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::[lambda(float, float) (instance "
     "1)]>, unsigned int, float, (int)4, (int)4>>(T3)",
     OpClass::kSoftmaxReduction},
    {"void at::native::vectorized_elementwise_kernel<(int)4, "
     "at::native::<unnamed>::launch_clamp_scalar(at::TensorIteratorBase &, c10::Scalar, c10::Scalar, "
     "at::native::detail::ClampLimits)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance "
     "7)]::operator ()() const::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)",
     OpClass::kElementwise},
    {"void at::native::vectorized_elementwise_kernel<(int)4, at::native::BinaryFunctor<float, float, float, "
     "at::native::binary_internal::MulFunctor<float>>, std::array<char *, (unsigned long)3>>(int, T2, T3)",
     OpClass::kElementwise},
    {"void at::native::vectorized_elementwise_kernel<(int)4, at::native::BinaryFunctor<float, float, float, void "
     "at::native::<unnamed>::threshold_kernel_impl<float>(at::TensorIteratorBase &, T1, T1)::[lambda(float, float) "
     "(instance 1)]>, std::array<char *, (unsigned long)3>>(int, T2, T3)",
     OpClass::kElementwise},
    {"void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<float>, std::array<char *, "
     "(unsigned long)3>>(int, T2, T3)",
     OpClass::kElementwise},
    {"void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, std::array<char *, "
     "(unsigned long)1>>(int, T2, T3)",
     OpClass::kElementwise},
    {"void at::native::vectorized_elementwise_kernel<(int)4, "
     "at::native::sigmoid_backward_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 2)]::operator ()() "
     "const::[lambda() (instance 2)]::operator ()() const::[lambda(float, float) (instance 1)], std::array<char *, "
     "(unsigned long)3>>(int, T2, T3)",
     OpClass::kElementwise},
    {"void at::native::vectorized_elementwise_kernel<(int)4, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase "
     "&)::[lambda() (instance 2)]::operator ()() const::[lambda() (instance 2)]::operator ()() const::[lambda(float) "
     "(instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)",
     OpClass::kElementwise},
    {"void cublasLt::epilogue::impl::globalKernel<(int)8, (int)32, float, float, float, (bool)1, (bool)1, (int)1>(int, "
     "int, long, T3 *, cublasLtEpilogue_t, int, T4 *, long, void *, long, long, long, T5 *, long, int *)",
     OpClass::kGemm},
    {"void cublasLt::splitKreduce_kernel<(int)32, (int)16, int, float, float, float, float, (bool)0, float, float, "
     "float, (bool)1, (bool)0, (bool)0, (bool)0>(cublasLt::cublasSplitKParams<T6>, const T4 *, const T10 *, T9 *, T5 "
     "*, const T6 *, const T6 *, const T11 *, const T4 *, T11 *, void *, long, T6 *, int *, T6 *, T6 *, const T6 *, "
     "const T6 *, const T6 *, const T6 *, const T6 *)",
     OpClass::kGemm},
    {"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(T1::Params)", OpClass::kGemm},
    {"void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>(T1::Params)", OpClass::kGemm},
    {"void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nt_align1>(T1::Params)", OpClass::kGemm},
    {"void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tt_align1>(T1::Params)", OpClass::kGemm},
    {"void scal_kernel<float, float, (int)1, (bool)1, (int)6, (int)5, (int)5, (int)3>(cublasTransposeParams<T2>, const "
     "T1 *, T1 *, const T2 *)",
     OpClass::kGemm},
    {"void sgemm_largek_lds64<(bool)1, (bool)0, (int)5, (int)5, (int)4, (int)4, (int)4, (int)34>(float *, const float "
     "*, const float *, int, int, int, int, int, int, const float *, const float *, float, float, int, int, int *, int "
     "*)",
     OpClass::kGemm},
};

TEST(Classify, RealKernelNamesFromH200Exports) {
  for (const auto& c : kRealNames) {
    EXPECT_EQ(model::Name(ClassifyKernel(c.name)), model::Name(c.cls)) << c.name;
  }
}

// Names seen in other stacks: legacy NCCL (< 2.19), the kind-less generic kernel, symmetric
// kernels, Hopper cuBLASLt (nvjet), fused attention, Inductor/Triton, CUTLASS 3.
const Case kOtherNames[] = {
    {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", OpClass::kAllReduce},
    {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", OpClass::kSendRecv},
    {"ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclWorkElem)", OpClass::kBroadcast},
    {"ncclKernel_Reduce_RING_LL_Sum_half(ncclWorkElem)", OpClass::kReduce},
    {"ncclKernel_ReduceScatter_RING_LL_Sum_bf16(ncclWorkElem)", OpClass::kReduceScatter},
    {"ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", OpClass::kNcclOther},
    {"ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", OpClass::kNcclOther},
    {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", OpClass::kAllGather},
    {"ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)", OpClass::kBroadcast},
    {"ncclDevKernel_AlltoAll_RING(ncclDevKernelArgsStorage<4096ul>)", OpClass::kAllToAll},
    {"ncclSymkDevKernel_AllGather_LL(ncclSymkDevWorkArgs4K)", OpClass::kAllGather},
    {"ncclSymDevKernel_AllReduce_RSxLD_AGxST_sum_bf16(ncclSymDevArgs)", OpClass::kAllReduce},
    {"nvjet_tst_192x192_64x3_2x1_v_bz_coopB_TNT", OpClass::kGemm},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_"
     "cublas",
     OpClass::kGemm},
    {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>>>(T1::Params)",
     OpClass::kGemm},
    {"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
     "cutlass::bfloat16_t>>(Flash_fwd_params)",
     OpClass::kAttention},
    {"fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
     "cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)",
     OpClass::kAttention},
    {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0",
     OpClass::kAttention},
    {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
     "namespace)::SoftMaxForwardEpilogue>(T4 *, const T2 *, int)",
     OpClass::kSoftmaxReduction},
    {"void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, const float *, float "
     "*, float *)",
     OpClass::kComputeOther},
    {"triton_poi_fused_add_mul_0", OpClass::kElementwise},
    {"triton_red_fused__softmax_1", OpClass::kSoftmaxReduction},
    {"triton_per_fused_native_layer_norm_2", OpClass::kNormalization},
    {"triton_tem_fused_mm_3", OpClass::kGemm},
    {"void rms_norm_kernel<c10::BFloat16>(c10::BFloat16 *, const c10::BFloat16 *, float, int, int)",
     OpClass::kNormalization},
    {"my_custom_kernel(float *)", OpClass::kComputeOther},
    {"", OpClass::kComputeOther},
};

TEST(Classify, OtherStacks) {
  for (const auto& c : kOtherNames) {
    EXPECT_EQ(model::Name(ClassifyKernel(c.name)), model::Name(c.cls)) << c.name;
  }
}

TEST(Classify, PatternTableIsNonEmptyAndLowercase) {
  ASSERT_FALSE(KernelPatterns().empty());
  for (const auto& p : KernelPatterns()) {
    for (char ch : p.text) EXPECT_FALSE(ch >= 'A' && ch <= 'Z') << p.text;  // matched case-insensitively
  }
}

}  // namespace
}  // namespace cpprof::analysis
