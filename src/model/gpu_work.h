// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The GPU work of an export, per process: every kernel, memcpy and memset as a compact op
// (16 bytes: start, duration, class), plus per-name totals. Filled by nsys/gpu_work_loader from
// the kernel, memcpy and memset tables; ops stay in table order (analysis sorts them).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/interval.h"
#include "model/op_class.h"

namespace cpprof::model {

struct GpuOp {
  int64_t start = 0;
  uint32_t duration = 0;  // ns; ops longer than kMaxOpDuration live in ProcessGpuWork::long_ops
  OpClass cls = OpClass::kComputeOther;
  uint8_t phase = 0;  // model::Phase of the launch (forward, backward, optimizer)
  uint16_t node = 0;  // module node of the launch (analysis/module_attribution.h); 0: none
  int64_t end() const { return start + duration; }
};
static_assert(sizeof(GpuOp) == 16, "one op must stay 16 bytes: exports hold millions");
inline constexpr int64_t kMaxOpDuration = UINT32_MAX;  // ~4.29 s

// What a launch is tagged with before its ops are stored (see analysis/module_attribution.h).
struct OpTag {
  uint8_t phase = 0;
  uint16_t node = 0;
  uint8_t flags = 0;           // analysis::kInWarmup (counted), analysis::kExcluded (left out)
  int64_t launch = INT64_MIN;  // the launching call's start (INT64_MIN: not asked for, or no call found)
  uint32_t thread = 0;         // that call's thread: an index into the process's HostCalls threads
};

// The CUDA API call that launched an op (ProcessGpuWork::op_hosts, for the replay's launch
// edges, analysis/replay.h): when it started, on which of its process's host threads (an index
// per process). start kNoLaunch: the export has no call with the op's correlation id.
struct __attribute__((packed, aligned(4))) HostLaunch {
  int64_t start;
  uint32_t thread;
};
static_assert(sizeof(HostLaunch) == 12, "one per op when the replay is on");
inline constexpr int64_t kNoLaunch = INT64_MIN;

// A CUDA API call that blocks its host thread until GPU work is done (cudaStreamSynchronize,
// cudaDeviceSynchronize, cudaEventSynchronize, a blocking cudaMemcpy, their driver API forms):
// the replay ties the host's later launches to the op it waited for.
struct HostSync {
  int64_t start = 0, end = 0;
  uint32_t thread = 0;  // as HostLaunch::thread
};
inline constexpr uint8_t kOpInWarmup = 1, kOpExcluded = 2;

// What reading another window from the ops in memory needs of each op besides the op itself
// (nsys::LoadGpuWork's keep_op_keys; pipeline/run_reader.h's RunData): the kernel's name id
// (StringIds), or kOpKeyMemOp | the memcpy kind's 32 bits for a memcpy or memset (kind -1),
// plus kOpKeyWarmup when the op was launched inside a warm-up range.
inline constexpr int64_t kOpKeyWarmup = int64_t{1} << 62, kOpKeyMemOp = int64_t{1} << 61;
inline constexpr int64_t kOpKeyName = kOpKeyMemOp - 1;  // the mask of the name id
inline int OpKeyMemKind(int64_t key) { return static_cast<int32_t>(static_cast<uint32_t>(key)); }
// The largest kernel name id the work keeps: an id is part of an op's key, and a run of several
// exports adds the export's index from bit 40 (pipeline/run_reader.cc). nsys's ids are small; a
// damaged one (negative, or past this) is kept as this one, named by the first such id's string.
inline constexpr int64_t kMaxNameId = (int64_t{1} << 40) - 1;

struct LongOp {
  Interval iv;
  OpClass cls;
  uint8_t phase = 0;
  uint16_t node = 0;
  int64_t key = 0;  // see kOpKeyWarmup (0 unless asked for)
};

// Append-only storage in chunks that grow geometrically (64 .. 32768 elements): no reallocation
// copies and at most one partly filled chunk, so memory stays close to 16 bytes per op.
template <typename T>
class ChunkedVector {
 public:
  void push_back(const T& v) {
    if (chunks_.empty() || sizes_.back() == capacity_) {
      capacity_ = chunks_.empty() ? kFirst : std::min(capacity_ * 2, kLast);
      chunks_.emplace_back(new T[capacity_]);
      sizes_.push_back(0);
    }
    chunks_.back()[sizes_.back()++] = v;
    ++size_;
  }
  // Moves `other`'s elements to the end (its chunks, no copy); `other` is left empty.
  void Append(ChunkedVector&& other) {
    if (other.chunks_.empty()) return;
    for (auto& c : other.chunks_) chunks_.push_back(std::move(c));
    sizes_.insert(sizes_.end(), other.sizes_.begin(), other.sizes_.end());
    capacity_ = other.capacity_;  // of the last chunk, which later push_backs fill
    size_ += other.size_;
    other = ChunkedVector();
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t num_chunks() const { return chunks_.size(); }
  std::span<T> chunk(size_t i) { return {chunks_[i].get(), sizes_[i]}; }
  std::span<const T> chunk(size_t i) const { return {chunks_[i].get(), sizes_[i]}; }

 private:
  static constexpr size_t kFirst = 64, kLast = 32768;
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::vector<size_t> sizes_;
  size_t capacity_ = 0;
  size_t size_ = 0;
};

struct NameTotal {
  int64_t total_ns = 0;
  int64_t instances = 0;          // in the report's window (0: the name ran only outside it)
  int64_t capture_instances = 0;  // over the whole capture, whatever the window
  OpClass cls = OpClass::kComputeOther;
};

// A process with GPU work as a census sees it (who it is and how many ops ran on which device):
// all that rank assignment needs, read without loading the ops.
struct GpuProcess {
  int64_t global_pid = 0;
  int pid = 0;
  std::string name;                       // process name, "" when PROCESSES lacks it
  std::map<int, int64_t> ops_per_device;  // deviceId -> ops

