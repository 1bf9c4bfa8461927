// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Writes a large synthetic nsys SQLite export in the real schema (bench/nsys-3.20.3-schema.sql,
// copied from an nsys 2025.3.1 export), shaped like a real context-parallel (CP) training capture
// made with `--trace cuda,nvtx,osrt --cuda-memory-usage true --pytorch=autograd-shapes-nvtx
// --python-functions-trace=...`, for benchmarking cpprof (and nsys) at scale:
//
//   make_synthetic_export OUT.sqlite [--size-gb X | --kernels N] [--ranks R] [--blocks B] [--seed S]
//       [--nvtx-per-kernel F] [--runtime-per-kernel F] [--osrt-per-kernel F] [--memusage-per-kernel F]
//       [--memcpy-per-kernel F] [--memset-per-kernel F] [--slow-rank R] [--schema FILE] [--quiet]
//   (older totals still work: --runtime N, --nvtx N, --memops N = that many over --kernels N; with
//   them the OS runtime and memory usage ratios default to 0, the older kernel-heavy shape)
//
// It stops after the first whole iteration at which the file reaches --size-gb (10^9 bytes) or
// the kernels reach --kernels (default: --kernels 5000000 when neither is given).
//
// The shape, per rank (= one process, globalPid = 1<<48 | pid<<24, globalTid = globalPid | tid,
// as nsys writes them; deviceId = rank), per iteration (NVTX range `cpfold:warmup0`, then
// `cpfold:iter1`, `cpfold:iter2`, ... in the default domain):
// - forward on the main thread ("python"), inside functions-trace module ranges of the domain
//   "cpfold" (registered strings): CPFoldModel.training_loss > CPFoldModel.trunk > MSAModule.forward
//   (OuterProductMean, MSAPairWeightedAveraging) and PairformerModule.forward > B x
//   PairformerBlock.forward > TriangleMultiplicationOutgoing/Incoming, TriangleAttentionStarting/
//   EndingNode, PairTransition, AttentionPairBias, SingleTransition (.forward);
// - each op is a nest of PyTorch autograd ranges with `seq = N, op_id = N, sizes = [...],
//   input_op_ids = [...]` (text, default domain) around one kernel launch (cudaLaunchKernel or
//   cuLaunchKernelEx) and a few other runtime calls; non-launching ops (aten::view, aten::empty...)
//   fill up the NVTX-per-kernel ratio;
// - TriMul does a CP ring exchange (cpfold.cp.comm.batch_p2p > c10d/nccl ranges > NCCL domain
//   ncclGroupStart/ncclSend/ncclRecv/ncclGroupEnd > ncclDevKernel_SendRecv), triangle attention an
//   all-gather (ncclDevKernel_AllGather_RING_LL); NCCL kernels run on their own stream and end at
//   the same time on every rank (the early ranks wait inside the kernel);
// - backward on the autograd thread (pt_autograd_0): `autograd::engine::evaluate_function: XBackward0`
//   > `XBackward0, seq = N` > aten ops, two kernels per forward kernel, SendRecv and ReduceScatter
//   for the comms; then an AllReduce and Optimizer.step#Adam.step (multi-tensor kernels);
// - kernels on a compute stream, a side stream (about 1 in 10) and the NCCL stream; memcpys and
//   memsets on the compute stream; GPU memory usage events (allocation/free pairs); OS runtime
//   calls (poll, ioctl, accept, stat64, ...) on the NCCL watchdog/heartbeat and Python threads.
// Rows are written in global start order per table, as nsys does.
//
// Default ratios, per kernel (measured on tests/data/real, nsys 2025.3.1; see bench/README.md):
// NVTX events 12, CUDA runtime rows 4, OS runtime rows 25, memory usage events 0.5, memcpys 0.16,
// memsets 0.036; 4 ranks, 8 Pairformer blocks (about 2,800 kernels per rank and iteration).
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

void Die(const std::string& msg) {
  std::fprintf(stderr, "make_synthetic_export: %s\n", msg.c_str());
  std::exit(1);
}

void Check(int rc, sqlite3* db, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) Die(std::string(what) + ": " + sqlite3_errmsg(db));
}

// ---- names ----------------------------------------------------------------------------------

// Kernel families: a demangled name pattern (%d = a variant), its short name and its duration.
struct KernelFamily {
  const char* demangled;
  const char* short_name;
  int variants;
  int64_t min_ns, max_ns;
  bool driver_launch;  // launched with cuLaunchKernelEx (cuBLAS nvjet) instead of cudaLaunchKernel
};
enum Family {
  kGemm,
  kGemmSplitK,
  kSplitKReduce,
  kLayerNorm,
  kLayerNormBwd,
  kGammaBeta,
  kSoftmax,
  kSoftmaxBwd,
  kAdd,
  kMul,
  kSigmoid,
  kCopy,
  kReduce,
  kFill,
  kCat,
  kAdam,
  kNumComputeFamilies,
  kSendRecv = kNumComputeFamilies,
  kAllGather,
  kReduceScatter,
  kAllReduce,
  kNumFamilies
};
const KernelFamily kFamilies[kNumFamilies] = {
    {"nvjet_sm90_tst_%dx64_64x16_2x1_v_bz_NNT", "nvjet_sm90_tst_%dx64_64x16_2x1_v_bz_NNT", 6, 8'000, 260'000, true},
    {"nvjet_sm90_tst_32x64_64x16_%dx2_h_bz_splitK_NTN", "nvjet_sm90_tst_32x64_64x16_%dx2_h_bz_splitK_NTN", 4, 6'000,
     120'000, true},
    {"void cublasLt::splitKreduce_kernel<(int)32, (int)16, int, float, __nv_bfloat16, float, __nv_bfloat16, (bool)%d, "
     "(bool)0, (bool)0, (bool)0>(cublasLt::cublasSplitKParams<T6>, const T4 *, const T5 *, T5 *, const T3 *, const T6 "
     "*, T5 *, void *, long, T6 *, int *, T6 *, T6 *, const T6 *, const T6 *)",
     "splitKreduce_kernel", 2, 2'000, 12'000, false},
    {"void at::native::<unnamed>::vectorized_layer_norm_kernel<c10::BFloat16, float, (bool)%d>(int, T2, const T1 *, "
     "const T1 *, const T1 *, T2 *, T2 *, T1 *)",
     "vectorized_layer_norm_kernel", 2, 4'000, 60'000, false},
    {"void at::native::<unnamed>::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float, (bool)%d>(const T1 *, "
     "const T1 *, const T2 *, const T2 *, const T1 *, T1 *, int)",
     "layer_norm_grad_input_kernel_vectorized", 2, 5'000, 70'000, false},
    {"void at::native::<unnamed>::GammaBetaBackwardCUDAKernelTemplate<c10::BFloat16, float, (unsigned int)%d, "
     "(unsigned int)16, (unsigned int)32, (bool)0, (bool)1>(long, long, const T1 *, const T1 *, const T2 *, const T2 "
     "*, T1 *, T1 *)",
     "GammaBetaBackwardCUDAKernelTemplate", 3, 4'000, 40'000, false},
    {"void <unnamed>::cunn_SoftMaxForward<(int)%d, c10::BFloat16, float, c10::BFloat16, "
     "<unnamed>::SoftMaxForwardEpilogue>(T4 *, const T2 *, int)",
     "cunn_SoftMaxForward", 3, 5'000, 90'000, false},
    {"void <unnamed>::cunn_SoftMaxBackward<(int)%d, c10::BFloat16, float, c10::BFloat16, "
     "<unnamed>::SoftMaxBackwardEpilogue>(T2 *, const T4 *, const T4 *, long)",
     "cunn_SoftMaxBackward", 3, 6'000, 100'000, false},
    {"void at::native::vectorized_elementwise_kernel<(int)%d, at::native::CUDAFunctor_add<c10::BFloat16>, "
     "std::array<char *, (unsigned long)3>>(int, T2, T3)",
     "vectorized_elementwise_kernel", 3, 1'500, 40'000, false},
    {"void at::native::vectorized_elementwise_kernel<(int)%d, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
     "c10::BFloat16, at::native::binary_internal::MulFunctor<float>>, std::array<char *, (unsigned long)3>>(int, T2, "
     "T3)",
     "vectorized_elementwise_kernel", 3, 1'500, 40'000, false},
    {"void at::native::vectorized_elementwise_kernel<(int)%d, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase "
     "&)::[lambda() (instance 2)]::operator ()() const::[lambda() (instance 2)]::operator ()() const::[lambda("
     "c10::BFloat16) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)",
     "vectorized_elementwise_kernel", 2, 1'500, 30'000, false},
    {"void at::native::elementwise_kernel<(int)128, (int)%d, void at::native::gpu_kernel_impl_nocast<at::native::"
     "direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() const::[lambda() "
     "(instance 12)]::operator ()() const::[lambda(c10::BFloat16) (instance 1)]>(at::TensorIteratorBase &, const T1 "
     "&)::[lambda(int) (instance 1)]>(int, T3)",
     "elementwise_kernel", 3, 2'000, 50'000, false},
    {"void at::native::reduce_kernel<(int)%d, (int)1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
     "at::native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::[lambda(float, float) (instance "
     "1)]>, unsigned int, float, (int)4, (int)4>>(T3)",
     "reduce_kernel", 3, 3'000, 60'000, false},
    {"void at::native::vectorized_elementwise_kernel<(int)%d, at::native::FillFunctor<c10::BFloat16>, std::array<char "
     "*, (unsigned long)1>>(int, T2, T3)",
     "vectorized_elementwise_kernel", 2, 1'000, 8'000, false},
    {"void at::native::<unnamed>::CatArrayBatchedCopy_alignedK_contig<at::native::<unnamed>::OpaqueType<(unsigned "
     "int)2>, unsigned int, (int)%d, (int)128, (int)1, (int)16, (int)8>(T1 *, at::native::<unnamed>::"
     "CatArrInputTensorMetadata<T1, T2, T4, T5>, at::native::<unnamed>::TensorSizeStride<T2, (unsigned int)4>, int, "
     "T2)",
     "CatArrayBatchedCopy_alignedK_contig", 2, 3'000, 50'000, false},
    {"void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>::TensorListMetadata<(int)%d>, "
     "at::native::<unnamed>::FusedAdamMathFunctor<float, (int)4, (at::native::ADAM_MODE)0, (bool)0>, float *, double, "
     "double, double, double, double, bool, const float *, const float *>(T1, T2, T3...)",
     "multi_tensor_apply_kernel", 2, 20'000, 200'000, false},
    {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)", "ncclDevKernel_SendRecv", 1, 20'000,
     200'000, true},
    {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)",
     "ncclDevKernel_AllGather_RING_LL", 1, 15'000, 150'000, true},
    {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)",
     "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", 1, 15'000, 150'000, true},
    {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)",
     "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1, 30'000, 400'000, true},
};

