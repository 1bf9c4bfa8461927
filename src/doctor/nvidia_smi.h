// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Parsers for what nvidia-smi prints (pure functions; the doctor runs the commands):
//   nvidia-smi --query-gpu=index,name,compute_cap,memory.used,memory.total,uuid --format=csv
//   nvidia-smi --query-compute-apps=pid,used_memory,gpu_uuid --format=csv
//   nvidia-smi topo -m
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cpprof::doctor {

struct GpuInfo {
  int index = -1;
  std::string name;
  std::string compute_cap;  // "9.0"
  int cc_major = 0, cc_minor = 0;
  int64_t memory_used_mib = -1, memory_total_mib = -1;
  std::string uuid;
};

struct ComputeApp {
  int64_t pid = 0;
  int64_t used_memory_mib = -1;  // -1: "[N/A]" (as in some containers)
  std::string gpu_uuid;
};

// A link between two devices of `topo -m`.
struct TopoLink {
  std::string a, b;  // "GPU0", "GPU1"
  std::string code;  // as printed: "NV18", "PIX", "SYS", ...
  enum class Kind { kNvlink, kPcie, kOther } kind = Kind::kOther;
  int nvlinks = 0;      // for NV#
  std::string meaning;  // from the legend of nvidia-smi
};

struct Topology {
  std::vector<std::string> devices;  // GPU0.., then NIC0.. as in the matrix header
  std::vector<TopoLink> links;       // each unordered pair of GPUs once, a < b
};

// The query commands print a header row naming the columns ("index, name, compute_cap,
// memory.used [MiB], ..."); columns are found by name, so extra or reordered ones are fine.
StatusOr<std::vector<GpuInfo>> ParseGpuQuery(std::string_view csv);
StatusOr<std::vector<ComputeApp>> ParseComputeApps(std::string_view csv);
StatusOr<Topology> ParseTopology(std::string_view text);

// What a link code means for a ring of SendRecv between the two GPUs.
TopoLink ClassifyLink(const std::string& code);

}  // namespace cpprof::doctor