  // The device that ran most of this process's work (lowest id on a tie).
  int MainDevice() const {
    int best = -1;
    int64_t n = -1;
    for (const auto& [dev, count] : ops_per_device) {
      if (count > n) best = dev, n = count;
    }
    return best;
  }
};

// A process's GPU work: the census fields (GpuProcess) plus every op and the per-name totals.
// An NCCL op the report's window cut or left out, kept whole for matching it with its peers
// (analysis/comm_match.h): an instance that straddles the window's start or end is split into
// waiting and transfer over its whole extent, then clipped. `inside`: the op was cut at the
// window's edges and its part inside is in ProcessGpuWork::ops; else it lies outside the window.
struct EdgeCommOp {
  Interval whole;
  OpClass cls = OpClass::kNcclOther;
  uint16_t node = 0;
  bool inside = false;
};

struct ProcessGpuWork : GpuProcess {
  ChunkedVector<GpuOp> ops;                        // table order
  ChunkedVector<int64_t> op_keys;                  // parallel to ops when asked for (kOpKeyWarmup), else empty
  ChunkedVector<uint32_t> op_launches;             // parallel to ops when asked for: a hash of a kernel's grid and
                                                   // block sizes (0: a memory op, or not exported), else empty
  ChunkedVector<HostLaunch> op_hosts;              // parallel to ops when asked for (the replay): each op's launch
  std::vector<HostSync> syncs;                     // with op_hosts: the process's blocking calls, by start
  std::vector<LongOp> long_ops;                    // ops longer than kMaxOpDuration (rare)
  std::unordered_map<int64_t, NameTotal> kernels;  // StringIds id -> totals (every name, in the window or not)
  std::map<int, NameTotal> mem_ops;                // memcpy kind (ENUM_CUDA_MEMCPY_OPER id; -1: memset) -> totals
  int64_t invalid_ops = 0;                         // end < start, left out
  int64_t excluded_ops = 0;                        // launched inside --exclude-ranges ranges, left out
  int64_t warmup_ops = 0, warmup_ns = 0;           // launched inside warm-up ranges (kept)
  int64_t outside_window_ops = 0, outside_window_ns = 0;  // outside the report's window, left out
  int64_t clipped_ops = 0;                                // across the window's edges: cut at them
  // With a window: its NCCL ops cut at the edges, and those outside it near enough to be a peer
  // of one (see EdgeCommOp; pipeline/run_reader.cc keeps the near ones).
  std::vector<EdgeCommOp> edge_comm_ops;
};

// Names of what the ops refer to, for the ids in use.
struct GpuNames {
  std::unordered_map<int64_t, std::string> kernel_names;  // StringIds id -> demangled name
  std::unordered_map<int64_t, OpClass> kernel_classes;    // StringIds id -> class
  std::map<int, std::string> mem_op_names;                // memcpy kind (-1: memset) -> "[CUDA memcpy Host-to-Device]"
};

// One NCCL kernel over the whole capture (whatever the window): what puts the clocks of several
// exports of one run on one (analysis/clock_align.h).
struct CommOpTime {
  int64_t global_pid = 0;
  int64_t start = 0, end = 0;
  OpClass cls = OpClass::kNcclOther;
};

struct GpuWork {
  std::vector<ProcessGpuWork> processes;  // by globalPid
  GpuNames names;
};

}  // namespace cpprof::model
