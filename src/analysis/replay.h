// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// What each fix buys: a dependency graph of the steady window, its critical path, and what-if
// replay (docs/readout.md, "The replay").
//
// The graph, from what the run model carries (each rank's GPU ops with their class and module,
// and each op's launch call and the rank's blocking calls when the export has them):
//   - per rank, ops by start. An op that started after every earlier op of its rank had ended
//     waits for the last of them plus its measured gap (the GPU idle for the host: a launch gap
//     under model::kLaunchGapNs, else a host gap). An op that started while another still ran
//     (another stream) also keeps its measured distance from the previous op's start (its launch
//     order), and waits for the ops that had ended before it started.
//   - launches: each op waits for its launch call plus a latency. A launch-bound op (the GPU went
//     idle, then its call started, then it ran) waits for exactly that: its measured launch
//     latency, in place of its gap. Every other op's latency is the rank's least of a
//     launch-bound op (or its own, if smaller), so that the call binds only if the host falls
//     behind. A host thread's calls keep their measured order and spacing: an edit that shortens
//     the host's time before a launch (a launch-bound op's gap: on-time, time*K, launch-gaps:0)
//     moves that call and every later one of the thread.
//   - synchronisations (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize,
//     blocking memcpys; analysis/host_calls.h): each is tied to the last op that ended before
//     it returned, if that op ended while it waited (at most 0.1 ms before the return). Replayed,
//     it returns its measured return latency after that op's replayed end (or after its own
//     replayed call, if later), and the thread's later calls move with it.
//   - each matched NCCL instance (analysis/comm_match.h) ties its ranks: no op's transfer starts
//     before the last participant arrives, and each op ends its measured transfer after that.
//   - what cannot be tied is counted (DepGraphCounts): NCCL ops no peer matched are replayed
//     alone; ops whose launch call is not in the export keep their measured gap alone; syncs
//     that waited for no op of the window move nothing. cudaStreamWaitEvent (a stream waiting,
//     not the host) is not an edge of its own: the ops done before an op stand in for it.
// Replayed with no edit the graph gives back every measured time. An edit changes durations or
// gaps, and the graph is re-timed keeping every dependency. An iteration boundary moves with the
// last GPU op each rank finished before it (plus the measured host time after that op).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/module_attribution.h"
#include "base/status.h"
#include "model/gpu_work.h"
#include "model/replay.h"
#include "model/report.h"

namespace cpprof::analysis {

struct WhatIfEdit {
  enum class Kind { kCompute, kGemm, kTransfer, kTime, kOverlap, kOnTime, kLaunchGaps };
  std::string text;  // as written
  Kind kind = Kind::kCompute;
  std::string glob;  // module names (kCompute, kTransfer, kOverlap); `*` any characters, `?` one
  int rank = -1;     // only this rank's ops (kOnTime: the rank); -1: every rank
  double factor = 1;
};

// 'GLOB:compute*K', 'GLOB:gemm*K' (their GEMM kernels only), 'GLOB:transfer*K', 'GLOB:time*K'
// (compute and the host's time before its launches), 'GLOB:overlap' (each
// optionally after 'rank R:'),
// 'rank R:on-time', 'launch-gaps:0'. K is a number or a fraction ("0.5", "1/3").
StatusOr<WhatIfEdit> ParseWhatIf(std::string_view text);

// `*` matches any characters (none included), `?` one; the whole name must match.
bool GlobMatch(std::string_view glob, std::string_view name);

struct ReplayInput {
  std::vector<std::vector<model::GpuOp>> ranks;  // each rank's ops in the window (any order)
  // Per rank, parallel to its ops (empty: not read): the CUDA call that launched each
  // (model::kNoLaunch: none found); and the rank's blocking calls, by start. On the ops' clock.
  std::vector<std::vector<model::HostLaunch>> launches;
  std::vector<std::vector<model::HostSync>> syncs;
  const std::vector<ModuleTreeNode>* nodes = nullptr;  // the module tree the ops' nodes index; null: none
  int64_t window_start = 0;
  std::vector<model::IterationTime> iterations;  // the steady iterations, by start
  // By node: how much slower the module's compute runs while NCCL kernels run beside it (the
  // overlap tax, analysis/overlap_tax.h; 0.3 = 30 %): an `overlap` edit slows the compute that
  // its transfers then run alongside by it. Empty or 0: not measured.
  std::vector<double> overlap_tax;
  // The self-check and the edits re-timed on up to this many threads (ExecContext::threads; at most
  // 4, and fewer when their timings would hold more than 64 MB: replay.cc's kTimingBudget).
  size_t threads = 1;
  bool candidates = true;  // false: the verdict's candidates are not re-timed (the critical path alone)
};

// The graph, the no-edit replay's self-check and critical paths, each of `edits`, and the
// verdict's candidates (each rank on time, launch gaps removed, each distributed module's
// transfers overlapped) ranked by predicted gain.
model::Replay ReplayRun(const ReplayInput& in, const std::vector<WhatIfEdit>& edits);

}  // namespace cpprof::analysis
