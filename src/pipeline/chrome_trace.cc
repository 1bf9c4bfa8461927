#include "pipeline/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analysis/classify.h"
#include "analysis/ranks.h"
#include "model/global_id.h"
#include "model/op_class.h"
#include "nsys/export_reader.h"
#include "nsys/gpu_work_loader.h"
#include "nsys/nccl_ranks.h"
#include "nsys/nvtx_reader.h"
#include "render/chrome_trace_writer.h"

namespace cpprof::pipeline {

namespace {

using Json = render::ChromeTraceWriter::Json;
using model::OpClass;
using nsys::Database;
using nsys::Statement;

// Tracks that are not OS threads (CUDA streams, NVTX start/end lanes) get tids from here up, in
// the order they are first met: unique across the whole trace, since Perfetto keys threads by tid.
constexpr int64_t kSyntheticTidBase = 1'000'000'000;

// The processes with GPU work and their op counts per device, which is all AssignRanks reads:
// counted with GROUP BY instead of loading every op.
StatusOr<model::GpuWork> GpuProcesses(const Database& db) {
  std::map<int64_t, std::map<int, int64_t>> counts;
  for (const char* table : {nsys::kKernelTable, nsys::kMemcpyTable, nsys::kMemsetTable}) {
    if (!db.HasTable(table)) continue;
    CPPROF_ASSIGN_OR_RETURN(
        Statement st,
        db.Prepare(fmt::format("SELECT globalPid, deviceId, count(*) FROM {} GROUP BY 1, 2", table),
                   "counting GPU ops"));
    while (st.Step()) counts[st.Int(0)][static_cast<int>(st.Int(1))] += st.Int(2);
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  CPPROF_ASSIGN_OR_RETURN(auto procs, nsys::ReadProcesses(db));
  model::GpuWork work;
  for (auto& [gpid, per_device] : counts) {
    model::ProcessGpuWork p;
    p.global_pid = gpid;
    p.pid = nsys::PidOf(gpid);
    p.ops_per_device = per_device;
    auto it = procs.find(gpid);
    if (it != procs.end()) p.name = it->second.name;
    work.processes.push_back(std::move(p));
  }
  return work;
}

struct RankProcess {
  int rank = 0;
  int pid = 0;
  int device = -1;
  std::string name;
};

struct StreamTrack {
  int64_t tid = 0;
  bool comm = false;
};

struct Launch {
  uint64_t key;  // rank << 32 | correlationId
  int64_t ts_ns;
  int pid;
  int64_t tid;
};

class TraceBuilder {
 public:
  TraceBuilder(const Database& db, const nsys::ExportSchema& schema, const ChromeTraceOptions& options)
      : db_(db), schema_(schema), options_(options), strings_(db) {}

  StatusOr<ChromeTraceSummary> Run(std::ostream& out) {
    CPPROF_ASSIGN_OR_RETURN(model::GpuWork work, GpuProcesses(db_));
    CPPROF_ASSIGN_OR_RETURN(auto nccl, nsys::ReadNcclRanks(db_));
    analysis::RankAssignment ranks = analysis::AssignRanks(work, nccl);
    int world = static_cast<int>(ranks.process_of_rank.size());
    for (int r : options_.ranks) {
      if (r < 0 || r >= world) {
        return Error(ExitCode::kUsage,
                     world == 0 ? fmt::format("--ranks {}: the export holds no GPU work, so no ranks", r)
                                : fmt::format("--ranks {}: the export has ranks 0..{}", r, world - 1));
      }
    }
    for (int r = 0; r < world; ++r) {
      if (!options_.ranks.empty() &&
          std::find(options_.ranks.begin(), options_.ranks.end(), r) == options_.ranks.end()) {
        continue;
      }
      const auto& p = work.processes[ranks.process_of_rank[r]];
      procs_[p.global_pid] = {r, p.pid, p.MainDevice(), p.name};
    }
    summary_.ranks = static_cast<int>(procs_.size());
    summary_.notes = ranks.notes;

    Json other;
    other["generator"] = std::string("cpprof ") + CPPROF_VERSION;
    other["nsys_version"] = schema_.nsys_version;
    other["export_schema"] = schema_.schema_version;
    other["rank_method"] = ranks.method;
    other["time"] = "ts and dur in microseconds of the export's clock (0 = start of the nsys session)";
    render::ChromeTraceWriter writer(out, other);
    writer_ = &writer;

    bool api = (options_.api || options_.flows) && db_.HasTable(nsys::kRuntimeTable);
    if ((options_.api || options_.flows) && !api) {
      summary_.notes.push_back("the export has no CUDA runtime API calls (captured with --trace cuda): "
                               "no API calls or flows");
    }
    if (api) CPPROF_RETURN_IF_ERROR(WriteApiCalls());
    CPPROF_RETURN_IF_ERROR(WriteKernels());
    CPPROF_RETURN_IF_ERROR(WriteMemOps());
    CPPROF_RETURN_IF_ERROR(strings_.status());
    if (api && options_.flows) WriteFlowStarts();
    if (options_.nvtx && db_.HasTable(nsys::kNvtxTable)) CPPROF_RETURN_IF_ERROR(WriteNvtx());
    CPPROF_RETURN_IF_ERROR(WriteMetadata());
    writer.Finish();
    summary_.events = writer.events();
    return summary_;
  }

 private:
  bool InWindow(int64_t start, int64_t end) const {
    return (!options_.start_ns || end >= *options_.start_ns) && (!options_.end_ns || start <= *options_.end_ns);
  }

  const RankProcess* ProcessOf(int64_t global_pid) {
    if (global_pid == last_gpid_) return last_proc_;
    auto it = procs_.find(global_pid);
    last_gpid_ = global_pid;
    last_proc_ = it == procs_.end() ? nullptr : &it->second;
    return last_proc_;
  }

  // A complete event; times clamped so that ts >= 0 and dur >= 0, with the raw values in args.
  void EmitX(std::string_view name, std::string_view cat, int pid, int64_t tid, int64_t start, int64_t end,
             Json args) {
    if (end < start) {
      args["end_before_start_ns"] = end;
      end = start;
    }
    if (start < 0) {
      args["clamped_start_ns"] = start;
      start = 0;
      end = std::max<int64_t>(end, 0);
    }
    Json e;
    e["ph"] = "X";
    e["name"] = std::string(name);
    e["cat"] = std::string(cat);
    e["pid"] = pid;
    e["tid"] = tid;
    e["ts"] = render::Micros(start);
    e["dur"] = render::Micros(end - start);
    if (!args.is_null()) e["args"] = std::move(args);
    writer_->Event(e);
  }

  int64_t StreamTid(int64_t gpid, int device, int stream, bool comm) {
    auto [it, inserted] = streams_.try_emplace({gpid, device, stream});
    if (inserted) it->second.tid = next_tid_++;
    it->second.comm |= comm;
    return it->second.tid;
  }

  int64_t ThreadTid(int64_t global_tid) {
    threads_.emplace(global_tid, 0);
    return nsys::TidOf(global_tid);
  }

  OpClass ClassOf(int64_t name_id) {
    auto it = classes_.find(name_id);
    if (it != classes_.end()) return it->second;
    return classes_[name_id] = analysis::ClassifyKernel(strings_.Get(name_id));
  }

  std::string Col(const char* table, const char* column, const char* fallback) const {
    return db_.HasColumn(table, column) ? column : fallback;
  }

  Status WriteApiCalls() {
    const char* t = nsys::kRuntimeTable;
    CPPROF_ASSIGN_OR_RETURN(
        Statement st, db_.Prepare(fmt::format("SELECT start, end, globalTid, {}, nameId FROM {}",
                                              Col(t, "correlationId", "NULL"), t),
                                  "reading CUDA runtime API calls"));
    while (st.Step()) {
      int64_t start = st.Int(0), end = st.Int(1), gtid = st.Int(2);
      const RankProcess* p = ProcessOf(model::GlobalPidOf(gtid));
      if (!p || !InWindow(start, end)) continue;
      int64_t tid = ThreadTid(gtid);
      Json args;
      if (!st.IsNull(3)) {
        args["correlationId"] = st.Int(3);
        if (options_.flows) {
          launches_.push_back({Key(p->rank, st.Int(3)), std::max<int64_t>(start, 0), p->pid, tid});
        }
      }
      EmitX(strings_.Get(st.Int(4)), "cuda_api", p->pid, tid, start, end, std::move(args));
      ++summary_.api_calls;
    }
    CPPROF_RETURN_IF_ERROR(st.status());
    std::stable_sort(launches_.begin(), launches_.end(),
                     [](const Launch& a, const Launch& b) { return a.key < b.key; });
    launch_used_.assign(launches_.size(), false);
    return OkStatus();
  }

  static uint64_t Key(int rank, int64_t correlation_id) {
    return (static_cast<uint64_t>(rank) << 32) | static_cast<uint32_t>(correlation_id);
  }

  // The end of a GPU op's flow: the first op of a launch (graph launches run several).
  void MaybeFlowEnd(const RankProcess& p, bool has_corr, int64_t corr, int64_t tid, int64_t start) {
    if (!options_.flows || !has_corr || launches_.empty()) return;
    uint64_t key = Key(p.rank, corr);
    auto it = std::lower_bound(launches_.begin(), launches_.end(), key,
                               [](const Launch& l, uint64_t k) { return l.key < k; });
    if (it == launches_.end() || it->key != key) return;
    size_t i = static_cast<size_t>(it - launches_.begin());
    if (launch_used_[i]) return;
    launch_used_[i] = true;
    Json e;
    e["ph"] = "f";
    e["bp"] = "e";
    e["name"] = "launch";
    e["cat"] = "cuda_flow";
    e["id"] = key;
    e["pid"] = p.pid;
    e["tid"] = tid;
    e["ts"] = render::Micros(std::max<int64_t>(start, 0));
    writer_->Event(e);
    ++summary_.flows;
  }

  void WriteFlowStarts() {
    for (size_t i = 0; i < launches_.size(); ++i) {
      if (!launch_used_[i]) continue;
      const Launch& l = launches_[i];
      Json e;
      e["ph"] = "s";
      e["name"] = "launch";
      e["cat"] = "cuda_flow";
      e["id"] = l.key;
      e["pid"] = l.pid;
      e["tid"] = l.tid;
      e["ts"] = render::Micros(l.ts_ns);
      writer_->Event(e);
    }
  }

  Status WriteKernels() {
    const char* t = nsys::kKernelTable;
    std::string dims;
    for (const char* c : {"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"}) dims += ", " + Col(t, c, "NULL");
    CPPROF_ASSIGN_OR_RETURN(
        Statement st,
        db_.Prepare(fmt::format("SELECT start, end, globalPid, deviceId, streamId, {}, {}{} FROM {}",
                                Col(t, "correlationId", "NULL"), schema_.kernel_name_column, dims, t),
                    "reading kernels"));
    while (st.Step()) {
      int64_t start = st.Int(0), end = st.Int(1);
      gpu_max_end_ = std::max(gpu_max_end_, std::max(start, end));
      const RankProcess* p = ProcessOf(st.Int(2));
      if (!p || !InWindow(start, end)) continue;
      int device = static_cast<int>(st.Int(3)), stream = static_cast<int>(st.Int(4));
      int64_t name_id = st.Int(6);
      OpClass cls = ClassOf(name_id);
      int64_t tid = StreamTid(st.Int(2), device, stream, model::IsComm(cls));
      Json args;
      args["stream"] = stream;
      args["device"] = device;
      bool has_corr = !st.IsNull(5);
      if (has_corr) args["correlationId"] = st.Int(5);
      if (!st.IsNull(7)) {
        args["grid"] = {st.Int(7), st.Int(8), st.Int(9)};
        args["block"] = {st.Int(10), st.Int(11), st.Int(12)};
      }
      EmitX(strings_.Get(name_id), model::Name(cls), p->pid, tid, start, end, std::move(args));
      MaybeFlowEnd(*p, has_corr, st.Int(5), tid, start);
      ++summary_.gpu_ops;
    }
    return st.status();
  }

  Status WriteMemOps() {
    CPPROF_ASSIGN_OR_RETURN(auto kind_names, nsys::ReadMemcpyKindNames(db_));
    for (const char* t : {nsys::kMemcpyTable, nsys::kMemsetTable}) {
      if (!db_.HasTable(t)) continue;
      bool memcpy = t == std::string_view(nsys::kMemcpyTable);
      CPPROF_ASSIGN_OR_RETURN(
          Statement st,
          db_.Prepare(fmt::format("SELECT start, end, globalPid, deviceId, streamId, {}, bytes, {} FROM {}",
                                  Col(t, "correlationId", "NULL"), memcpy ? "copyKind" : "-1", t),
                      memcpy ? "reading memcpys" : "reading memsets"));
      while (st.Step()) {
        int64_t start = st.Int(0), end = st.Int(1);
        gpu_max_end_ = std::max(gpu_max_end_, std::max(start, end));
        const RankProcess* p = ProcessOf(st.Int(2));
        if (!p || !InWindow(start, end)) continue;
        int device = static_cast<int>(st.Int(3)), stream = static_cast<int>(st.Int(4));
        int kind = static_cast<int>(st.Int(7));
        OpClass cls = kind < 0                             ? OpClass::kMemset
                      : kind == nsys::kMemcpyPeerToPeer ? OpClass::kPeerCopy
                                                          : OpClass::kMemcpy;
        std::string name = "[CUDA memset]";
        if (kind >= 0) {
          auto it = kind_names.find(kind);
          name = it != kind_names.end() ? it->second : fmt::format("[CUDA memcpy kind {}]", kind);
        }
        int64_t tid = StreamTid(st.Int(2), device, stream, model::IsComm(cls));
        Json args;
        args["stream"] = stream;
        args["device"] = device;
        bool has_corr = !st.IsNull(5);
        if (has_corr) args["correlationId"] = st.Int(5);
        args["bytes"] = st.Int(6);
        EmitX(name, model::Name(cls), p->pid, tid, start, end, std::move(args));
        MaybeFlowEnd(*p, has_corr, st.Int(5), tid, start);
        ++summary_.gpu_ops;
      }
      CPPROF_RETURN_IF_ERROR(st.status());
    }
    return OkStatus();
  }

  // Where ranges still open when the capture stopped end: the last timestamp of the export's
  // GPU ops, CUDA API calls and NVTX events.
  StatusOr<int64_t> CaptureEnd() {
    if (capture_end_) return *capture_end_;
    int64_t end = gpu_max_end_;
    std::vector<std::string> queries = {
        fmt::format("SELECT max(max(start), coalesce(max(end), 0)) FROM {}", nsys::kNvtxTable)};
    if (db_.HasTable(nsys::kRuntimeTable)) {
      queries.push_back(fmt::format("SELECT max(end) FROM {}", nsys::kRuntimeTable));
    }
    for (const auto& q : queries) {
      CPPROF_ASSIGN_OR_RETURN(Statement st, db_.Prepare(q, "finding the end of the capture"));
      if (st.Step()) end = std::max(end, st.Int(0));
      CPPROF_RETURN_IF_ERROR(st.status());
    }
    capture_end_ = end;
    return end;
  }

  // Start/end ranges need not nest, and overlapping complete events on one track do not draw:
  // each goes to the first lane of its thread where it nests (ranges come in start order).
  int64_t LaneTid(int64_t global_tid, int64_t start, int64_t end) {
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

  Status WriteNvtx() {
    CPPROF_ASSIGN_OR_RETURN(nsys::NvtxDomains domains, nsys::NvtxDomains::Read(db_));
    const char* t = nsys::kNvtxTable;
    CPPROF_ASSIGN_OR_RETURN(
        Statement st,
        db_.Prepare(fmt::format("SELECT ne.start, ne.end, ne.eventType, ne.domainId, ne.globalTid, "
                                "coalesce(sid.value, ne.text, ''), {} FROM {} AS ne LEFT JOIN StringIds AS sid "
                                "ON ne.textId == sid.id WHERE ne.eventType IN ({}, {}, {}, {}) "
                                "ORDER BY ne.start, coalesce(ne.end, 9223372036854775807) DESC, ne.rowid",
                                db_.HasColumn(t, "endGlobalTid") ? "ne.endGlobalTid" : "NULL", t,
                                nsys::kNvtxPushPop, nsys::kNvtxStartEnd, nsys::kNvtxtPushPop,
                                nsys::kNvtxtStartEnd),
                    "reading NVTX ranges"));
    int64_t skipped = 0;
    while (st.Step()) {
      int64_t start = st.Int(0), gtid = st.Int(4);
      const RankProcess* p = ProcessOf(model::GlobalPidOf(gtid));
      if (!p) {
        ++skipped;
        continue;
      }
      Json args;
      int64_t end = st.Int(1);
      if (st.IsNull(1)) {
        CPPROF_ASSIGN_OR_RETURN(end, CaptureEnd());
        end = std::max(end, start);
        args["open_at_capture_end"] = true;
      }
      if (!InWindow(start, end)) continue;
      int type = static_cast<int>(st.Int(2));
      std::string name = domains.NamesFor(st.Int(3), gtid).front() + ":" + std::string(st.Text(5));
      bool push_pop = type == nsys::kNvtxPushPop || type == nsys::kNvtxtPushPop;
      int64_t tid;
      if (push_pop) {
        tid = ThreadTid(gtid);
      } else {
        ThreadTid(gtid);  // named with its thread
        tid = LaneTid(gtid, start, end);
        args["thread"] = nsys::TidOf(gtid);
        if (!st.IsNull(6) && st.Int(6) != gtid) args["ended_on_tid"] = nsys::TidOf(st.Int(6));
      }
      EmitX(name, push_pop ? "nvtx" : "nvtx start/end", p->pid, tid, start, end, std::move(args));
      ++summary_.nvtx_ranges;
    }
    CPPROF_RETURN_IF_ERROR(st.status());
    if (skipped) {
      summary_.notes.push_back(fmt::format(
          "{} NVTX ranges of processes without GPU work (or of ranks not asked for) were left out", skipped));
    }
    return OkStatus();
  }

  StatusOr<std::map<int64_t, std::string>> ThreadNames() {
    std::map<int64_t, std::string> names;
    if (!db_.HasTable("ThreadNames")) return names;
    CPPROF_ASSIGN_OR_RETURN(
        Statement st, db_.Prepare("SELECT tn.globalTid, sid.value FROM ThreadNames AS tn JOIN StringIds AS sid "
                                  "ON tn.nameId == sid.id ORDER BY tn.rowid",
                                  "reading ThreadNames"));
    while (st.Step()) {
      if (threads_.count(st.Int(0))) names[st.Int(0)] = std::string(st.Text(1));
    }
    CPPROF_RETURN_IF_ERROR(st.status());
    return names;
  }

  void Metadata(const char* what, int pid, std::optional<int64_t> tid, Json args) {
    Json e;
    e["ph"] = "M";
    e["name"] = what;
    e["pid"] = pid;
    if (tid) e["tid"] = *tid;
    e["args"] = std::move(args);
    writer_->Event(e);
  }

  Status WriteMetadata() {
    CPPROF_ASSIGN_OR_RETURN(auto thread_names, ThreadNames());
    std::vector<const std::pair<const int64_t, RankProcess>*> by_rank;
    for (const auto& kv : procs_) by_rank.push_back(&kv);
    std::sort(by_rank.begin(), by_rank.end(), [](auto* a, auto* b) { return a->second.rank < b->second.rank; });
    for (const auto* kv : by_rank) {
      int64_t gpid = kv->first;
      const RankProcess& p = kv->second;
      std::string label = fmt::format("rank {} (pid {}, GPU {})", p.rank, p.pid, p.device);
      if (!p.name.empty()) label += " " + p.name;
      Metadata("process_name", p.pid, std::nullopt, {{"name", label}});
      Metadata("process_sort_index", p.pid, std::nullopt, {{"sort_index", p.rank}});
      // GPU streams: compute first, then communication; by device and stream id.
      int64_t sort = 0;
      for (bool comm : {false, true}) {
        for (const auto& [key, s] : streams_) {
          const auto& [sgpid, device, stream] = key;
          if (sgpid != gpid || s.comm != comm) continue;
          std::string name = fmt::format("stream {}", stream);
          if (device != p.device) name += fmt::format(" (GPU {})", device);
          if (comm) name += " (comm)";
          Metadata("thread_name", p.pid, s.tid, {{"name", name}});
          Metadata("thread_sort_index", p.pid, s.tid, {{"sort_index", sort++}});
        }
      }
      // CPU threads after the streams, by tid; each thread's NVTX start/end lanes below it.
      for (const auto& [gtid, unused] : threads_) {
        if (model::GlobalPidOf(gtid) != gpid) continue;
        auto it = thread_names.find(gtid);
        std::string name = it != thread_names.end() ? it->second : fmt::format("thread {}", nsys::TidOf(gtid));
        Metadata("thread_name", p.pid, nsys::TidOf(gtid), {{"name", name}});
        Metadata("thread_sort_index", p.pid, nsys::TidOf(gtid), {{"sort_index", sort++}});
        auto lanes = lanes_.find(gtid);
        if (lanes == lanes_.end()) continue;
        for (size_t i = 0; i < lanes->second.size(); ++i) {
          std::string lane = fmt::format("{} NVTX start/end{}", name, i ? fmt::format(" {}", i + 1) : "");
          Metadata("thread_name", p.pid, lanes->second[i].tid, {{"name", lane}});
          Metadata("thread_sort_index", p.pid, lanes->second[i].tid, {{"sort_index", sort++}});
        }
      }
    }
    return OkStatus();
  }

  struct Lane {
    int64_t tid;
    std::vector<int64_t> ends;
  };

  const Database& db_;
  const nsys::ExportSchema& schema_;
  const ChromeTraceOptions& options_;
  nsys::StringTable strings_;
  render::ChromeTraceWriter* writer_ = nullptr;
  ChromeTraceSummary summary_;

  std::map<int64_t, RankProcess> procs_;  // by globalPid: the ranks kept
  int64_t last_gpid_ = -1;
  const RankProcess* last_proc_ = nullptr;
  std::unordered_map<int64_t, OpClass> classes_;
  std::map<std::tuple<int64_t, int, int>, StreamTrack> streams_;  // (globalPid, device, stream)
  std::map<int64_t, int> threads_;                                // CPU threads used, by globalTid
  std::map<int64_t, std::vector<Lane>> lanes_;                    // NVTX start/end lanes by globalTid
  int64_t next_tid_ = kSyntheticTidBase;
  std::vector<Launch> launches_;  // sorted by key
  std::vector<bool> launch_used_;
  int64_t gpu_max_end_ = 0;
  std::optional<int64_t> capture_end_;
};

}  // namespace

StatusOr<ChromeTraceSummary> WriteChromeTrace(const std::string& path, const ChromeTraceOptions& options,
                                              std::ostream& out) {
  CPPROF_ASSIGN_OR_RETURN(Database db, Database::Open(path));
  CPPROF_ASSIGN_OR_RETURN(nsys::ExportSchema schema, nsys::ProbeExport(db));
  TraceBuilder builder(db, schema, options);
  return builder.Run(out);
}

}  // namespace cpprof::pipeline
