// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The events of a trace export, as the run gives them and before any format places them: the
// ranks' processes, CUDA API calls, GPU ops (kernels, memcpys, memsets), launch flows and NVTX
// ranges. pipeline/chrome_trace.cc reads them from the exports (ranks, window, clock applied);
// render/chrome_trace_format.h and render/kineto_format.h place and write them, each in its own
// format. Times are nanoseconds on the run's clock (the first export's session clock).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/op_class.h"

namespace cpprof::model {

// A rank's GPU process.
struct TraceProcess {
  int rank = 0;
  int pid = 0;  // the trace's pid: the OS pid, or the rank in a trace of several exports
  int os_pid = 0;
  int device = -1;         // its main GPU
  std::string name;        // the process's name, "" when the export has none
  int64_t global_pid = 0;  // nsys's globalPid in its export
};

// How several exports were put on one clock (said in the trace's otherData).
struct TraceExportClock {
  std::string name;
  int64_t offset_ns = 0, residual_ns = 0;
  std::string method;
};

// What the document says about itself before its events.
struct TraceHeader {
  std::string nsys_version, export_schema;  // the (first) export's
  std::string rank_method;                  // how ranks were assigned
  std::string time;                         // what ts and dur mean
  std::vector<TraceExportClock> exports;    // several exports: each one's clock; empty for one
  int world_size = 0;
  std::vector<TraceProcess> processes;  // the ranks written: one export's by globalPid, a run's by rank
};

// One CUDA runtime or driver API call on its CPU thread.
struct TraceApiCall {
  const TraceProcess* process = nullptr;
  int64_t name_id = 0;    // StringIds id in its export: the same id is the same name
  std::string_view name;  // as nsys names it ("cudaLaunchKernel_v7000"); valid during the call
  int64_t global_tid = 0;
  int64_t start = 0, end = 0;
  bool has_correlation = false;
  int64_t correlation = 0;
  // nsys's CUDA backtrace row of a call (--cudabacktrace): the same thread and correlation id as
  // the call's own row, which it encloses and comes just before (alone when nsys traced the call
  // no other way).
  bool backtrace = false;
};

// One GPU op on its CUDA stream.
struct TraceGpuOp {
  const TraceProcess* process = nullptr;
  bool memop = false;     // a memcpy or memset (else a kernel)
  int64_t name_id = 0;    // a kernel's StringIds id; a memory op's copy kind (-1: memset)
  std::string_view name;  // valid during the call
  OpClass cls = OpClass::kComputeOther;
  int64_t global_pid = 0;  // in its export
  int device = 0, stream = 0;
  int64_t start = 0, end = 0;
  bool has_correlation = false;
  int64_t correlation = 0;
  int64_t bytes = 0;  // memory ops
  // Memory ops: the memory a memcpy reads and writes, a memset's (as src), by ENUM_CUDA_MEM_KIND
  // id (-1: not said) and label ("Pageable", "Device"; valid during the call).
  int32_t src_kind = -1, dst_kind = -1;
  std::string_view src_kind_name, dst_kind_name;
  bool has_launch_config = false;
  int64_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  // The first op of a launch that a flow links to its API call (--flows): the flow's id.
  bool flow_end = false;
  uint64_t flow_id = 0;
};

// Where a launch flow starts: the API call's thread and time.
struct TraceFlowStart {
  uint64_t id = 0;  // rank << 32 | correlationId
  int pid = 0;
  int64_t tid = 0;  // the OS thread id
  int64_t ts = 0;   // clamped at 0
};

// One NVTX range on its CPU thread.
struct TraceNvtxRange {
  const TraceProcess* process = nullptr;
  std::string_view domain, text;  // the name is "domain:text"; valid during the call
  int64_t global_tid = 0;
  int64_t start = 0, end = 0;
  bool open = false;                    // still open when the capture stopped: it ends at the capture's end
  bool push_pop = false;                // a push/pop range (nests on its thread); else start/end
  std::optional<int64_t> ended_on_tid;  // ended on another thread: that thread's tid
  bool module = false;                  // a module range (the readout's module rule)
};

// One iteration of the run on one rank: an outermost iteration marker range (analysis/window.h's
// rule), numbered as the readout numbers the run's iterations (0, 1, ... by start, one number
// per marker name over the ranks: --window iter:N).
struct TraceStep {
  const TraceProcess* process = nullptr;
  int64_t tid = 0;  // the marker's OS thread
  int64_t start = 0, end = 0;
  int64_t number = 0;
};

}  // namespace cpprof::model
