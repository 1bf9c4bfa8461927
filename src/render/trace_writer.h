// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// What the two trace formats share (render/chrome_trace_format.h, render/kineto_format.h): the
// document, the events of model/trace_events.h placed on CPU-thread tracks and NVTX start/end
// lanes, names serialized once, batches formatted ahead on other cores, and the metadata that
// names each rank's process and tracks. A format decides where GPU ops go, what categories and
// argument names its events carry, and the tracks of its own.
//
// The order of calls, per export of the run: BeginExport, then ApiCall... EndApiCalls, GpuOp...
// EndGpuOps, FlowStart..., NvtxRange... EndNvtx, EndExport; after the last export, Step... and
// Finish.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/trace_events.h"
#include "render/chrome_trace_writer.h"
#include "render/trace_batches.h"

namespace cpprof::render {

// Tracks that are not OS threads (CUDA streams, NVTX start/end lanes) get tids from here up, in
// the order they are first met: unique across the whole trace, since Perfetto keys threads by tid.
inline constexpr int64_t kSyntheticTidBase = 1'000'000'000;

struct TraceWriterOptions {
  ExecContext exec;           // threads to format with; timing: how long the batch threads waited for each other
  bool batch_threads = true;  // format batches ahead on threads of their own (where there are cores)
};

class TraceWriter {
 public:
  using Json = ChromeTraceWriter::Json;
  virtual ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // One export's events follow: `processes` are its ranks written (the events point to them).
  void BeginExport(const std::vector<model::TraceProcess>& processes);
  virtual void ApiCall(const model::TraceApiCall& call) = 0;
  // Every API call written (before anything else is).
  void EndApiCalls() {
    FlushApiCalls();
    api_.Finish(json_);
  }
  virtual void GpuOp(const model::TraceGpuOp& op) = 0;
  // Every GPU op written (before anything else is).
  void EndGpuOps() { gpu_.Finish(json_); }
  void FlowStart(const model::TraceFlowStart& flow);
  virtual void NvtxRange(const model::TraceNvtxRange& range) = 0;
  // Every NVTX range written (before anything else is).
  virtual void EndNvtx() {}
  // The run's iterations on this trace's ranks (after every export's events): a format without
  // steps of its own leaves them out.
  virtual void Step(const model::TraceStep&) {}
  virtual bool DrawsSteps() const { return false; }
  // The export's metadata: each rank's process and tracks named and ordered (`thread_names`: by
  // globalTid; a thread without one is "thread TID").
  void EndExport(const std::map<int64_t, std::string>& thread_names);
  // Closes the document. Call once, after the last event.
  void Finish() { json_.Finish(); }
  int64_t events() const { return json_.events(); }

 protected:
  // `spaced_top_level`: ChromeTraceWriter's.
  TraceWriter(std::ostream& out, const model::TraceHeader& header, const Json& top_level,
              trace::CorrelationArgs correlation, const TraceWriterOptions& options, bool spaced_top_level = false);

  // Forgets the tracks of the export before (BeginExport).
  virtual void ResetExport() {}
  // Writes the API calls a format held back (EndApiCalls).
  virtual void FlushApiCalls() {}
  // The format's own tracks of process `p`, named after its process_sort_index; `sort` is the
  // next thread_sort_index.
  virtual void TrackMetadata(const model::TraceProcess& p, int64_t& sort) = 0;

  // A GPU op placed on (pid, tid) with category `cat` (static text), into the batch; `gbps`: a
  // memory op's bandwidth, where the format writes it.
  void AddGpuOp(const model::TraceGpuOp& op, const std::string& name, std::string_view cat, int pid, int64_t tid,
                double gbps = 0);
  // An API call on its thread with category `cat` (static text), into the batch.
  void AddApiCall(const model::TraceApiCall& call, const std::string& name, std::string_view cat);
  // A complete event written now; `name` serialized (JsonWriter::EscapedString).
  template <class ArgsFn>
  void EmitX(std::string_view name, std::string_view cat, int pid, int64_t tid, int64_t start, int64_t end,
             bool has_args, ArgsFn&& args) {
    JsonWriter& w = json_.Begin();
    trace::WriteX(
        w, [&](JsonWriter& jw) { jw.RawString(name); }, cat, pid, tid, start, end, has_args, args);
    json_.End();
  }
  void Metadata(const char* what, int pid, std::optional<int64_t> tid, Json args);

  // The OS thread's tid (its track), the thread noted for the metadata.
  int64_t ThreadTid(int64_t global_tid);
  // The tid of an NVTX start/end range's lane: start/end ranges need not nest, and overlapping
  // complete events on one track do not draw, so each goes to the first lane of its thread where
  // it nests (ranges come in start order).
  int64_t LaneTid(int64_t global_tid, int64_t start, int64_t end);
  // An NVTX range's track: a push/pop range its thread's, a start/end range a lane below it.
  int64_t RangeTid(const model::TraceNvtxRange& r);
  int64_t NewTid() { return next_tid_++; }
  // A name serialized once per export: kernels and API calls by StringIds id, memory ops by kind.
  const std::string& EscapedName(int64_t name_id, std::string_view name);
  const std::string& MemOpName(int64_t kind, std::string_view name);
  const std::string& Escaped(std::unordered_map<int64_t, std::string>& cache, int64_t key, std::string_view name);
  // A range's name "domain:text" serialized.
  std::string EscapedRangeName(const model::TraceNvtxRange& r) {
    return json_.Escape(std::string(r.domain) + ":" + std::string(r.text));
  }

  ChromeTraceWriter json_;
  const TraceWriterOptions options_;

 private:
  struct Lane {
    int64_t tid;
    std::vector<int64_t> ends;
  };
  static Json OtherData(const model::TraceHeader& header);

  std::vector<model::TraceProcess> processes_;  // the export's
  std::map<int64_t, int> threads_;              // CPU threads used, by globalTid
  int64_t last_thread_ = INT64_MIN;             // ThreadTid's last: in threads_
  std::map<int64_t, std::vector<Lane>> lanes_;  // NVTX start/end lanes by globalTid
  int64_t next_tid_ = kSyntheticTidBase;
  std::unordered_map<int64_t, std::string> escaped_names_;  // StringIds id -> name as a JSON string
  std::unordered_map<int64_t, std::string> memop_names_;    // copy kind (-1: memset) -> name as a JSON string
  trace::BatchedEvents<trace::GpuOpBatch> gpu_;
  trace::BatchedEvents<trace::ApiCallBatch> api_;
  const trace::CorrelationArgs correlation_;
};

}  // namespace cpprof::render
