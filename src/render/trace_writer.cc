// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/trace_writer.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/global_id.h"

namespace cpprof::render {

TraceWriter::TraceWriter(std::ostream& out, const model::TraceHeader& header, const Json& top_level,
                         trace::CorrelationArgs correlation, const TraceWriterOptions& options, bool spaced_top_level)
    : json_(out, OtherData(header), top_level, spaced_top_level), options_(options), correlation_(correlation) {
  json_.set_format_threads(options.exec.threads);
}

TraceWriter::~TraceWriter() = default;

TraceWriter::Json TraceWriter::OtherData(const model::TraceHeader& header) {
  Json other;
  other["generator"] = std::string("cpprof ") + CPPROF_VERSION;
  other["nsys_version"] = header.nsys_version;
  other["export_schema"] = header.export_schema;
  other["rank_method"] = header.rank_method;
  other["time"] = header.time;
  if (!header.exports.empty()) {
    Json exports = Json::array();
    for (const auto& e : header.exports) {
      exports.push_back(
          {{"name", e.name}, {"offset_ns", e.offset_ns}, {"residual_ns", e.residual_ns}, {"method", e.method}});
    }
    other["exports"] = exports;
  }
  return other;
}

void TraceWriter::BeginExport(const std::vector<model::TraceProcess>& processes) {
  processes_ = processes;
  threads_.clear();
  last_thread_ = INT64_MIN;
  lanes_.clear();
  escaped_names_.clear();
  memop_names_.clear();
  ResetExport();
}

const std::string& TraceWriter::Escaped(std::unordered_map<int64_t, std::string>& cache, int64_t key,
                                        std::string_view name) {
  auto [it, inserted] = cache.try_emplace(key);
  if (inserted) it->second = json_.Escape(name);
  return it->second;
}

const std::string& TraceWriter::EscapedName(int64_t name_id, std::string_view name) {
  return Escaped(escaped_names_, name_id, name);
}

const std::string& TraceWriter::MemOpName(int64_t kind, std::string_view name) {
  return Escaped(memop_names_, kind, name);
}

int64_t TraceWriter::ThreadTid(int64_t global_tid) {
  if (global_tid != last_thread_) {  // most events come in runs of one thread's
    threads_.try_emplace(global_tid, 0);
    last_thread_ = global_tid;
  }
  return model::TidOf(global_tid);
}

int64_t TraceWriter::LaneTid(int64_t global_tid, int64_t start, int64_t end) {
  auto& lanes = lanes_[global_tid];
  for (auto& lane : lanes) {
    while (!lane.ends.empty() && lane.ends.back() <= start) lane.ends.pop_back();
    if (lane.ends.empty() || lane.ends.back() >= end) {
      lane.ends.push_back(end);
      return lane.tid;
    }
  }
  lanes.push_back({next_tid_++, {end}});
  return lanes.back().tid;
}

int64_t TraceWriter::RangeTid(const model::TraceNvtxRange& r) {
  if (r.push_pop) return ThreadTid(r.global_tid);
  ThreadTid(r.global_tid);  // named with its thread
  return LaneTid(r.global_tid, r.start, r.end);
}

void TraceWriter::AddGpuOp(const model::TraceGpuOp& e, const std::string& name, std::string_view cat, int pid,
                           int64_t tid, double gbps) {
  trace::GpuOpBatch::Op op{};
  op.name = &name;
  op.cat = cat;
  op.pid = pid;
  op.tid = tid;
  op.start = e.start, op.end = e.end;
  op.stream = e.stream, op.device = e.device;
  op.has_correlation = e.has_correlation, op.correlation = e.correlation;
  op.memop = e.memop, op.bytes = e.bytes, op.gbps = gbps;
  op.has_launch_config = e.has_launch_config;
  for (int i = 0; i < 3; ++i) op.grid[i] = e.grid[i], op.block[i] = e.block[i];
  op.flow_end = e.flow_end, op.flow_id = e.flow_id;
  op.flow_pid = e.process->pid;
  gpu_.Start(json_, correlation_, "GPU ops", options_.exec, options_.batch_threads);
  gpu_.batch().Add(op);
  gpu_.PutIfFull(json_);
}

void TraceWriter::AddApiCall(const model::TraceApiCall& c, const std::string& name, std::string_view cat) {
  api_.Start(json_, correlation_, "API calls", options_.exec, options_.batch_threads);
  api_.batch().Add(
      {&name, cat, c.process->pid, ThreadTid(c.global_tid), c.start, c.end, c.correlation, c.has_correlation});
  api_.PutIfFull(json_);
}

void TraceWriter::FlowStart(const model::TraceFlowStart& f) {
  JsonWriter& w = json_.Begin();
  w.Key("ph"), w.RawString("\"s\"");
  w.Key("name"), w.RawString("\"launch\"");
  w.Key("cat"), w.RawString("\"cuda_flow\"");
  w.Key("id"), w.UInt(f.id);
  w.Key("pid"), w.Int(f.pid);
  w.Key("tid"), w.Int(f.tid);
  w.Key("ts"), w.Thousandths(f.ts);
  json_.End();
}

void TraceWriter::Metadata(const char* what, int pid, std::optional<int64_t> tid, Json args) {
  Json e;
  e["ph"] = "M";
  e["name"] = what;
  e["pid"] = pid;
  if (tid) e["tid"] = *tid;
  e["args"] = std::move(args);
  json_.Event(e);
}

void TraceWriter::EndExport(const std::map<int64_t, std::string>& thread_names) {
  std::vector<const model::TraceProcess*> by_rank;
  for (const auto& p : processes_) by_rank.push_back(&p);
  std::sort(by_rank.begin(), by_rank.end(), [](auto* a, auto* b) { return a->rank < b->rank; });
  for (const model::TraceProcess* p : by_rank) {
    std::string label = fmt::format("rank {} (pid {}, GPU {})", p->rank, p->os_pid, p->device);
    if (!p->name.empty()) label += " " + p->name;
    Metadata("process_name", p->pid, std::nullopt, {{"name", label}});
    Metadata("process_sort_index", p->pid, std::nullopt, {{"sort_index", p->rank}});
    int64_t sort = 0;
    TrackMetadata(*p, sort);
    // CPU threads after the format's tracks, by tid; each thread's NVTX start/end lanes below it.
    for (const auto& [gtid, unused] : threads_) {
      if (model::GlobalPidOf(gtid) != p->global_pid) continue;
      auto it = thread_names.find(gtid);
      std::string name = it != thread_names.end() ? it->second : fmt::format("thread {}", model::TidOf(gtid));
      Metadata("thread_name", p->pid, model::TidOf(gtid), {{"name", name}});
      Metadata("thread_sort_index", p->pid, model::TidOf(gtid), {{"sort_index", sort++}});
      auto lanes = lanes_.find(gtid);
      if (lanes == lanes_.end()) continue;
      for (size_t i = 0; i < lanes->second.size(); ++i) {
        std::string lane = fmt::format("{} NVTX start/end{}", name, i ? fmt::format(" {}", i + 1) : "");
        Metadata("thread_name", p->pid, lanes->second[i].tid, {{"name", lane}});
        Metadata("thread_sort_index", p->pid, lanes->second[i].tid, {{"sort_index", sort++}});
      }
    }
  }
}

}  // namespace cpprof::render