// Forward aten ops: the outer op, its inner op (the one that launches), the kernel family and
// the backward node that undoes it.
struct AtenOp {
  const char* outer;
  const char* inner;
  Family family;
  const char* backward;  // "MmBackward0"
  Family bwd_family;
};
const AtenOp kAtenOps[] = {
    {"aten::linear", "aten::addmm", kGemm, "AddmmBackward0", kGemmSplitK},
    {"aten::linear", "aten::mm", kGemm, "MmBackward0", kGemm},
    {"aten::layer_norm", "aten::native_layer_norm", kLayerNorm, "NativeLayerNormBackward0", kLayerNormBwd},
    {"aten::add", "aten::add", kAdd, "AddBackward0", kAdd},
    {"aten::mul", "aten::mul", kMul, "MulBackward0", kMul},
    {"aten::sigmoid", "aten::sigmoid", kSigmoid, "SigmoidBackward0", kMul},
    {"aten::softmax", "aten::_softmax", kSoftmax, "SoftmaxBackward0", kSoftmaxBwd},
    {"aten::einsum", "aten::bmm", kGemm, "BmmBackward0", kGemm},
    {"aten::contiguous", "aten::copy_", kCopy, "CloneBackward0", kCopy},
    {"aten::sum", "aten::sum", kReduce, "SumBackward1", kAdd},
    {"aten::cat", "aten::cat", kCat, "CatBackward0", kCopy},
};
constexpr int kNumAtenOps = sizeof(kAtenOps) / sizeof(kAtenOps[0]);
const char* const kNoLaunchOps[] = {"aten::view",         "aten::empty",         "aten::as_strided",
                                    "aten::reshape",      "aten::transpose",     "aten::t",
                                    "aten::unsqueeze",    "aten::empty_strided", "aten::permute",
                                    "aten::_unsafe_view", "aten::expand",        "aten::slice"};
constexpr int kNumNoLaunchOps = sizeof(kNoLaunchOps) / sizeof(kNoLaunchOps[0]);

const char* const kExtraRuntime[] = {"cuKernelGetName",
                                     "cudaStreamIsCapturing_v10000",
                                     "cuKernelGetAttribute",
                                     "cudaEventQuery_v3020",
                                     "cudaThreadExchangeStreamCaptureMode_v10010",
                                     "cudaEventRecord_v3020",
                                     "cudaStreamWaitEvent_v3020",
                                     "cuGetProcAddress_v2"};
