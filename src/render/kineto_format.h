// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A Kineto trace (PyTorch profiler's JSON) of one rank, for Holistic Trace Analysis
// (docs/kineto.md): Kineto's categories (kernel, gpu_memcpy, gpu_memset, cuda_runtime,
// user_annotation, gpu_user_annotation), GPU ops on pid = device and tid = stream, launches linked
// by `correlation` (one runtime event per correlation: nsys's CUDA backtrace rows folded into the
// call they annotate), memory ops named as Kineto names them with their bandwidth, ProfilerStep#N
// over each iteration (numbered as the readout numbers them), module ranges on the GPU streams
// their launches ran on, times in whole microseconds (HTA rounds them to µs: whole ones stay as
// they are) and distributedInfo (rank, world size) at the top, spaced as HTA's rank regex needs.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "render/trace_writer.h"

namespace cpprof::render {

class KinetoFormat : public TraceWriter {
 public:
  KinetoFormat(std::ostream& out, const model::TraceHeader& header, const TraceWriterOptions& options = {});

  void ApiCall(const model::TraceApiCall& call) override;
  void GpuOp(const model::TraceGpuOp& op) override;
  void NvtxRange(const model::TraceNvtxRange& range) override;
  // ProfilerStep#N over the iteration, on its marker's thread: how HTA finds iterations.
  void Step(const model::TraceStep& step) override;
  bool DrawsSteps() const override { return true; }

  // Kineto's name of a memory op: "Memcpy HtoD (Pageable -> Device)", "Memset (Device)".
  static std::string KinetoMemOpName(const model::TraceGpuOp& op);
  // A time in ns rounded to the nearest whole microsecond (half up), in ns.
  static int64_t WholeUs(int64_t ns);

 private:
  // One GPU op's stream and times, by its launch's correlation id (for gpu_user_annotation).
  struct GpuSpan {
    int64_t correlation;
    int device, stream;
    int64_t start, end;
  };
  static Json TopLevel(const model::TraceHeader& header);
  void ResetExport() override;
  void FlushApiCalls() override;
  void TrackMetadata(const model::TraceProcess& p, int64_t& sort) override;
  void EmitApiCall(const model::TraceApiCall& c, const std::string& name);
  // The module range on each GPU stream its launches ran on: first op's start to last op's end.
  void GpuAnnotations(const model::TraceNvtxRange& r, const std::string& name);

  std::set<std::pair<int, int>> streams_;                 // (device, stream) of the GPU ops written
  std::unordered_map<int64_t, std::string> api_names_;    // StringIds id -> Kineto's name as a JSON string
  std::unordered_map<int64_t, std::string> memop_names_;  // (copy kind, memory kinds) -> Kineto's name
  // A backtrace row held until the next call on its thread says whether it has a row of its own.
  struct Pending {
    model::TraceApiCall call;
    const std::string* name;
  };
  std::unordered_map<int64_t, Pending> pending_;                                    // by globalTid
  std::unordered_map<int64_t, std::vector<std::pair<int64_t, int64_t>>> launches_;  // globalTid -> (start, corr)
  std::vector<GpuSpan> gpu_spans_;  // sorted by correlation when the first range comes
  bool spans_sorted_ = false;
};

}  // namespace cpprof::render
