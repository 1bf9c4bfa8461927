// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/gemm_dtype.h"

#include <gtest/gtest.h>

#include <string>

namespace cpprof::analysis {
namespace {

std::string DtypeOf(const std::string& name) {
  auto k = GemmKernelDtype(name);
  return k ? k->dtype + " " + k->kind : "-";
}

// The GEMM names of the committed exports (tests/data/real: cpfold-opts-full-1x2, cpwork-train,
// cpfold-train-1x2 all ran cuBLAS's fp32 SIMT kernels), and the names other dtypes run under.
TEST(GemmDtype, KernelNames) {
  EXPECT_EQ(DtypeOf("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_"
                    "execute_kernel__5x_cublas"),
            "fp32 SIMT GEMM (FFMA)");
  EXPECT_EQ(DtypeOf("ampere_sgemm_128x64_tn"), "fp32 SIMT GEMM (FFMA)");
  EXPECT_EQ(DtypeOf("gemmk1_kernel"), "-") << "a GEMM whose name does not say";
  // cpfold-opts-full-1x2 (--dtype bf16) ran these beside its fp32 ones:
  EXPECT_EQ(DtypeOf("void cutlass::Kernel2<cutlass_75_tensorop_s1688gemm_bf16_64x64_tn_align1>(T1::Params)"),
            "bf16 tensor-core GEMM");
  EXPECT_EQ(DtypeOf("void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x2_tn_align2>("
                    "T1::Params)"),
            "bf16 tensor-core GEMM");
  EXPECT_EQ(DtypeOf("void cublasLt::splitKreduce_kernel<(int)32, (int)16, int, float, __nv_bfloat16, float>"), "-")
      << "split-K's reduction is not a GEMM";
  EXPECT_EQ(DtypeOf("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
                    "segment_k_off_kernel__5x_cublas"),
            "bf16 tensor-core GEMM");
  EXPECT_EQ(DtypeOf("sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_cgasize1x2x1_execute_kernel"),
            "tf32 tensor-core GEMM");
  EXPECT_EQ(DtypeOf("ampere_s16816gemm_128x128_ldg8_stages_32x5_tn"), "tf32 tensor-core GEMM");
  EXPECT_EQ(DtypeOf("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn"), "fp16 tensor-core GEMM");
  EXPECT_EQ(DtypeOf("ampere_h16816gemm_128x128_ldg8_stages_32x5_nn"), "fp16 tensor-core GEMM");
  EXPECT_EQ(DtypeOf("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8"), "bf16 tensor-core GEMM");
  EXPECT_EQ(DtypeOf("void flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
                    "cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t>>, false>"),
            "bf16 attention");
  EXPECT_EQ(DtypeOf("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, "
                    "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"),
            "fp32 attention");
  EXPECT_EQ(DtypeOf("void at::native::elementwise_kernel<128, 2, float>"), "-");
  EXPECT_EQ(DtypeOf("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"), "-");
}

TEST(GemmDtype, TheMostLaunchedDtypeWithEachShare) {
  Dims d = DtypeFromKernels({{"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_ffma_kernel", 30},
                             {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_kernel", 70},
                             {"gemmk1_kernel", 5},
                             {"elementwise_kernel", 1000}});
  EXPECT_EQ(d.dtype, "bf16");
  EXPECT_EQ(d.origin.at("dtype"),
            "kernels: GEMM and attention launches: bf16 70 % (tensor-core GEMM: "
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_kernel), fp32 30 % (SIMT GEMM (FFMA): "
            "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_ffma_kernel)");
  EXPECT_TRUE(DtypeFromKernels({{"elementwise_kernel", 3}}).origin.empty());
}

}  // namespace
}  // namespace cpprof::analysis