constexpr int kNumExtraRuntime = sizeof(kExtraRuntime) / sizeof(kExtraRuntime[0]);
// OS runtime calls as seen in tests/data/real/cpwork-full (most frequent first), and how long.
struct OsrtCall {
  const char* name;
  int64_t min_ns, max_ns;
};
const OsrtCall kOsrt[] = {{"poll", 5'000, 400'000}, {"ioctl", 800, 30'000},   {"accept", 2'000, 300'000},
                          {"stat64", 600, 4'000},   {"open64", 1'500, 9'000}, {"send", 1'000, 12'000},
                          {"recv", 1'000, 20'000},  {"read", 700, 8'000},     {"close", 500, 3'000},
                          {"mmap64", 1'000, 9'000}, {"munmap", 1'000, 9'000}, {"recvmsg", 1'000, 15'000}};
constexpr int kNumOsrt = sizeof(kOsrt) / sizeof(kOsrt[0]);

// ---- options ---------------------------------------------------------------------------------

struct Options {
  std::string out;
  double size_gb = 0;
  int64_t kernels = 0;
  int ranks = 4;
  int blocks = 8;
  unsigned seed = 1;
  int slow_rank = -1;
  bool quiet = false;
  double nvtx_per_kernel = 12, runtime_per_kernel = 4, osrt_per_kernel = 25, memusage_per_kernel = 0.5,
         memcpy_per_kernel = 0.16, memset_per_kernel = 0.036;
  std::string schema = std::string(CPPROF_SOURCE_DIR) + "/bench/nsys-3.20.3-schema.sql";
};

const char kUsage[] =
    "usage: make_synthetic_export OUT.sqlite [--size-gb X | --kernels N] [--ranks R] [--blocks B] [--seed S]\n"
    "         [--nvtx-per-kernel F] [--runtime-per-kernel F] [--osrt-per-kernel F] [--memusage-per-kernel F]\n"
    "         [--memcpy-per-kernel F] [--memset-per-kernel F] [--slow-rank R] [--schema FILE] [--quiet]\n"
    "       (older totals: --runtime N, --nvtx N, --memops N: that many over --kernels N)\n";

Options Parse(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fputs(kUsage, stderr);
    std::exit(2);
  }
  Options o;
  o.out = argv[1];
  int64_t runtime_total = -1, nvtx_total = -1, memops_total = -1;
  bool osrt_given = false, memusage_given = false;
  for (int i = 2; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--quiet") {
      o.quiet = true;
      continue;
    }
    if (i + 1 >= argc) Die("option " + k + " needs a value\n" + kUsage);
    const char* v = argv[++i];
    char* endp = nullptr;
    double d = std::strtod(v, &endp);
    if (k != "--schema" && (endp == v || *endp != '\0' || d < 0))
      Die("option " + k + ": '" + v + "' is not a number >= 0");
    if (k == "--size-gb")
      o.size_gb = d;
    else if (k == "--kernels")
      o.kernels = static_cast<int64_t>(d);
    else if (k == "--ranks")
      o.ranks = static_cast<int>(d);
    else if (k == "--blocks")
      o.blocks = std::max(1, static_cast<int>(d));
    else if (k == "--seed")
      o.seed = static_cast<unsigned>(d);
    else if (k == "--slow-rank")
      o.slow_rank = static_cast<int>(d);
    else if (k == "--nvtx-per-kernel")
      o.nvtx_per_kernel = d;
    else if (k == "--runtime-per-kernel")
      o.runtime_per_kernel = d;
    else if (k == "--osrt-per-kernel")
      o.osrt_per_kernel = d, osrt_given = true;
    else if (k == "--memusage-per-kernel")
      o.memusage_per_kernel = d, memusage_given = true;
    else if (k == "--memcpy-per-kernel")
      o.memcpy_per_kernel = d;
    else if (k == "--memset-per-kernel")
      o.memset_per_kernel = d;
    else if (k == "--runtime")
      runtime_total = static_cast<int64_t>(d);
    else if (k == "--nvtx")
      nvtx_total = static_cast<int64_t>(d);
    else if (k == "--memops")
      memops_total = static_cast<int64_t>(d);
    else if (k == "--schema")
      o.schema = v;
    else
      Die("unknown option " + k + "\n" + kUsage);
  }
  if (o.ranks < 1 || o.ranks > 64) Die("--ranks must be 1..64");
  if (o.size_gb <= 0 && o.kernels <= 0) o.kernels = 5'000'000;
  if (runtime_total >= 0 || nvtx_total >= 0 || memops_total >= 0) {
    // The older, kernel-heavy shape: totals over --kernels, no OS runtime calls or memory usage
    // events unless asked for.
    if (o.kernels <= 0) Die("--runtime/--nvtx/--memops are totals over --kernels N: give --kernels too");
    if (!osrt_given) o.osrt_per_kernel = 0;
    if (!memusage_given) o.memusage_per_kernel = 0;
    double k = static_cast<double>(o.kernels);
    if (runtime_total >= 0) o.runtime_per_kernel = runtime_total / k;
    if (nvtx_total >= 0) o.nvtx_per_kernel = nvtx_total / k;
    if (memops_total >= 0) {
      o.memcpy_per_kernel = 0.75 * memops_total / k;
      o.memset_per_kernel = 0.25 * memops_total / k;
    }
  }
  return o;
}

// ---- rows, buffered and written in start order ------------------------------------------------

struct KernelRow {
  int64_t start, end, corr, gpid, grid_id;
  int32_t device, stream, family, variant;
};
struct RuntimeRow {
  int64_t start, end, tid, corr, name_id;
  int32_t event_class;
};
struct NvtxRow {
  int64_t start, end, tid, text_id;  // end < 0: no end (a mark or a domain); text_id 0: text
  int32_t type, domain;
  std::string text;
};
struct OsrtRow {
  int64_t start, end, tid, name_id;
};
struct MemcpyRow {
  int64_t start, end, corr, gpid, bytes;
  int32_t device, stream, copy_kind;
  bool memset;
};
struct MemUseRow {
  int64_t start, gpid, address, bytes, corr;
  int32_t device, op;
};

struct Writer {
  sqlite3* db = nullptr;
  sqlite3_stmt *kernel = nullptr, *runtime = nullptr, *nvtx = nullptr, *osrt = nullptr, *memcpy_ = nullptr,
               *memset_ = nullptr, *memuse = nullptr;
  std::vector<KernelRow> kernels;
  std::vector<RuntimeRow> runtimes;
  std::vector<NvtxRow> nvtxs;
  std::vector<OsrtRow> osrts;
  std::vector<MemcpyRow> memops;
  std::vector<MemUseRow> memuses;
  std::vector<int64_t> kernel_name_ids, kernel_short_ids;  // per family * 8 + variant
  int64_t written_rows = 0;

