// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/kineto_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
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

// Kineto's copy kinds by CUPTI_ActivityMemcpyKind (nsys's ENUM_CUDA_MEMCPY_OPER ids are CUPTI's).
std::string_view CopyKind(int64_t kind) {
  static constexpr std::string_view kKinds[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                                "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind >= 0 && kind < 11 ? kKinds[kind] : "Unknown";
}

std::string_view OrUnknown(std::string_view kind) { return kind.empty() ? "Unknown" : kind; }

}  // namespace

KinetoFormat::KinetoFormat(std::ostream& out, const model::TraceHeader& header, const TraceWriterOptions& options)
    : TraceWriter(out, header, TopLevel(header), {"correlation", true, /*bandwidth=*/true}, options,
                  /*spaced_top_level=*/true) {}

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

int64_t KinetoFormat::WholeUs(int64_t ns) {
  int64_t q = (ns + 500) / 1000;
  if ((ns + 500) % 1000 < 0) --q;  // floor for negative times
  return q * 1000;
}

std::string KinetoFormat::KinetoMemOpName(const model::TraceGpuOp& op) {
  if (op.cls == model::OpClass::kMemset) return fmt::format("Memset ({})", OrUnknown(op.src_kind_name));
  return fmt::format("Memcpy {} ({} -> {})", CopyKind(op.name_id), OrUnknown(op.src_kind_name),
                     OrUnknown(op.dst_kind_name));
}

void KinetoFormat::ResetExport() {
  streams_.clear();
  memop_names_.clear();
  pending_.clear();
  launches_.clear();
  gpu_spans_.clear();
  spans_sorted_ = false;
}

// One runtime event per correlation: a backtrace row waits for the next call on its thread; the
// call it annotates (same correlation) replaces it, any other call writes it as the call.
void KinetoFormat::ApiCall(const model::TraceApiCall& c) {
  const std::string& name = Escaped(api_names_, c.name_id, PlainApiName(c.name));
  auto held = pending_.find(c.global_tid);
  if (held != pending_.end()) {
    const bool annotates = held->second.call.has_correlation == c.has_correlation &&
                           held->second.call.correlation == c.correlation && !c.backtrace;
    if (!annotates) EmitApiCall(held->second.call, *held->second.name);
    pending_.erase(held);
  }
  if (c.backtrace) {
    Pending p{c, &name};
    p.call.name = {};
    pending_.emplace(c.global_tid, p);
    return;
  }
  EmitApiCall(c, name);
}

void KinetoFormat::FlushApiCalls() {
  std::map<int64_t, Pending> left(pending_.begin(), pending_.end());  // in thread order
  for (const auto& [tid, p] : left) EmitApiCall(p.call, *p.name);
  pending_.clear();
}

void KinetoFormat::EmitApiCall(const model::TraceApiCall& c, const std::string& name) {
  if (c.has_correlation) launches_[c.global_tid].emplace_back(c.start, c.correlation);
  model::TraceApiCall whole = c;
  whole.start = WholeUs(c.start), whole.end = WholeUs(c.end);
  AddApiCall(whole, name, "cuda_runtime");
}

// Kineto puts GPU ops on pid = device, tid = stream.
void KinetoFormat::GpuOp(const model::TraceGpuOp& op) {
  streams_.emplace(op.device, op.stream);
  if (op.has_correlation) gpu_spans_.push_back({op.correlation, op.device, op.stream, op.start, op.end});
  double gbps = 0;
  const std::string* name = nullptr;
  if (op.memop) {
    const int64_t key = ((op.name_id + 1) * 256 + op.src_kind + 1) * 256 + op.dst_kind + 1;
    name = &Escaped(memop_names_, key, KinetoMemOpName(op));
    if (op.end > op.start) gbps = static_cast<double>(op.bytes) / static_cast<double>(op.end - op.start);
  } else {
    name = &EscapedName(op.name_id, op.name);
  }
  model::TraceGpuOp whole = op;
  whole.start = WholeUs(op.start), whole.end = WholeUs(op.end);
  AddGpuOp(whole, *name, Category(op.cls), op.device, op.stream, gbps);
}

void KinetoFormat::NvtxRange(const model::TraceNvtxRange& r) {
  const int64_t tid = RangeTid(r);
  const std::string name = EscapedRangeName(r);
  EmitX(name, "user_annotation", r.process->pid, tid, WholeUs(r.start), WholeUs(r.end), r.open || !r.push_pop,
        [&](JsonWriter& w) { trace::NvtxArgs(w, r.open, r.push_pop, model::TidOf(r.global_tid), r.ended_on_tid); });
  if (r.module) GpuAnnotations(r, name);
}

void KinetoFormat::GpuAnnotations(const model::TraceNvtxRange& r, const std::string& name) {
  auto launches = launches_.find(r.global_tid);
  if (launches == launches_.end()) return;
  if (!spans_sorted_) {
    std::sort(gpu_spans_.begin(), gpu_spans_.end(), [](const GpuSpan& a, const GpuSpan& b) {
      return a.correlation != b.correlation ? a.correlation < b.correlation : a.start < b.start;
    });
    for (auto& [gtid, calls] : launches_) std::sort(calls.begin(), calls.end());
    spans_sorted_ = true;
  }
  const auto& calls = launches->second;
  std::map<std::pair<int, int>, std::pair<int64_t, int64_t>> covered;  // (device, stream) -> first start, last end
  for (auto c = std::lower_bound(calls.begin(), calls.end(), std::pair<int64_t, int64_t>{r.start, INT64_MIN});
       c != calls.end() && c->first <= r.end; ++c) {
    auto s = std::lower_bound(gpu_spans_.begin(), gpu_spans_.end(), c->second,
                              [](const GpuSpan& g, int64_t corr) { return g.correlation < corr; });
    for (; s != gpu_spans_.end() && s->correlation == c->second; ++s) {
      auto [it, added] = covered.try_emplace({s->device, s->stream}, s->start, s->end);
      if (!added) it->second = {std::min(it->second.first, s->start), std::max(it->second.second, s->end)};
    }
  }
  for (const auto& [where, span] : covered) {
    EmitX(name, "gpu_user_annotation", where.first, where.second, WholeUs(span.first), WholeUs(span.second), false,
          [](JsonWriter&) {});
  }
}

void KinetoFormat::Step(const model::TraceStep& s) {
  EmitX(json_.Escape(fmt::format("ProfilerStep#{}", s.number)), "user_annotation", s.process->pid, s.tid,
        WholeUs(s.start), WholeUs(s.end), false, [](JsonWriter&) {});
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
