// Writes a large synthetic nsys SQLite export in the real schema (bench/nsys-3.20.3-schema.sql,
// copied from an nsys 2025.3 export), for benchmarking cpprof at scale:
//
//   make_synthetic_export OUT.sqlite [--kernels N] [--runtime N] [--nvtx N] [--memops N] [--ranks R]
//                         [--seed S]
//
// Each rank is a process on its own device with a compute stream and two communication streams;
// kernels come from a pool of realistic names (NCCL SendRecv/AllGather/..., cuBLAS/CUTLASS GEMMs,
// norms, softmax, elementwise) and are written in time order per rank, ranks interleaved in
// chunks, as nsys writes them. Runtime calls launch the first kernels (correlation ids match);
// NVTX push/pop ranges nest three deep on each rank's main thread; memcpys (host-to-device,
// device-to-host, device-to-device) and memsets (one in four of the memops) sit between kernels
// on the compute stream.
#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

void Check(int rc, sqlite3* db, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    std::fprintf(stderr, "make_synthetic_export: %s: %s\n", what, sqlite3_errmsg(db));
    std::exit(1);
  }
}

const char* const kKernelNames[] = {
    "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)",
    "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)",
    "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)",
    "ncclDevKernel_Generic(ncclDevKernelArgsStorage<(unsigned long)4096>)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "nvjet_tst_192x192_64x3_2x1_v_bz_coopB_TNT",
    "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(T1::Params)",
    "void at::native::<unnamed>::vectorized_layer_norm_kernel<c10::BFloat16, float, (bool)0>(int, T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)",
    "void <unnamed>::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, (int)10, (bool)0, (bool)0>(T2 *, const T1 *, int, int, int, const bool *, int, bool)",
    "void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char *, (unsigned long)3>>(int, T2, T3)",
    "void at::native::vectorized_elementwise_kernel<(int)4, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 2)]::operator ()() const::[lambda() (instance 2)]::operator ()() const::[lambda(c10::BFloat16) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)",
    "void at::native::elementwise_kernel<(int)128, (int)2, void at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() const::[lambda() (instance 7)]::operator ()() const::[lambda(float) (instance 1)]>(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
    "void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, (int)4, (int)4>>(T3)",
    "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>(Flash_fwd_params)",
};
constexpr int kNumKernelNames = sizeof(kKernelNames) / sizeof(kKernelNames[0]);
constexpr int kCommNames = 5;  // the first five are NCCL

