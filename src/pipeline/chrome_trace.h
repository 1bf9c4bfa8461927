// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// `cpprof export --format chrome-trace`: an export as Chrome Trace Event Format JSON for
// ui.perfetto.dev. One process per rank (ranks as in the report), a track per CUDA stream for
// kernels, memcpys and memsets, NVTX ranges on their CPU threads, optionally CUDA API calls and
// launch -> GPU op flow arrows. Written event by event (see docs/chrome-trace.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "analysis/window.h"
#include "base/exec_context.h"
#include "base/status.h"
#include "pipeline/cp_view.h"

namespace cpprof::pipeline {

struct ChromeTraceOptions {
  std::vector<int> ranks;           // ranks to keep; empty: all
  std::optional<int64_t> start_ns;  // keep events that end at or after this (export time, ns)
  std::optional<int64_t> end_ns;    // keep events that start at or before this
  bool nvtx = true;                 // NVTX ranges on their CPU threads
  bool api = false;                 // CUDA runtime API calls on their CPU threads
  bool flows = false;               // flow arrows launch -> GPU op (implies the API calls)
  bool force = false;               // several exports: read them as one run even if they look like two
  ExecContext exec;                 // how the command runs: threads, timing (from the CLI)
  // Kineto's field names, for Holistic Trace Analysis (docs/kineto.md): categories kernel,
  // gpu_memcpy, gpu_memset, cuda_runtime, user_annotation; GPU ops on pid = device, tid = stream;
  // args correlation, device, stream; ProfilerStep#N over each iteration range; distributedInfo
  // (rank, world size) at the top. API calls included. Meant for one rank per file.
  bool kineto = false;
  // Kineto: the time range as cpprof report's --window ("" = steady: the
  // iterations after warm-up) unless start_ns/end_ns give one; the run's iterations, drawn as
  // ProfilerStep#N, are found as the run opens (its NVTX read once for them, then once for the
  // ranges written: pipeline::TakeIterationMarks).
  std::string window;
  std::vector<analysis::IterationMark> iterations;  // on the run's clock
  std::string iteration_method;
  std::set<std::string> window_iterations;  // the iterations --window holds (empty: those the time range overlaps)
  // The CP view (pipeline/cp_view.h) over the same run: per rank a module track, a communication
  // track of waiting and transfer slices, flows linking the ops of one matched instance across
  // ranks and a GPU memory counter. Null: none.
  const CpView* cp = nullptr;
  // When set, called once before `cp` is read (after every other event is written): waits for
  // the CP view being built on another thread, so that its reading of the export overlaps the
  // trace's own. An error it returns is the trace's.
  std::function<Status()> await_cp;
};

struct ChromeTraceSummary {
  int64_t events = 0;  // trace events written, metadata included
  int ranks = 0;       // ranks written
  int64_t gpu_ops = 0, nvtx_ranges = 0, api_calls = 0, flows = 0;
  int64_t cp_slices = 0, cp_flows = 0;  // the CP view's slices (modules, communication) and flow chains
  int64_t cp_path_iterations = 0;       // iterations whose critical path the CP view draws
  std::vector<std::string> notes;       // for stderr
  bool invalid_utf8 = false;            // some names read were not UTF-8 (shown as U+FFFD): the CLI says so
};

// Reads the export at `path` and writes the trace to `out`. Nothing is written when the export
// cannot be read or is not an export (the errors of `cpprof report`); a read error midway leaves
// a truncated document and returns the error.
StatusOr<ChromeTraceSummary> WriteChromeTrace(const std::string& path, const ChromeTraceOptions& options,
                                              std::ostream& out);

// A run captured in several exports (one nsys per rank or per node) as one trace: ranks and
// clock as `cpprof report` finds them (pipeline/run_reader.h), a process per rank with the rank
// as its pid, times on the first export's clock. One path is the overload above. With `kineto`,
// exactly one rank (options.ranks): a Kineto trace holds one rank.
StatusOr<ChromeTraceSummary> WriteChromeTrace(const std::vector<std::string>& paths, const ChromeTraceOptions& options,
                                              std::ostream& out);
// One Kineto trace per rank, all in one pass over each export (`options.kineto` implied,
// `options.ranks` replaced by what files.ranks chooses).
struct KinetoFiles {
  // The ranks to write, given the run's number of ranks; an error ends the export before any file.
  std::function<StatusOr<std::vector<int>>(int world)> ranks;
  // Opens one file per rank of `ranks` (in that order), calls write with their streams, and keeps
  // each file only when everything was written (or none).
  std::function<Status(const std::vector<int>& ranks,
                       const std::function<Status(const std::vector<std::ostream*>&)>& write)>
      open;
};
StatusOr<ChromeTraceSummary> WriteKinetoTraces(const std::vector<std::string>& paths, const ChromeTraceOptions& options,
                                               const KinetoFiles& files);

}  // namespace cpprof::pipeline