  void Prepare(sqlite3_stmt** st, const char* sql) { Check(sqlite3_prepare_v2(db, sql, -1, st, nullptr), db, sql); }
  void Open() {
    Prepare(&kernel,
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, greenContextId, streamId, "
            "correlationId, globalPid, demangledName, shortName, mangledName, launchType, cacheConfig, "
            "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
            "localMemoryPerThread, localMemoryTotal, gridId, sharedMemoryExecuted, sharedMemoryLimitConfig) "
            "VALUES (?,?,?,1,0,?,?,?,?,?,?,1,1,?,?,?,1,?,1,1,0,?,0,250871808,?,?,0)");
    Prepare(&runtime,
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
            "returnValue) VALUES (?,?,?,?,?,?,0)");
    Prepare(&nvtx,
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) "
            "VALUES (?,?,?,?,?,?,?)");
    Prepare(&osrt,
            "INSERT INTO OSRT_API (start, end, eventClass, globalTid, nameId, returnValue, nestingLevel, "
            "callchainId) VALUES (?,?,27,?,?,0,0,0)");
    Prepare(&memcpy_,
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, greenContextId, "
            "streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind, copyCount) "
            "VALUES (?,?,?,1,0,?,?,?,?,?,?,2,1)");
    Prepare(&memset_,
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, greenContextId, "
            "streamId, correlationId, globalPid, value, bytes, memKind) VALUES (?,?,?,1,0,?,?,?,0,?,2)");
    Prepare(&memuse,
            "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc, "
            "bytes, memKind, memoryOperationType, correlationId, streamId) VALUES (?,?,?,1,?,0,?,2,?,?,7)");
  }
  void Close() {
    for (sqlite3_stmt* st : {kernel, runtime, nvtx, osrt, memcpy_, memset_, memuse}) sqlite3_finalize(st);
  }
  void Step(sqlite3_stmt* st, const char* what) {
    Check(sqlite3_step(st), db, what);
    sqlite3_reset(st);
    ++written_rows;
  }

  // Writes the buffered rows that start before `watermark` (no row made later starts before it),
  // in start order, and keeps the rest.
  std::vector<std::pair<int64_t, uint32_t>> order_;  // (start, index), sorted
  template <typename Row, typename Fn>
  void FlushTable(std::vector<Row>& rows, int64_t watermark, Fn write) {
    order_.clear();
    for (size_t i = 0; i < rows.size(); ++i) order_.emplace_back(rows[i].start, static_cast<uint32_t>(i));
    std::sort(order_.begin(), order_.end());  // by start, then by creation
    std::vector<Row> kept;
    for (const auto& [start, i] : order_) {
      if (start < watermark)
        write(rows[i]);
      else
        kept.push_back(std::move(rows[i]));
    }
    rows = std::move(kept);
  }
  void Flush(int64_t watermark) {
    FlushTable(kernels, watermark, [&](const KernelRow& k) {
      const KernelFamily& f = kFamilies[k.family];
      int idx = k.family * 8 + k.variant;
      sqlite3_bind_int64(kernel, 1, k.start);
      sqlite3_bind_int64(kernel, 2, k.end);
      sqlite3_bind_int64(kernel, 3, k.device);
      sqlite3_bind_int64(kernel, 4, k.stream);
      sqlite3_bind_int64(kernel, 5, k.corr);
      sqlite3_bind_int64(kernel, 6, k.gpid);
      sqlite3_bind_int64(kernel, 7, kernel_name_ids[idx]);
      sqlite3_bind_int64(kernel, 8, kernel_short_ids[idx]);
      sqlite3_bind_int64(kernel, 9, kernel_name_ids[idx]);
      sqlite3_bind_int64(kernel, 10, 32 + 8 * (k.family % 8));
      sqlite3_bind_int64(kernel, 11, 64 << (k.variant % 4));
      sqlite3_bind_int64(kernel, 12, 1 + k.family % 3);
      sqlite3_bind_int64(kernel, 13, f.driver_launch ? 384 : 128);
      sqlite3_bind_int64(kernel, 14, f.driver_launch ? 164308 : 0);
      sqlite3_bind_int64(kernel, 15, k.grid_id);
      sqlite3_bind_int64(kernel, 16, f.driver_launch ? 167936 : 32768);
      Step(kernel, "kernel");
    });
    FlushTable(runtimes, watermark, [&](const RuntimeRow& r) {
      sqlite3_bind_int64(runtime, 1, r.start);
      sqlite3_bind_int64(runtime, 2, r.end);
      sqlite3_bind_int64(runtime, 3, r.event_class);
      sqlite3_bind_int64(runtime, 4, r.tid);
      sqlite3_bind_int64(runtime, 5, r.corr);
      sqlite3_bind_int64(runtime, 6, r.name_id);
      Step(runtime, "runtime");
    });
    FlushTable(nvtxs, watermark, [&](const NvtxRow& r) {
      sqlite3_bind_int64(nvtx, 1, r.start);
      if (r.end >= 0)
        sqlite3_bind_int64(nvtx, 2, r.end);
      else
        sqlite3_bind_null(nvtx, 2);
      sqlite3_bind_int64(nvtx, 3, r.type);
      if (r.text_id == 0)
        sqlite3_bind_text(nvtx, 4, r.text.data(), static_cast<int>(r.text.size()), SQLITE_STATIC);
      else
        sqlite3_bind_null(nvtx, 4);
      sqlite3_bind_int64(nvtx, 5, r.tid);
      if (r.text_id != 0)
        sqlite3_bind_int64(nvtx, 6, r.text_id);
      else
        sqlite3_bind_null(nvtx, 6);
      sqlite3_bind_int64(nvtx, 7, r.domain);
      Step(nvtx, "nvtx");
    });
    FlushTable(osrts, watermark, [&](const OsrtRow& r) {
      sqlite3_bind_int64(osrt, 1, r.start);
      sqlite3_bind_int64(osrt, 2, r.end);
      sqlite3_bind_int64(osrt, 3, r.tid);
      sqlite3_bind_int64(osrt, 4, r.name_id);
      Step(osrt, "osrt");
    });
    FlushTable(memops, watermark, [&](const MemcpyRow& m) {
      sqlite3_stmt* st = m.memset ? memset_ : memcpy_;
      sqlite3_bind_int64(st, 1, m.start);
      sqlite3_bind_int64(st, 2, m.end);
      sqlite3_bind_int64(st, 3, m.device);
      sqlite3_bind_int64(st, 4, m.stream);
      sqlite3_bind_int64(st, 5, m.corr);
      sqlite3_bind_int64(st, 6, m.gpid);
      sqlite3_bind_int64(st, 7, m.bytes);
      if (!m.memset) {
        sqlite3_bind_int64(st, 8, m.copy_kind);
        sqlite3_bind_int64(st, 9, m.copy_kind == 1 ? 0 : 2);  // srcKind: pageable host or device
      }
      Step(st, m.memset ? "memset" : "memcpy");
    });
    FlushTable(memuses, watermark, [&](const MemUseRow& m) {
      sqlite3_bind_int64(memuse, 1, m.start);
      sqlite3_bind_int64(memuse, 2, m.gpid);
      sqlite3_bind_int64(memuse, 3, m.device);
      sqlite3_bind_int64(memuse, 4, m.address);
      sqlite3_bind_int64(memuse, 5, m.bytes);
      sqlite3_bind_int64(memuse, 6, m.op);
      sqlite3_bind_int64(memuse, 7, m.corr);
      Step(memuse, "memory usage");
    });
  }
};

// ---- the simulation ---------------------------------------------------------------------------

constexpr int kComputeStream = 7, kSideStream = 13, kNcclStream = 20;
constexpr int kDomainCpfold = 1, kDomainNccl = 2;

// A per-kernel ratio kept exact on average: Take() says how many rows the next kernel gets.
struct Credit {
  double per_kernel = 0, owed = 0;
  int Take() {
    owed += per_kernel;
    int n = static_cast<int>(owed);
    owed -= n;
    return n;
  }
};

struct Rank {
  int index = 0;
  int64_t pid = 0, gpid = 0, main_tid = 0, bwd_tid = 0;
  std::vector<int64_t> side_tids;      // OS runtime threads
  std::vector<int64_t> side_clock;     // when each is next free
  int64_t host = 0;                    // the host clock (main thread, then autograd thread)
  int64_t stream_free[3] = {0, 0, 0};  // compute, side, NCCL
  int64_t op_id = 0, seq = 0, next_address = 0x7f0000000000;
  std::vector<std::pair<int64_t, int64_t>> live_allocs;  // address, bytes
  int64_t kernels = 0, nvtx_rows = 0, runtime_rows = 0;  // written so far (the ratios)
  std::mt19937_64 rng;
  double kernel_scale = 1.0;
  struct Open {
    int64_t start;
    int64_t text_id;
    int32_t domain;
    std::string text;
  };
  std::vector<Open> stack;  // open NVTX push/pop ranges of the current thread
  Credit osrt, memuse, memcpy_, memset_;
};

class Generator {
 public:
  Generator(const Options& o, Writer& w) : o_(o), w_(w), structure_(o.seed) {}

  void AddStrings(sqlite3* db);
  void Setup(sqlite3* db);
  void Iteration(int it);
  int64_t Watermark() const {
    int64_t m = INT64_MAX;
    for (const Rank& r : ranks_) m = std::min(m, r.host);
    return m;
  }
  int64_t kernels() const { return kernels_; }

 private:
  int64_t U(Rank& r, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(r.rng); }
  int SU(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(structure_); }
  int64_t Corr() { return next_corr_++; }
  int64_t Sid(const char* s) {  // the names are string literals: cached by address
    auto cached = by_address_.find(s);
    if (cached != by_address_.end()) return cached->second;
    auto it = string_ids_.find(s);
    if (it == string_ids_.end()) Die(std::string("internal: string not registered: ") + s);
    by_address_.emplace(s, it->second);
    return it->second;
  }

