// A Kineto trace (PyTorch profiler's JSON) of one rank, for Holistic Trace Analysis
// (docs/kineto.md): Kineto's categories (kernel, gpu_memcpy, gpu_memset, cuda_runtime,
// user_annotation), GPU ops on pid = device and tid = stream, launches linked by `correlation`,
// ProfilerStep#N over each iteration (numbered as the readout numbers them), and distributedInfo (rank, world size) at
// the top.
#pragma once

#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

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

 private:
  static Json TopLevel(const model::TraceHeader& header);
  void ResetExport() override { streams_.clear(); }
  void TrackMetadata(const model::TraceProcess& p, int64_t& sort) override;

  std::set<std::pair<int, int>> streams_;               // (device, stream) of the GPU ops written
  std::unordered_map<int64_t, std::string> api_names_;  // StringIds id -> Kineto's name as a JSON string
};

}  // namespace cpprof::render
