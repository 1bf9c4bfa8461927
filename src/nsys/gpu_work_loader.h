// Loads the GPU work of an export (kernels, memcpys, memsets) into model::GpuWork, classifying
// each kernel name once with the given classifier.
#pragma once

#include <functional>
#include <string_view>
#include <unordered_map>

#include "base/status.h"
#include "model/gpu_work.h"
#include "nsys/export_reader.h"

namespace cpprof::nsys {

using KernelClassifier = std::function<model::OpClass(std::string_view)>;

// The tag (module node, phase) of the launch with this (globalPid, correlationId).
using LaunchTagger = std::function<model::OpTag(int64_t global_pid, int64_t correlation)>;

// `tag` may be empty: every op is then untagged (node 0, forward).
StatusOr<model::GpuWork> LoadGpuWork(const Database& db, const ExportSchema& schema,
                                     const KernelClassifier& classify, const LaunchTagger& tag = {});

// ENUM_CUDA_MEMCPY_OPER: copyKind -> display name as nsys prints it ("[CUDA memcpy Host-to-Device]").
StatusOr<std::unordered_map<int, std::string>> ReadMemcpyKindNames(const Database& db);

}  // namespace cpprof::nsys
