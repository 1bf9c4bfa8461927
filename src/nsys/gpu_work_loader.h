// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Loads the GPU work of an export (kernels, memcpys, memsets) into model::GpuWork, classifying
// each kernel name once with the given classifier.
#pragma once

#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "model/gpu_work.h"
#include "nsys/export_reader.h"

namespace cpprof::nsys {

using KernelClassifier = std::function<model::OpClass(std::string_view)>;

// The tag (module node, phase) of the launch with this (globalPid, correlationId).
using LaunchTagger = std::function<model::OpTag(int64_t global_pid, int64_t correlation)>;

// Makes a tagger for one reading thread (a tagger may keep lookup state of its own).
using LaunchTaggerFactory = std::function<LaunchTagger()>;

// Below this many kernel rows per thread, fewer threads read them: a connection of its own
// costs more than it saves.
inline constexpr int64_t kMinKernelRowsPerThread = 250'000;

// What the loader keeps of each op besides the op itself: nothing, its key
// (ProcessGpuWork::op_keys: model::kOpKeyWarmup, its name and warm-up flag, for reading other
// windows in memory), or its key and its kernel's launch (ProcessGpuWork::op_launches: grid and
// block sizes, for telling one kernel name's shapes apart).
enum class OpKeys : uint8_t { kNone, kNames, kNamesAndLaunches };

// `make_tagger` may be empty: every op is then untagged (node 0, forward). With `threads` > 1
// and a big kernel table, the table is read in up to that many rowid ranges at once, each on its
// own connection, and merged in rowid order: the result is the same as with one thread.
// With a `window`, ops entirely outside it are counted (ProcessGpuWork::outside_window_*) and
// left out, and ops across its edges are cut at them. `keep_op_keys`: see OpKeys. `keep_hosts`:
// each op's launch as its tag gives it (OpTag::launch, ::thread) in ProcessGpuWork::op_hosts.
StatusOr<model::GpuWork> LoadGpuWork(const Database& db, const ExportSchema& schema, const KernelClassifier& classify,
                                     const LaunchTaggerFactory& make_tagger = {}, size_t threads = 1,
                                     int64_t min_rows_per_thread = kMinKernelRowsPerThread,
                                     const model::Interval* window = nullptr, OpKeys keep_op_keys = OpKeys::kNone,
                                     bool keep_hosts = false);

// The processes with GPU work (kernels, memcpys, memsets) and their op counts per device, by
// globalPid: counted by SQLite (GROUP BY), no op loaded. What rank assignment needs.
StatusOr<std::vector<model::GpuProcess>> ReadGpuProcesses(const Database& db);

// The NCCL kernels of the whole capture (names starting with "nccl" that `classify` calls
// communication), in table order, valid times only: a scan that reads only those rows.
StatusOr<std::vector<model::CommOpTime>> ReadCommOps(const Database& db, const ExportSchema& schema,
                                                     const KernelClassifier& classify);

// ENUM_CUDA_MEMCPY_OPER: copyKind -> display name as nsys prints it ("[CUDA memcpy Host-to-Device]").
StatusOr<std::unordered_map<int, std::string>> ReadMemcpyKindNames(const Database& db);
// ENUM_CUDA_MEM_KIND's labels by id ("Pageable", "Device", ...): the memory a memcpy reads and
// writes, a memset's. Empty when the export has no such table.
StatusOr<std::unordered_map<int, std::string>> ReadMemoryKindNames(const Database& db);

}  // namespace cpprof::nsys
