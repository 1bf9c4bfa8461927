// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/chrome_trace_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "model/global_id.h"

namespace cpprof::render {

namespace {

// Flow ids of the CP view's instances start here: above every launch flow's (rank << 32 |
// correlationId) and below 2^53, so viewers that read ids as doubles keep them apart.
constexpr int64_t kCpFlowIdBase = int64_t{1} << 52;
// The critical path's hops from rank to rank: above the instances' (fewer than 2^51 of them).
constexpr int64_t kCpPathFlowIdBase = kCpFlowIdBase + (int64_t{1} << 51);

double Us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

bool InWindow(int64_t start, int64_t end, std::optional<int64_t> start_ns, std::optional<int64_t> end_ns) {
  return (!start_ns || end >= *start_ns) && (!end_ns || start <= *end_ns);
}

const char* PartName(model::CpCommSlice::Part part) {
  return part == model::CpCommSlice::Part::kWait       ? "waiting"
         : part == model::CpCommSlice::Part::kTransfer ? "transfer"
                                                       : "unmatched";
}

const char* PartCategory(model::CpCommSlice::Part part) {
  return part == model::CpCommSlice::Part::kWait       ? "cp.wait"
         : part == model::CpCommSlice::Part::kTransfer ? "cp.transfer"
                                                       : "cp.unmatched";
}

}  // namespace

ChromeTraceFormat::ChromeTraceFormat(std::ostream& out, const model::TraceHeader& header,
                                     const TraceWriterOptions& options)
    : TraceWriter(out, header, nullptr, {"correlationId", false}, options) {}

void ChromeTraceFormat::ApiCall(const model::TraceApiCall& c) {
  AddApiCall(c, EscapedName(c.name_id, c.name), "cuda_api");
}

int64_t ChromeTraceFormat::StreamTid(int64_t global_pid, int device, int stream, bool comm) {
  auto [it, inserted] = streams_.try_emplace({global_pid, device, stream});
  if (inserted) it->second.tid = NewTid();
  it->second.comm |= comm;
  return it->second.tid;
}

void ChromeTraceFormat::GpuOp(const model::TraceGpuOp& op) {
  const std::string& name = op.memop ? MemOpName(op.name_id, op.name) : EscapedName(op.name_id, op.name);
  AddGpuOp(op, name, model::Name(op.cls), op.process->pid,
           StreamTid(op.global_pid, op.device, op.stream, model::IsComm(op.cls)));
}

void ChromeTraceFormat::NvtxRange(const model::TraceNvtxRange& r) {
  const int64_t tid = RangeTid(r);
  nvtx_.Start(json_, {}, "NVTX", options_.exec, options_.batch_threads);
  nvtx_.batch().Add(r.domain, r.text, r.push_pop ? "nvtx" : "nvtx start/end", r.process->pid, tid, r.start, r.end,
                    r.open, r.push_pop, model::TidOf(r.global_tid), r.ended_on_tid);
  nvtx_.PutIfFull(json_);
}

void ChromeTraceFormat::TrackMetadata(const model::TraceProcess& p, int64_t& sort) {
  // GPU streams: compute first, then communication; by device and stream id.
  for (bool comm : {false, true}) {
    for (const auto& [key, s] : streams_) {
      const auto& [sgpid, device, stream] = key;
      if (sgpid != p.global_pid || s.comm != comm) continue;
      std::string name = fmt::format("stream {}", stream);
      if (device != p.device) name += fmt::format(" (GPU {})", device);
      if (comm) name += " (comm)";
      Metadata("thread_name", p.pid, s.tid, {{"name", name}});
      Metadata("thread_sort_index", p.pid, s.tid, {{"sort_index", sort++}});
    }
  }
}

void ChromeTraceFormat::CpView(const model::CpView& cp, const std::map<int, int>& pid_of_rank,
                               std::optional<int64_t> start_ns, std::optional<int64_t> end_ns) {
  // (rank, op start) -> (pid, tid) of its communication lane, for the flows.
  std::map<std::pair<int, int64_t>, std::pair<int, int64_t>> lane_of_op;
  for (const auto& rv : cp.ranks) {
    auto pid = pid_of_rank.find(rv.rank);
    if (pid != pid_of_rank.end()) CpRankTracks(rv, pid->second, start_ns, end_ns, lane_of_op);
  }
  CpFlows(cp, lane_of_op);
  CpCriticalPath(cp, pid_of_rank, start_ns, end_ns);
}

// The critical path of each replayed iteration: on each rank a track with the stretches the path
// spends there (named by their kind), and a flow at each hop from one rank to another within an
// iteration (from the stretch it leaves to the one it enters). Iterations span all ranks, so the
// path of one may still run on a rank when the next one's starts there: that stretch goes to a
// second track ("CP critical path 2"), as overlapping NCCL ops do.
void ChromeTraceFormat::CpCriticalPath(const model::CpView& cp, const std::map<int, int>& pid_of_rank,
                                       std::optional<int64_t> start_ns, std::optional<int64_t> end_ns) {
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> lanes_of_rank;  // rank -> (tid, end of its last stretch)
  struct Placed {
    const model::CpPathStretch* stretch = nullptr;
    int pid = 0;
    int64_t tid = 0, start = 0;
  };
  Placed before;  // the previous stretch written
  for (const auto& s : cp.critical_path) {
    auto pid = pid_of_rank.find(s.rank);
    if (pid == pid_of_rank.end() || !InWindow(s.start, s.end, start_ns, end_ns)) {
      before = {};
      continue;
    }
    // Replayed times may pass a window's edge by the replay's error: cut there, as the view's
    // other slices lie within the window.
    const int64_t a = start_ns ? std::max(s.start, *start_ns) : s.start;
    const int64_t b = std::max(a, end_ns ? std::min(s.end, *end_ns) : s.end);
    auto& lanes = lanes_of_rank[s.rank];
    size_t lane = 0;
    while (lane < lanes.size() && lanes[lane].second > a) ++lane;
    if (lane == lanes.size()) {
      const int64_t tid = NewTid();
      Metadata("thread_name", pid->second, tid,
               {{"name", lane ? fmt::format("CP critical path {}", lane + 1) : "CP critical path"}});
      Metadata("thread_sort_index", pid->second, tid, {{"sort_index", -110 + static_cast<int>(lane)}});
      lanes.push_back({tid, 0});
    }
    lanes[lane].second = b;
    const int64_t tid = lanes[lane].first;
    json_.Event({{"ph", "X"},
                 {"name", s.kind},
                 {"cat", "cp.critical_path"},
                 {"pid", pid->second},
                 {"tid", tid},
                 {"ts", Us(a)},
                 {"dur", Us(b - a)},
                 {"args", {{"iteration", s.iteration}, {"rank", s.rank}}}});
    ++cp_slices_;
    if (before.stretch && before.stretch->iteration == s.iteration && before.stretch->rank != s.rank) {
      const int64_t id = kCpPathFlowIdBase + cp_path_hops_;
      json_.Event({{"ph", "s"},
                   {"name", "critical path"},
                   {"cat", "cp.critical_path"},
                   {"id", id},
                   {"pid", before.pid},
                   {"tid", before.tid},
                   {"ts", Us(before.start)}});
      json_.Event({{"ph", "f"},
                   {"name", "critical path"},
                   {"cat", "cp.critical_path"},
                   {"id", id},
                   {"pid", pid->second},
                   {"tid", tid},
                   {"ts", Us(a)},
                   {"bp", "e"}});
      ++cp_path_hops_;
    }
    before = {&s, pid->second, tid, a};
  }
}

// One rank's CP tracks: its module spans on two levels, its communication on lanes (ops that
// overlap, two kinds at once, go to the first lane where they fit) and its GPU memory counter.
void ChromeTraceFormat::CpRankTracks(const model::CpRankView& rv, int pid, std::optional<int64_t> start_ns,
                                     std::optional<int64_t> end_ns,
                                     std::map<std::pair<int, int64_t>, std::pair<int, int64_t>>& lane_of_op) {
  auto slice = [&](int64_t tid, const std::string& name, const char* cat, int64_t start, int64_t end, Json args) {
    json_.Event({{"ph", "X"},
                 {"name", name},
                 {"cat", cat},
                 {"pid", pid},
                 {"tid", tid},
                 {"ts", Us(start)},
                 {"dur", Us(end - start)},
                 {"args", std::move(args)}});
    ++cp_slices_;
  };
  const int64_t mod_tid[2] = {NewTid(), NewTid()};
  Metadata("thread_name", pid, mod_tid[0], {{"name", "CP modules"}});
  Metadata("thread_sort_index", pid, mod_tid[0], {{"sort_index", -100}});
  Metadata("thread_name", pid, mod_tid[1], {{"name", "CP modules (one level down)"}});
  Metadata("thread_sort_index", pid, mod_tid[1], {{"sort_index", -99}});
  for (const auto& m : rv.modules) {
    if (!InWindow(m.start, m.end, start_ns, end_ns)) continue;
    slice(mod_tid[m.level], m.name, "cp.module", m.start, m.end, {{"path", m.path}, {"split", m.cp ? "CP" : "serial"}});
  }
  std::vector<std::pair<int64_t, int64_t>> lanes;  // (tid, end of its last op)
  for (size_t i = 0; i < rv.comm.size();) {
    const int64_t op_start = rv.comm[i].op_start;
    size_t j = i;
    int64_t op_end = op_start;
    while (j < rv.comm.size() && rv.comm[j].op_start == op_start && rv.comm[j].kind == rv.comm[i].kind) {
      op_end = std::max(op_end, rv.comm[j].end);
      ++j;
    }
    if (!InWindow(op_start, op_end, start_ns, end_ns)) {
      i = j;
      continue;
    }
    size_t lane = 0;
    while (lane < lanes.size() && lanes[lane].second > op_start) ++lane;
    if (lane == lanes.size()) {
      const int64_t tid = NewTid();
      Metadata("thread_name", pid, tid,
               {{"name", lane ? fmt::format("CP communication {}", lane + 1) : "CP communication"}});
      Metadata("thread_sort_index", pid, tid, {{"sort_index", -98 + static_cast<int>(lane)}});
      lanes.push_back({tid, 0});
    }
    lanes[lane].second = op_end;
    for (; i < j; ++i) {
      const model::CpCommSlice& s = rv.comm[i];
      Json args = {{"kind", std::string(model::Name(s.kind))}};
      if (s.instance >= 0) args["instance"] = s.instance;
      slice(lanes[lane].first, fmt::format("{} {}", model::Name(s.kind), PartName(s.part)), PartCategory(s.part),
            s.start, s.end, std::move(args));
    }
    lane_of_op[{rv.rank, op_start}] = {pid, lanes[lane].first};
  }
  // GPU memory as a counter, MiB; the value the window starts with first.
  auto counter = [&](const model::MemoryPoint& p) {
    json_.Event({{"ph", "C"},
                 {"name", "GPU memory"},
                 {"pid", pid},
                 {"ts", Us(p.time_ns)},
                 {"args", {{"MiB", std::round(static_cast<double>(p.bytes) / 1048.576) / 1000.0}}}});
  };
  const model::MemoryPoint* before = nullptr;
  for (const auto& p : rv.memory) {
    if (start_ns && p.time_ns < *start_ns) {
      before = &p;
      continue;
    }
    if (end_ns && p.time_ns > *end_ns) break;
    if (before) counter(*before), before = nullptr;
    counter(p);
  }
  if (before) counter(*before);
}

// Flows: the ops of one instance in the order the ranks arrived, the last arrival last.
void ChromeTraceFormat::CpFlows(const model::CpView& cp,
                                const std::map<std::pair<int, int64_t>, std::pair<int, int64_t>>& lane_of_op) {
  for (size_t n = 0; n < cp.instances.size(); ++n) {
    const model::CpInstance& in = cp.instances[n];
    std::vector<std::tuple<int, int64_t, int64_t>> points;  // pid, tid, ts
    for (const auto& [rank, start] : in.arrivals) {
      auto lane = lane_of_op.find({rank, start});
      if (lane != lane_of_op.end()) points.emplace_back(lane->second.first, lane->second.second, start);
    }
    if (points.size() < 2) continue;
    for (size_t k = 0; k < points.size(); ++k) {
      const auto& [pid, tid, ts] = points[k];
      Json e = {{"ph", k == 0                   ? "s"
                       : k + 1 == points.size() ? "f"
                                                : "t"},
                {"name", fmt::format("{} instance", model::Name(in.kind))},
                {"cat", "cp.collective"},
                {"id", kCpFlowIdBase + static_cast<int64_t>(n)},
                {"pid", pid},
                {"tid", tid},
                {"ts", Us(ts)},
                {"bp", "e"}};
      json_.Event(e);
    }
    ++cp_flows_;
  }
}

}  // namespace cpprof::render