  void Push(Rank& r, int32_t domain, int64_t text_id, std::string text, int64_t tid_unused = 0) {
    (void)tid_unused;
    r.stack.push_back({r.host, text_id, domain, std::move(text)});
    r.host += U(r, 300, 2'000);
  }
  void Pop(Rank& r, int64_t tid) {
    Rank::Open& op = r.stack.back();
    r.host += U(r, 200, 1'000);
    w_.nvtxs.push_back({op.start, r.host, tid, op.text_id, 59, op.domain, std::move(op.text)});
    ++r.nvtx_rows;
    r.stack.pop_back();
  }
  void Module(const char* name, int64_t tid) {
    int64_t id = Sid(name);
    for (Rank& r : ranks_) Push(r, kDomainCpfold, id, {});
    (void)tid;
  }
  void EndModule(int64_t which_tid_main) {
    for (Rank& r : ranks_) Pop(r, which_tid_main ? r.main_tid : r.bwd_tid);
  }
  std::string Sizes(int dims_seed) const;
  // One runtime call on the host clock; returns its correlation id.
  int64_t Runtime(Rank& r, int64_t tid, const char* name, int64_t min_ns, int64_t max_ns) {
    int64_t c = Corr();
    int64_t s = r.host, e = s + U(r, min_ns, max_ns);
    w_.runtimes.push_back({s, e, tid, c, Sid(name), 1});
    ++r.runtime_rows;
    r.host = e + U(r, 200, 1'500);
    return c;
  }
  // Side work of one kernel: extra runtime rows, memcpys/memsets, memory events, OS runtime rows.
  void SideWork(Rank& r, int64_t tid, int64_t op_start);
  void Kernel(Rank& r, int64_t tid, Family f, int stream_slot);
  // An op; in the backward pass `seq` is the sequence number of the forward op it undoes.
  void ComputeOp(bool backward, const AtenOp& op, int64_t seq = 0);
  void Nccl(bool backward, Family f, const char* c10d, const char* nccl_range, const char* module);
  void Forward();
  void Backward(int fwd_ops);

  const Options& o_;
  Writer& w_;
  std::mt19937_64 structure_;  // decisions shared by every rank (same program on every rank)
  std::vector<Rank> ranks_;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, int64_t> string_ids_;
  std::unordered_map<const char*, int64_t> by_address_;
  int64_t next_corr_ = 1, grid_id_ = 1, kernels_ = 0;
  // The forward ops of this iteration: kAtenOps index (-1 p2p, -2 all-gather) and autograd seq
  // (the same on every rank: every rank runs the same program).
  std::vector<std::pair<int, int64_t>> fwd_trace_;
};

std::string Generator::Sizes(int s) const {
  static const int kDims[] = {1, 4, 16, 32, 64, 128, 256, 384, 512, 1024, 2048};
  auto d = [&](int k) { return kDims[(s * 7 + k * 3) % 11]; };
  char buf[160];
  switch (s % 4) {
    case 0:
      std::snprintf(buf, sizeof(buf), "[[%d, %d, %d], [%d, %d], [%d]]", d(0), d(1), d(2), d(2), d(3), d(3));
      break;
    case 1:
      std::snprintf(buf, sizeof(buf), "[[%d, %d, %d, %d], [%d, %d, %d, %d], []]", d(0), d(1), d(2), d(3), d(0), d(1),
                    d(2), d(3));
      break;
    case 2:
      std::snprintf(buf, sizeof(buf), "[[%d, %d], [%d, %d]]", d(0), d(1), d(1), d(2));
      break;
    default:
      std::snprintf(buf, sizeof(buf), "[[%d, %d, %d], [], []]", d(0), d(1), d(2));
      break;
  }
  return buf;
}

void Generator::AddStrings(sqlite3* db) {
  char buf[1024];
  for (int f = 0; f < kNumFamilies; ++f) {
    for (int v = 0; v < 8; ++v) {
      int variant_value = kFamilies[f].variants > 1 ? (f == kGemm ? 32 << (v % 3) : 1 << (v % 4 + 1)) : 0;
      std::snprintf(buf, sizeof(buf), kFamilies[f].demangled, variant_value);
      strings_.push_back(buf);
      w_.kernel_name_ids.push_back(static_cast<int64_t>(strings_.size()));
      std::snprintf(buf, sizeof(buf), kFamilies[f].short_name, variant_value);
      strings_.push_back(buf);
      w_.kernel_short_ids.push_back(static_cast<int64_t>(strings_.size()));
    }
  }
  for (const char* s : {"cudaLaunchKernel_v7000", "cuLaunchKernelEx", "cudaMemcpyAsync_v3020", "cudaMemsetAsync_v3020",
                        "cudaStreamSynchronize_v3020", "cuMemCreate", "cuMemRelease"})
    strings_.push_back(s);
  for (const char* s : kExtraRuntime) strings_.push_back(s);
  for (const OsrtCall& c : kOsrt) strings_.push_back(c.name);
  for (const char* s : {"python",
                        "pt_autograd_0",
                        "pt_nccl_watchdg",
                        "pt_nccl_heartbt",
                        "ncclGroupStart",
                        "ncclGroupEnd",
                        "ncclSend",
                        "ncclRecv",
                        "ncclAllGather",
                        "ncclReduceScatter",
                        "ncclAllReduce",
                        "cpfold.cp.wrapper.ContextParallel.training_loss",
                        "cpfold.model.fold.CPFoldModel.training_loss",
                        "cpfold.model.fold.CPFoldModel.trunk",
                        "cpfold.model.msa.MSAModule.forward",
                        "cpfold.model.msa.OuterProductMean.forward",
                        "cpfold.model.msa.MSAPairWeightedAveraging.forward",
                        "cpfold.model.pairformer.PairformerModule.forward",
                        "cpfold.model.pairformer.PairformerBlock.forward",
                        "cpfold.model.pairformer.TriangleMultiplicationOutgoing.forward",
                        "cpfold.model.pairformer.TriangleMultiplicationIncoming.forward",
                        "cpfold.model.pairformer.TriangleAttentionStartingNode.forward",
                        "cpfold.model.pairformer.TriangleAttentionEndingNode.forward",
                        "cpfold.model.pairformer.PairTransition.forward",
                        "cpfold.model.common.AttentionPairBias.forward",
                        "cpfold.model.pairformer.SingleTransition.forward",
                        "cpfold.cp.comm.batch_p2p",
                        "cpfold.cp.comm.all_gather_cat",
                        "cpfold.cp.comm.reduce_scatter_cat"})
    strings_.push_back(s);
  sqlite3_stmt* st = nullptr;
  Check(sqlite3_prepare_v2(db, "INSERT INTO StringIds VALUES (?, ?)", -1, &st, nullptr), db, "prepare StringIds");
  for (size_t i = 0; i < strings_.size(); ++i) {
    string_ids_.emplace(strings_[i], static_cast<int64_t>(i) + 1);
    sqlite3_bind_int64(st, 1, static_cast<int64_t>(i) + 1);
    sqlite3_bind_text(st, 2, strings_[i].c_str(), -1, SQLITE_STATIC);
    Check(sqlite3_step(st), db, "StringIds");
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
}

void Generator::Setup(sqlite3* db) {
  AddStrings(db);
  auto exec = [&](const std::string& sql) {
    Check(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), db, sql.c_str());
  };
  ranks_.resize(o_.ranks);
  for (int i = 0; i < o_.ranks; ++i) {
    Rank& r = ranks_[i];
    r.index = i;
    r.pid = 731 + 17 * i;
    r.gpid = (int64_t{1} << 48) | (r.pid << 24);
    r.main_tid = r.gpid | r.pid;
    r.bwd_tid = r.gpid | (r.pid + 44);
    for (int k = 0; k < 5; ++k) {
      r.side_tids.push_back(r.gpid | (r.pid + 13 + k));
      r.side_clock.push_back(0);
    }
    r.rng.seed(o_.seed * 7919u + static_cast<unsigned>(i) * 104729u + 1u);
    r.host = 14'900'000'000 + 137'000 * i;
    r.kernel_scale = i == o_.slow_rank ? 1.3 : 1.0;
    r.osrt.per_kernel = o_.osrt_per_kernel;
    r.memuse.per_kernel = o_.memusage_per_kernel;
    r.memcpy_.per_kernel = o_.memcpy_per_kernel;
    r.memset_.per_kernel = o_.memset_per_kernel;
    exec("INSERT INTO PROCESSES VALUES (" + std::to_string(r.gpid) + ", " + std::to_string(r.pid) + ", 'python')");
    auto thread = [&](int64_t tid, const char* name) {
      exec("INSERT INTO ThreadNames VALUES (" + std::to_string(Sid(name)) + ", 20, " + std::to_string(tid) + ")");
    };
    thread(r.main_tid, "python");
    thread(r.bwd_tid, "pt_autograd_0");
    thread(r.side_tids[0], "pt_nccl_watchdg");
    thread(r.side_tids[1], "pt_nccl_heartbt");
    for (int k = 2; k < 5; ++k) thread(r.side_tids[k], "python");
    // NVTX domains as nsys exports them (eventType 75, the name in text).
    w_.nvtxs.push_back({r.host - 5'000'000, -1, r.main_tid, 0, 75, kDomainCpfold, "cpfold"});
    w_.nvtxs.push_back({r.host - 4'000'000, -1, r.main_tid, 0, 75, kDomainNccl, "NCCL"});
  }
}

void Generator::SideWork(Rank& r, int64_t tid, int64_t op_start) {
  // Extra runtime calls up to the ratio (launches, memops and memory calls count too).
  int64_t owed = static_cast<int64_t>(o_.runtime_per_kernel * static_cast<double>(r.kernels)) - r.runtime_rows;
  for (int64_t n = std::min<int64_t>(owed, 4 * static_cast<int64_t>(o_.runtime_per_kernel) + 4); n > 0; --n) {
    Runtime(r, tid, kExtraRuntime[U(r, 0, kNumExtraRuntime - 1)], 300, 3'000);
  }
  const int memcpys = r.memcpy_.Take(), memsets = r.memset_.Take();
  for (int k = 0; k < memcpys + memsets; ++k) {
    bool memset = k >= memcpys;
    int64_t c = Runtime(r, tid, memset ? "cudaMemsetAsync_v3020" : "cudaMemcpyAsync_v3020", 2'000, 9'000);
    int kind = memset ? 0 : (U(r, 0, 9) < 6 ? 8 : (U(r, 0, 1) ? 1 : 2));  // DtoD, HtoD, DtoH
    int64_t bytes = memset ? int64_t{64} << U(r, 0, 12) : int64_t{128} << U(r, 0, 14);
    int64_t s = std::max(r.host + 2'000, r.stream_free[0]);
    int64_t e = s + 1'000 + bytes / (kind == 8 ? 2'000 : 20'000);
    r.stream_free[0] = e;
    w_.memops.push_back({s, e, c, r.gpid, bytes, r.index, kComputeStream, kind, memset});
  }
  for (int n = r.memuse.Take(); n > 0; --n) {
    bool free_one = !r.live_allocs.empty() && (r.live_allocs.size() > 64 || U(r, 0, 1));
    int64_t c = Runtime(r, tid, free_one ? "cuMemRelease" : "cuMemCreate", 1'000, 20'000);
    if (free_one) {
      size_t k = static_cast<size_t>(U(r, 0, static_cast<int64_t>(r.live_allocs.size()) - 1));
      std::pair<int64_t, int64_t> a = r.live_allocs[k];
      r.live_allocs[k] = r.live_allocs.back();
      r.live_allocs.pop_back();
      w_.memuses.push_back({r.host, r.gpid, a.first, a.second, c, r.index, 1});
    } else {
      int64_t bytes = U(r, 1, 64) << 21;  // 2 MiB granules
      r.live_allocs.push_back({r.next_address, bytes});
      w_.memuses.push_back({r.host, r.gpid, r.next_address, bytes, c, r.index, 0});
      r.next_address += 256 << 20;
    }
  }
  int n = r.osrt.Take();
  if (n > 0) {
    // Spread over the side threads inside [op_start, now]: row k on thread k % T in its own slot
    // of that thread's share, so each thread's calls are in order and none runs past the host
    // clock (OS runtime rows stay inside the capture and the buffers stay small).
    const int64_t threads = static_cast<int64_t>(r.side_tids.size());
    const int64_t span = std::max<int64_t>(r.host - op_start, 1'000);
    const int64_t slots = (n + threads - 1) / threads, slot = std::max<int64_t>(span / slots, 200);
    for (int k = 0; k < n; ++k) {
      size_t t = static_cast<size_t>(k % threads);
      const OsrtCall& call = kOsrt[U(r, 0, 2) == 0 ? U(r, 0, 2) : U(r, 0, kNumOsrt - 1)];
      const int64_t slot_start = op_start + (k / threads) * slot;
      int64_t s = std::max(r.side_clock[t], slot_start);
      int64_t e = std::max(s + 100, std::min(s + U(r, call.min_ns, call.max_ns), slot_start + slot));
      r.side_clock[t] = e + 50;
      w_.osrts.push_back({s, e, r.side_tids[t], Sid(call.name)});
    }
  }
}

void Generator::Kernel(Rank& r, int64_t tid, Family f, int slot) {
  const KernelFamily& kf = kFamilies[f];
  int64_t c = Runtime(r, tid, kf.driver_launch ? "cuLaunchKernelEx" : "cudaLaunchKernel_v7000", 2'500, 9'000);
  int64_t s = std::max(r.host - U(r, 500, 2'000) + U(r, 3'000, 8'000), r.stream_free[slot]);
  if (slot == 1) s = std::max(s, r.stream_free[0] - 50'000);  // a side stream runs beside the main one
  int64_t d = static_cast<int64_t>(static_cast<double>(U(r, kf.min_ns, kf.max_ns)) * r.kernel_scale);
  r.stream_free[slot] = s + d;
  int variant = kf.variants > 1 ? static_cast<int>(U(r, 0, kf.variants - 1)) : 0;
  w_.kernels.push_back(
      {s, s + d, c, r.gpid, grid_id_++, r.index, slot == 0 ? kComputeStream : kSideStream, f, variant});
  ++kernels_;
  ++r.kernels;
}

// One aten op on every rank: `n` NVTX ranges (the credit) around one kernel launch.
void Generator::ComputeOp(bool backward, const AtenOp& op, int64_t bwd_seq) {
  int side = SU(0, 9) == 0;  // about 1 in 10 on the side stream
  int sizes_seed = SU(0, 1 << 20);
  for (Rank& r : ranks_) {
    int64_t tid = backward ? r.bwd_tid : r.main_tid;
    int64_t op_start = r.host;
    // NVTX ranges up to the ratio (module, NCCL and iteration ranges count too), at most a burst.
    int n = static_cast<int>(
        std::clamp<int64_t>(static_cast<int64_t>(o_.nvtx_per_kernel * static_cast<double>(r.kernels + 1)) - r.nvtx_rows,
                            0, 3 * static_cast<int64_t>(o_.nvtx_per_kernel) + 3));
    char buf[512];
    std::string sizes = Sizes(sizes_seed);
    const long long seq = backward ? bwd_seq : ++r.seq;  // every forward op makes an autograd node
    // Setup ops that launch nothing (views, allocations), then the nest around the launch.
    int setup = n > 2 ? n / 3 : 0, nest = n - setup;
    for (int k = 0; k < setup; ++k) {
      const long long id = ++r.op_id;
      std::snprintf(buf, sizeof(buf), "%s, op_id = %lld, sizes = %s, input_op_ids = [(%lld,0)]",
                    kNoLaunchOps[(sizes_seed + k) % kNumNoLaunchOps], id, sizes.c_str(), id - 3);
      int64_t s = r.host;
      r.host += U(r, 1'000, 5'000);
      w_.nvtxs.push_back({s, r.host, tid, 0, 59, 0, buf});
      ++r.nvtx_rows;
      r.host += U(r, 200, 800);
    }
    for (int k = 0; k < nest; ++k) {
      const long long id = r.op_id + 1;
      if (backward && k == 0) {
        std::snprintf(buf, sizeof(buf), "autograd::engine::evaluate_function: %s, op_id = %lld", op.backward,
                      static_cast<long long>(++r.op_id));
      } else if (backward && k == 1) {
        std::snprintf(buf, sizeof(buf), "%s, seq = %lld, op_id = %lld", op.backward, seq,
                      static_cast<long long>(++r.op_id));
      } else if (k == 0) {
        std::snprintf(buf, sizeof(buf), "%s, seq = %lld, op_id = %lld, sizes = %s, input_op_ids = [(%lld,0), (0,-1)]",
                      op.outer, seq, static_cast<long long>(++r.op_id), sizes.c_str(), id - 2);
      } else {
        std::snprintf(buf, sizeof(buf), "%s, op_id = %lld, sizes = %s, input_op_ids = [(%lld,0), (0,-1)]",
                      k == nest - 1 ? op.inner : kNoLaunchOps[(sizes_seed + k) % kNumNoLaunchOps],
                      static_cast<long long>(++r.op_id), sizes.c_str(), id - 1);
      }
      Push(r, 0, 0, buf);
    }
    Kernel(r, tid, backward ? op.bwd_family : op.family, side);
    SideWork(r, tid, op_start);
    for (int k = 0; k < nest; ++k) Pop(r, tid);
    r.host += U(r, 1'000, 6'000);  // Python between ops
  }
}

// One NCCL operation on every rank: c10d and nccl ranges, NCCL-domain ranges, one kernel on the
// NCCL stream that ends at the same time on every rank (the early ones wait in it).
void Generator::Nccl(bool backward, Family f, const char* c10d, const char* nccl_range, const char* module) {
  const bool p2p = f == kSendRecv;
  int64_t transfer = 0;
  std::vector<int64_t> ready(ranks_.size()), corr(ranks_.size());
  for (Rank& r : ranks_) {
    int64_t tid = backward ? r.bwd_tid : r.main_tid;
    if (module && !backward) Push(r, kDomainCpfold, Sid(module), {});
    char buf[256];
    std::snprintf(buf, sizeof(buf), "%s, seq = %lld, op_id = %lld", c10d, static_cast<long long>(++r.seq),
                  static_cast<long long>(++r.op_id));
    Push(r, 0, 0, buf);
    std::snprintf(buf, sizeof(buf), "record_param_comms, op_id = %lld", static_cast<long long>(++r.op_id));
    Push(r, 0, 0, buf);
    std::snprintf(buf, sizeof(buf), "%s, op_id = %lld", nccl_range, static_cast<long long>(++r.op_id));
    Push(r, 0, 0, buf);
    if (p2p) {
      Push(r, kDomainNccl, Sid("ncclGroupStart"), {});
      Pop(r, tid);
      Push(r, kDomainNccl, Sid("ncclSend"), {});
      Pop(r, tid);
      Push(r, kDomainNccl, Sid("ncclRecv"), {});
      Pop(r, tid);
      Push(r, kDomainNccl, Sid("ncclGroupEnd"), {});
    } else {
      Push(r, kDomainNccl,
           Sid(f == kAllGather       ? "ncclAllGather"
               : f == kReduceScatter ? "ncclReduceScatter"
                                     : "ncclAllReduce"),
           {});
    }
    int64_t c = Runtime(r, tid, "cuLaunchKernelEx", 3'000, 12'000);
    corr[r.index] = c;
    // The NCCL stream waits for the compute stream (an event), then for the peers.
    ready[r.index] = std::max({r.host + U(r, 3'000, 8'000), r.stream_free[2], r.stream_free[0]});
    Pop(r, tid);  // ncclGroupEnd / ncclAllGather ...
    Pop(r, tid);
    Pop(r, tid);
    Pop(r, tid);
    if (module && !backward) Pop(r, tid);
  }
  const KernelFamily& kf = kFamilies[f];
  transfer = std::uniform_int_distribution<int64_t>(kf.min_ns, kf.max_ns)(structure_);
  int64_t end = *std::max_element(ready.begin(), ready.end()) + transfer;
  for (Rank& r : ranks_) {
    w_.kernels.push_back({ready[r.index], end, corr[r.index], r.gpid, grid_id_++, r.index, kNcclStream, f, 0});
    ++kernels_;
    ++r.kernels;
    r.stream_free[2] = end;
    r.stream_free[0] = std::max(r.stream_free[0], end);  // the next compute op waits for the data
  }
}

void Generator::Forward() {
  auto ops = [&](int lo, int hi) {
    int n = SU(lo, hi);
    for (int k = 0; k < n; ++k) {
      int op = SU(0, kNumAtenOps - 1);
      ComputeOp(false, kAtenOps[op]);
      fwd_trace_.push_back({op, ranks_[0].seq});
    }
  };
  Module("cpfold.cp.wrapper.ContextParallel.training_loss", 1);
  Module("cpfold.model.fold.CPFoldModel.training_loss", 1);
  ops(6, 12);
  Module("cpfold.model.fold.CPFoldModel.trunk", 1);
  Module("cpfold.model.msa.MSAModule.forward", 1);
  Module("cpfold.model.msa.OuterProductMean.forward", 1);
  ops(10, 16);
  EndModule(1);
  Module("cpfold.model.msa.MSAPairWeightedAveraging.forward", 1);
  ops(10, 16);
  EndModule(1);
  EndModule(1);
  Module("cpfold.model.pairformer.PairformerModule.forward", 1);
  for (int b = 0; b < o_.blocks; ++b) {
    Module("cpfold.model.pairformer.PairformerBlock.forward", 1);
    for (const char* trimul : {"cpfold.model.pairformer.TriangleMultiplicationOutgoing.forward",
                               "cpfold.model.pairformer.TriangleMultiplicationIncoming.forward"}) {
      Module(trimul, 1);
      ops(10, 14);
      Nccl(false, kSendRecv, "c10d::batch_isend_irecv", "nccl:coalesced", "cpfold.cp.comm.batch_p2p");
      fwd_trace_.push_back({-1, ranks_[0].seq});
      ops(8, 12);
      EndModule(1);
    }
    for (const char* att : {"cpfold.model.pairformer.TriangleAttentionStartingNode.forward",
                            "cpfold.model.pairformer.TriangleAttentionEndingNode.forward"}) {
      Module(att, 1);
      ops(6, 10);
      Nccl(false, kAllGather, "c10d::allgather_", "nccl:all_gather", "cpfold.cp.comm.all_gather_cat");
      fwd_trace_.push_back({-2, ranks_[0].seq});
      ops(8, 12);
      EndModule(1);
    }
    Module("cpfold.model.pairformer.PairTransition.forward", 1);
    ops(5, 7);
    EndModule(1);
    Module("cpfold.model.common.AttentionPairBias.forward", 1);
    ops(8, 12);
    EndModule(1);
    Module("cpfold.model.pairformer.SingleTransition.forward", 1);
    ops(5, 7);
    EndModule(1);
    EndModule(1);  // PairformerBlock
  }
  EndModule(1);  // PairformerModule
  EndModule(1);  // trunk
  ops(4, 8);     // the loss
  EndModule(1);  // CPFoldModel.training_loss
  EndModule(1);  // ContextParallel.training_loss
}

void Generator::Backward(int fwd_ops) {
  (void)fwd_ops;
  for (auto it = fwd_trace_.rbegin(); it != fwd_trace_.rend(); ++it) {
    if (it->first == -1) {
      Nccl(true, kSendRecv, "c10d::batch_isend_irecv", "nccl:coalesced", nullptr);
    } else if (it->first == -2) {
      Nccl(true, kReduceScatter, "c10d::_reduce_scatter_base_", "nccl:_reduce_scatter_base", nullptr);
    } else {
      ComputeOp(true, kAtenOps[it->first], it->second);
      ComputeOp(true, kAtenOps[(it->first + 3) % kNumAtenOps], it->second);  // two kernels per forward kernel
    }
  }
}

void Generator::Iteration(int it) {
  char name[64];
  if (it == 0)
    std::snprintf(name, sizeof(name), "cpfold:warmup0");
  else
    std::snprintf(name, sizeof(name), "cpfold:iter%d", it);
  for (Rank& r : ranks_) {
    r.stack.clear();
    Push(r, 0, 0, name);
  }
  fwd_trace_.clear();
  Forward();
  // loss.backward(): the main thread waits; the autograd thread runs the backward ops.
  Backward(static_cast<int>(fwd_trace_.size()));
  for (Rank& r : ranks_) r.host += U(r, 5'000, 20'000);
  Nccl(false, kAllReduce, "c10d::allreduce_", "nccl:all_reduce", nullptr);
  for (Rank& r : ranks_) {
    char buf[128];
    std::snprintf(buf, sizeof(buf), "Optimizer.step#Adam.step, op_id = %lld", static_cast<long long>(++r.op_id));
    Push(r, 0, 0, buf);
  }
  for (int k = 0; k < 4; ++k) ComputeOp(false, {"aten::_fused_adam_", "aten::_fused_adam_", kAdam, "", kAdam});
  for (Rank& r : ranks_) Pop(r, r.main_tid);
  // loss.item(): the host waits for the GPU.
  for (Rank& r : ranks_) {
    int64_t gpu = std::max({r.stream_free[0], r.stream_free[1], r.stream_free[2]});
    int64_t s = r.host;
    r.host = std::max(r.host, gpu) + U(r, 2'000, 10'000);
    w_.runtimes.push_back({s, r.host, r.main_tid, Corr(), Sid("cudaStreamSynchronize_v3020"), 1});
    ++r.runtime_rows;
    Pop(r, r.main_tid);  // the iteration
    r.host += U(r, 50'000, 200'000);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  auto t0 = std::chrono::steady_clock::now();
  std::ifstream schema_in(o.schema);
  if (!schema_in) Die("cannot read " + o.schema + ": pass --schema PATH/bench/nsys-3.20.3-schema.sql");
  std::stringstream schema;
  schema << schema_in.rdbuf();

  std::remove(o.out.c_str());
  sqlite3* db = nullptr;
  Check(sqlite3_open_v2(o.out.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr),
        db, ("open " + o.out).c_str());
  Check(sqlite3_exec(db,
                     "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=4096; "
                     "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-65536;",
                     nullptr, nullptr, nullptr),
        db, "pragmas");
  Check(sqlite3_exec(db, schema.str().c_str(), nullptr, nullptr, nullptr), db, "schema");
  Check(sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr), db, "begin");
  Check(sqlite3_exec(db,
                     "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'), "
                     "('EXPORT_PRODUCT_VERSION', 'synthetic (cpprof bench)'), ('EXPORT_SCHEMA_VERSION', '3.20.3'), "
                     "('EXPORT_SCHEMA_VERSION_MAJOR', '3'), ('EXPORT_SCHEMA_VERSION_MINOR', '20'), "
                     "('EXPORT_SCHEMA_VERSION_MICRO', '3'), ('EXPORT_PLATFORM', 'linux-desktop'), "
                     "('EXPORT_ARCH', 'x64'), ('EXPORT_PARAM_INPUT_FILE', 'bench/make_synthetic_export')",
                     nullptr, nullptr, nullptr),
        db, "META_DATA_EXPORT");

  Writer w;
  w.db = db;
  w.Open();
  Generator g(o, w);
  g.Setup(db);
  const int64_t target_bytes = static_cast<int64_t>(o.size_gb * 1e9);
  int64_t bytes = 0;
  int iterations = 0;
  for (int it = 0;; ++it) {
    g.Iteration(it);
    w.Flush(g.Watermark());
    ++iterations;
    sqlite3_stmt* pc = nullptr;
    Check(sqlite3_prepare_v2(db, "PRAGMA page_count", -1, &pc, nullptr), db, "page_count");
    Check(sqlite3_step(pc), db, "page_count");
    bytes = sqlite3_column_int64(pc, 0) * 4096;
    sqlite3_finalize(pc);
    if (!o.quiet && it % 20 == 0) {
      std::fprintf(stderr, "\r  %d iterations, %lld kernels, %.2f GB ...", iterations,
                   static_cast<long long>(g.kernels()), static_cast<double>(bytes) / 1e9);
    }
    if (target_bytes > 0 && bytes >= target_bytes) break;
    if (o.kernels > 0 && g.kernels() >= o.kernels) break;
  }
  w.Flush(INT64_MAX);
  w.Close();
  Check(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), db, "commit");
  auto count = [&](const char* table) {
    sqlite3_stmt* st = nullptr;
    Check(sqlite3_prepare_v2(db, (std::string("SELECT count(*) FROM ") + table).c_str(), -1, &st, nullptr), db, table);
    Check(sqlite3_step(st), db, table);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
  };
  int64_t k = count("CUPTI_ACTIVITY_KIND_KERNEL"), nv = count("NVTX_EVENTS"), rt = count("CUPTI_ACTIVITY_KIND_RUNTIME"),
          os = count("OSRT_API"), mu = count("CUDA_GPU_MEMORY_USAGE_EVENTS"), mc = count("CUPTI_ACTIVITY_KIND_MEMCPY"),
          ms = count("CUPTI_ACTIVITY_KIND_MEMSET");
  sqlite3_close(db);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!o.quiet) std::fprintf(stderr, "\r%60s\r", "");
  std::printf(
      "wrote %s: %.3f GB in %.1f s; %d ranks, %d iterations; %lld kernels, %lld NVTX events (%.1f per kernel), "
      "%lld CUDA runtime (%.1f), %lld OS runtime (%.1f), %lld memory usage events (%.2f), %lld memcpys, "
      "%lld memsets\n",
      o.out.c_str(), static_cast<double>(bytes) / 1e9, secs, o.ranks, iterations, static_cast<long long>(k),
      static_cast<long long>(nv), k ? double(nv) / k : 0.0, static_cast<long long>(rt), k ? double(rt) / k : 0.0,
      static_cast<long long>(os), k ? double(os) / k : 0.0, static_cast<long long>(mu), k ? double(mu) / k : 0.0,
      static_cast<long long>(mc), static_cast<long long>(ms));
  return 0;
}
