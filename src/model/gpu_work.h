// The GPU work of an export, per process: intervals by class and per-kernel-name totals.
// Filled by nsys/gpu_work_loader from the kernel, memcpy and memset tables.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/interval.h"
#include "model/op_class.h"

namespace cpprof::model {

struct NameTotal {
  int64_t total_ns = 0;
  int64_t instances = 0;
  OpClass cls = OpClass::kComputeOther;
};

struct ProcessGpuWork {
  int64_t global_pid = 0;
  int pid = 0;
  std::string name;                      // process name, "" when PROCESSES lacks it
  std::map<int, int64_t> ops_per_device;  // deviceId -> ops
  std::array<std::vector<Interval>, kNumOpClasses> by_class;  // in table order, unsorted
  std::unordered_map<int64_t, NameTotal> kernels;             // StringIds id -> totals
  std::map<std::string, NameTotal> mem_ops;  // "[CUDA memcpy Host-to-Device]" etc. -> totals
  int64_t invalid_ops = 0;                   // end < start, left out

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

struct GpuWork {
  std::vector<ProcessGpuWork> processes;  // by globalPid
  std::unordered_map<int64_t, std::string> kernel_names;  // id -> demangled name, for used ids
  std::unordered_map<int64_t, OpClass> kernel_classes;    // id -> class
};

}  // namespace cpprof::model