const char* const kNvtxNames[] = {
    "cpfold:cpfold.model.pairformer.PairformerModule.forward",
    "cpfold:cpfold.model.trimul.TriangleMultiplicationOutgoing.forward",
    "cpfold:cpfold.model.trimul.TriangleMultiplicationIncoming.forward",
    "cpfold:cpfold.model.triangle_attention.TriangleAttentionStartingNode.forward",
    "PyTorch:torch.nn.modules.linear.Linear.forward",
    "PyTorch:torch.nn.functional.layer_norm",
    "aten::addmm, op_id = 88, sizes = [[1024, 128], [128, 128]]",
    "nccl:all_gather",
};
constexpr int kNumNvtxNames = sizeof(kNvtxNames) / sizeof(kNvtxNames[0]);

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_synthetic_export OUT.sqlite [--kernels N] [--runtime N] [--nvtx N] "
                         "[--ranks R] [--seed S] [--schema FILE]\n");
    return 2;
  }
  std::string out = argv[1];
  int64_t kernels = 5'000'000, runtime = 1'000'000, nvtx = 1'000'000, memops = -1;
  int ranks = 4;
  unsigned seed = 1;
  std::string schema_path = std::string(CPPROF_SOURCE_DIR) + "/bench/nsys-3.20.3-schema.sql";
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    int64_t v = std::atoll(argv[i + 1]);
    if (k == "--kernels") kernels = v;
    else if (k == "--runtime") runtime = v;
    else if (k == "--nvtx") nvtx = v;
    else if (k == "--memops") memops = v;
    else if (k == "--ranks") ranks = static_cast<int>(v);
    else if (k == "--seed") seed = static_cast<unsigned>(v);
    else if (k == "--schema") schema_path = argv[i + 1];
    else {
      std::fprintf(stderr, "make_synthetic_export: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (memops < 0) memops = kernels / 10;
  std::ifstream schema_in(schema_path);
  if (!schema_in) {
    std::fprintf(stderr, "make_synthetic_export: cannot read %s\n", schema_path.c_str());
    return 1;
  }
  std::stringstream schema;
  schema << schema_in.rdbuf();

  std::remove(out.c_str());
  sqlite3* db = nullptr;
  Check(sqlite3_open(out.c_str(), &db), db, "open");
  Check(sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=4096;", nullptr,
                     nullptr, nullptr),
        db, "pragmas");
  Check(sqlite3_exec(db, schema.str().c_str(), nullptr, nullptr, nullptr), db, "schema");
  Check(sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr), db, "begin");

  auto exec = [&](const std::string& sql) { Check(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), db, sql.c_str()); };
  exec("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.20.3'), "
       "('EXPORT_PRODUCT_VERSION', 'synthetic (cpprof bench)')");

  // StringIds: kernel names 1..K, runtime API names, NVTX names.
  sqlite3_stmt* str = nullptr;
  Check(sqlite3_prepare_v2(db, "INSERT INTO StringIds VALUES (?, ?)", -1, &str, nullptr), db, "prepare");
  int64_t next_id = 1;
  auto add_string = [&](const char* s) {
    sqlite3_bind_int64(str, 1, next_id);
    sqlite3_bind_text(str, 2, s, -1, SQLITE_STATIC);
    Check(sqlite3_step(str), db, "StringIds");
    sqlite3_reset(str);
    return next_id++;
  };
  std::vector<int64_t> kernel_ids, nvtx_ids;
  for (const char* n : kKernelNames) kernel_ids.push_back(add_string(n));
  int64_t launch_id = add_string("cudaLaunchKernel");
  for (const char* n : kNvtxNames) nvtx_ids.push_back(add_string(n));

  std::vector<int64_t> gpid(ranks);
  for (int r = 0; r < ranks; ++r) {
    gpid[r] = int64_t(1000 + r) << 24;
    exec("INSERT INTO PROCESSES VALUES (" + std::to_string(gpid[r]) + ", " + std::to_string(1000 + r) + ", 'python')");
  }

  sqlite3_stmt* k = nullptr;
  Check(sqlite3_prepare_v2(db,
                           "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
                           "correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY, "
                           "gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
                           "localMemoryPerThread, localMemoryTotal, gridId, launchType, cacheConfig, "
                           "sharedMemoryExecuted) VALUES (?,?,?,1,?,?,?,?,?,?,?,1,1,?,1,1,?,?,0,0,?,0,0,?)",
                           -1, &k, nullptr),
        db, "prepare kernel");
  sqlite3_stmt* rt = nullptr;
  Check(sqlite3_prepare_v2(db,
                           "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
                           "correlationId, nameId, returnValue) VALUES (?,?,1,?,?,?,0)",
                           -1, &rt, nullptr),
        db, "prepare runtime");
  sqlite3_stmt* mc = nullptr;
  Check(sqlite3_prepare_v2(db,
                           "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
                           "correlationId, globalPid, bytes, copyKind) VALUES (?,?,?,1,7,?,?,?,?)",
                           -1, &mc, nullptr),
        db, "prepare memcpy");
  sqlite3_stmt* ms = nullptr;
  Check(sqlite3_prepare_v2(db,
                           "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, "
                           "correlationId, globalPid, value, bytes) VALUES (?,?,?,1,7,?,?,0,?)",
                           -1, &ms, nullptr),
        db, "prepare memset");
  sqlite3_stmt* nv = nullptr;
  Check(sqlite3_prepare_v2(db,
                           "INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId) "
                           "VALUES (?,?,59,?,?,0)",
                           -1, &nv, nullptr),
        db, "prepare nvtx");

  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> name_dist(kCommNames, kNumKernelNames - 1), comm_dist(0, kCommNames - 1);
  std::uniform_int_distribution<int64_t> dur(2'000, 400'000), gap(500, 20'000);
  std::vector<int64_t> t(ranks, 1'000'000'000), comm_t(ranks, 1'000'000'000);
  int64_t per_rank = kernels / ranks, runtime_per_rank = runtime / ranks;
  int64_t memop_every = memops > 0 ? std::max<int64_t>(1, kernels / memops) : 0;
  const int copy_kinds[] = {1, 2, 8};  // host-to-device, device-to-host, device-to-device
  int64_t memop_count = 0;
  const int64_t chunk = 10'000;
  int64_t corr = 1;
  for (int64_t base = 0; base < per_rank; base += chunk) {
    for (int r = 0; r < ranks; ++r) {
      for (int64_t i = base; i < std::min(per_rank, base + chunk); ++i) {
        bool comm = i % 8 == 0;  // one kernel in eight is NCCL, on its own streams
        int name = comm ? comm_dist(rng) : name_dist(rng);
        int64_t d = dur(rng);
        int64_t start;
        int stream;
        if (comm) {
          start = std::max(comm_t[r], t[r] - d / 2);  // overlaps the compute stream partly
          comm_t[r] = start + d;
          stream = 20 + static_cast<int>(i % 2);
        } else {
          start = t[r] + gap(rng);
          t[r] = start + d;
          stream = 7;
        }
        sqlite3_bind_int64(k, 1, start);
        sqlite3_bind_int64(k, 2, start + d);
        sqlite3_bind_int64(k, 3, r);
        sqlite3_bind_int64(k, 4, stream);
        sqlite3_bind_int64(k, 5, corr);
        sqlite3_bind_int64(k, 6, gpid[r]);
        sqlite3_bind_int64(k, 7, kernel_ids[name]);
        sqlite3_bind_int64(k, 8, kernel_ids[name]);
        sqlite3_bind_int64(k, 9, 32 + name);
        sqlite3_bind_int64(k, 10, 128 + name);
        sqlite3_bind_int64(k, 11, 256);
        sqlite3_bind_int64(k, 12, 1024);
        sqlite3_bind_int64(k, 13, 0);
        sqlite3_bind_int64(k, 14, corr);
        sqlite3_bind_int64(k, 15, 1024);
        Check(sqlite3_step(k), db, "kernel");
        sqlite3_reset(k);
        if (!comm && memop_every && (i + 1) % memop_every == 0) {  // a memop right after this kernel
          int64_t ms_start = t[r] + 200, ms_end = ms_start + 1'000 + static_cast<int64_t>(i % 5'000);
          int64_t m_idx = memop_count++;
          bool memset = m_idx % 4 == 0;
          sqlite3_stmt* m = memset ? ms : mc;
          sqlite3_bind_int64(m, 1, ms_start);
          sqlite3_bind_int64(m, 2, ms_end);
          sqlite3_bind_int64(m, 3, r);
          sqlite3_bind_int64(m, 4, corr);
          sqlite3_bind_int64(m, 5, gpid[r]);
          sqlite3_bind_int64(m, 6, 4096 + (i % 1'000'000));
          if (!memset) sqlite3_bind_int64(m, 7, copy_kinds[m_idx % 4 - 1]);
          Check(sqlite3_step(m), db, memset ? "memset" : "memcpy");
          sqlite3_reset(m);
          t[r] = ms_end;
        }
        if (i < runtime_per_rank) {
          sqlite3_bind_int64(rt, 1, start - 5'000);
          sqlite3_bind_int64(rt, 2, start - 1'000);
          sqlite3_bind_int64(rt, 3, gpid[r] + 1);
          sqlite3_bind_int64(rt, 4, corr);
          sqlite3_bind_int64(rt, 5, launch_id);
          Check(sqlite3_step(rt), db, "runtime");
          sqlite3_reset(rt);
        }
        ++corr;
      }
    }
  }
  // NVTX: per rank, an outer range per 64 kernels' worth of time with two nested levels.
  int64_t nvtx_per_rank = nvtx / ranks;
  for (int r = 0; r < ranks; ++r) {
    int64_t span = t[r] - 1'000'000'000;
    int64_t outer = std::max<int64_t>(1, nvtx_per_rank / 3);
    int64_t step = std::max<int64_t>(1, span / outer);
    for (int64_t j = 0; j < outer; ++j) {
      int64_t s = 1'000'000'000 + j * step;
      int64_t ids[3] = {nvtx_ids[0], nvtx_ids[1 + j % 3], nvtx_ids[4 + j % 4]};
      int64_t bounds[3][2] = {{s, s + step - 10}, {s + 10, s + step / 2}, {s + 20, s + step / 4}};
      for (int lvl = 0; lvl < 3; ++lvl) {
        sqlite3_bind_int64(nv, 1, bounds[lvl][0]);
        sqlite3_bind_int64(nv, 2, bounds[lvl][1]);
        sqlite3_bind_int64(nv, 3, ids[lvl]);
        sqlite3_bind_int64(nv, 4, gpid[r] + 1);
        Check(sqlite3_step(nv), db, "nvtx");
        sqlite3_reset(nv);
      }
    }
  }
  sqlite3_finalize(k);
  sqlite3_finalize(rt);
  sqlite3_finalize(nv);
  sqlite3_finalize(mc);
  sqlite3_finalize(ms);
  sqlite3_finalize(str);
  Check(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), db, "commit");
  sqlite3_close(db);
  std::printf("wrote %s: %lld kernels, %lld runtime calls, %lld NVTX ranges, about %lld memcpys and memsets, "
              "%d ranks\n",
              out.c_str(), static_cast<long long>(per_rank * ranks),
              static_cast<long long>(std::min(runtime_per_rank, per_rank) * ranks),
              static_cast<long long>((nvtx_per_rank / 3) * 3 * ranks), static_cast<long long>(memops), ranks);
  return 0;
}
