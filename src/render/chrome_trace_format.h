// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The Chrome Trace Event Format for ui.perfetto.dev (docs/chrome-trace.md): one process per rank,
// a track per CUDA stream on it (compute streams first, then communication), NVTX ranges and API
// calls on their CPU threads, launch flows, and the CP view (module spans, communication split
// into waiting and transfer, flows across ranks per matched instance, a GPU memory counter, the
// critical path of each replayed iteration).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <tuple>

#include "model/cp_view.h"
#include "render/trace_writer.h"

namespace cpprof::render {

class ChromeTraceFormat : public TraceWriter {
 public:
  ChromeTraceFormat(std::ostream& out, const model::TraceHeader& header, const TraceWriterOptions& options = {});

  void ApiCall(const model::TraceApiCall& call) override;
  void GpuOp(const model::TraceGpuOp& op) override;
  void NvtxRange(const model::TraceNvtxRange& range) override;
  void EndNvtx() override { nvtx_.Finish(json_); }

  // The CP view's tracks and events for the ranks in `pid_of_rank` (rank -> the trace's pid):
  // those that end at or after `start_ns` and start at or before `end_ns` (when given).
  void CpView(const model::CpView& cp, const std::map<int, int>& pid_of_rank, std::optional<int64_t> start_ns,
              std::optional<int64_t> end_ns);
  int64_t cp_slices() const { return cp_slices_; }
  int64_t cp_flows() const { return cp_flows_; }
  int64_t cp_path_hops() const { return cp_path_hops_; }

 private:
  struct StreamTrack {
    int64_t tid = 0;
    bool comm = false;
  };
  void ResetExport() override { streams_.clear(); }
  void TrackMetadata(const model::TraceProcess& p, int64_t& sort) override;
  int64_t StreamTid(int64_t global_pid, int device, int stream, bool comm);
  void CpRankTracks(const model::CpRankView& rv, int pid, std::optional<int64_t> start_ns,
                    std::optional<int64_t> end_ns, std::map<std::pair<int, int64_t>, std::pair<int, int64_t>>& lanes);
  void CpFlows(const model::CpView& cp, const std::map<std::pair<int, int64_t>, std::pair<int, int64_t>>& lanes);
  void CpCriticalPath(const model::CpView& cp, const std::map<int, int>& pid_of_rank, std::optional<int64_t> start_ns,
                      std::optional<int64_t> end_ns);

  std::map<std::tuple<int64_t, int, int>, StreamTrack> streams_;  // (globalPid, device, stream)
  trace::BatchedEvents<trace::NvtxBatch> nvtx_;
  int64_t cp_slices_ = 0, cp_flows_ = 0, cp_path_hops_ = 0;
};

}  // namespace cpprof::render
