#include "render/kineto_format.h"

#include <fmt/format.h>

#include <string_view>

#include "model/global_id.h"

namespace cpprof::render {

namespace {

std::string_view Category(model::OpClass cls) {
  return cls == model::OpClass::kMemset                                       ? "gpu_memset"
         : cls == model::OpClass::kMemcpy || cls == model::OpClass::kPeerCopy ? "gpu_memcpy"
                                                                              : "kernel";
}

// nsys names API calls with their ABI version ("cudaLaunchKernel_v7000"); Kineto (and HTA's
// launch statistics) use the plain name.
std::string_view PlainApiName(std::string_view name) {
  size_t v = name.rfind("_v");
  if (v != std::string_view::npos && v + 2 < name.size() &&
      name.find_first_not_of("0123456789", v + 2) == std::string_view::npos) {
    name = name.substr(0, v);
  }
  return name;
}

}  // namespace

KinetoFormat::KinetoFormat(std::ostream& out, const model::TraceHeader& header, const TraceWriterOptions& options)
    : TraceWriter(out, header, TopLevel(header), {"correlation", true}, options) {}

// What Holistic Trace Analysis reads of a Kineto trace (docs/kineto.md).
KinetoFormat::Json KinetoFormat::TopLevel(const model::TraceHeader& header) {
  const int rank = header.processes.empty() ? 0 : header.processes.front().rank;
  Json top;
  top["schemaVersion"] = 1;
  top["distributedInfo"] = {{"backend", "nccl"}, {"rank", rank}, {"world_size", header.world_size}};
  Json devices = Json::array();
  for (const auto& p : header.processes) devices.push_back({{"id", p.device}});
  top["deviceProperties"] = devices;
  top["traceName"] = fmt::format("cpprof kineto export, rank {}", rank);
  return top;
}

void KinetoFormat::ApiCall(const model::TraceApiCall& c) {
  AddApiCall(c, Escaped(api_names_, c.name_id, PlainApiName(c.name)), "cuda_runtime");
}

// Kineto puts GPU ops on pid = device, tid = stream.
void KinetoFormat::GpuOp(const model::TraceGpuOp& op) {
  streams_.emplace(op.device, op.stream);
  const std::string& name = op.memop ? MemOpName(op.name_id, op.name) : EscapedName(op.name_id, op.name);
  AddGpuOp(op, name, Category(op.cls), op.device, op.stream);
}

void KinetoFormat::NvtxRange(const model::TraceNvtxRange& r) {
  const int64_t tid = RangeTid(r);
  EmitX(EscapedRangeName(r), "user_annotation", r.process->pid, tid, r.start, r.end, r.open || !r.push_pop,
        [&](JsonWriter& w) { trace::NvtxArgs(w, r.open, r.push_pop, model::TidOf(r.global_tid), r.ended_on_tid); });
}

void KinetoFormat::Step(const model::TraceStep& s) {
  EmitX(json_.Escape(fmt::format("ProfilerStep#{}", s.number)), "user_annotation", s.process->pid, s.tid, s.start,
        s.end, false, [](JsonWriter&) {});
}

void KinetoFormat::TrackMetadata(const model::TraceProcess& p, int64_t&) {
  Metadata("process_labels", p.pid, std::nullopt, {{"labels", fmt::format("rank {}", p.rank)}});
  int last_device = -1;
  for (const auto& [device, stream] : streams_) {
    if (device != last_device) {
      Metadata("process_name", device, std::nullopt, {{"name", fmt::format("GPU {}", device)}});
      Metadata("process_sort_index", device, std::nullopt, {{"sort_index", 1000 + device}});
      last_device = device;
    }
    Metadata("thread_name", device, stream, {{"name", fmt::format("stream {}", stream)}});
  }
}

}  // namespace cpprof::render
