#include "pipeline/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "analysis/classify.h"
#include "analysis/clock_align.h"
#include "analysis/ranks.h"
#include "base/batch_pipe.h"
#include "base/input_files.h"
#include "base/parallel.h"
#include "base/stage_timer.h"
#include "model/global_id.h"
#include "model/op_class.h"
#include "nsys/capture_reader.h"
#include "nsys/export_reader.h"
#include "nsys/gpu_work_loader.h"
#include "nsys/iteration_ranges.h"
#include "nsys/launch_reader.h"
#include "nsys/nccl_ranks.h"
#include "nsys/nvtx_reader.h"
#include "pipeline/run_reader.h"
#include "render/chrome_trace_writer.h"

namespace cpprof::pipeline {

namespace {

using Json = render::ChromeTraceWriter::Json;
using model::OpClass;
using nsys::Database;

// Tracks that are not OS threads (CUDA streams, NVTX start/end lanes) get tids from here up, in
// the order they are first met: unique across the whole trace, since Perfetto keys threads by tid.
constexpr int64_t kSyntheticTidBase = 1'000'000'000;

struct RankProcess {
  int rank = 0;
  int pid = 0;  // the trace's pid: the OS pid, or the rank in a trace of several exports
  int os_pid = 0;
  int device = -1;
  std::string name;
};

// Where one export of a run read from several goes in the one trace.
struct Placement {
  int64_t offset_ns = 0;                                   // added to the export's times: the run's clock
  std::map<int64_t, int> rank_of;                          // the export's globalPid -> the run's rank
  render::ChromeTraceWriter* writer = nullptr;             // shared by every export's builder
  int64_t* next_tid = nullptr;                             // synthetic tids unique over the whole trace
  const std::vector<model::GpuProcess>* census = nullptr;  // the export's, read once for the run
};

struct StreamTrack {
  int64_t tid = 0;
  bool comm = false;
};

// A CUDA call that may start a flow (--flows): 20 bytes, one per call with a correlation id (13
// million at 10 GB of export). Its thread is an index into the builder's launch_threads_.
struct __attribute__((packed, aligned(4))) Launch {
  uint64_t key;  // rank << 32 | correlationId
  int64_t ts_ns;
  uint32_t thread;
};
static_assert(sizeof(Launch) == 20);

// --ranks must name ranks the run has.
Status CheckRanks(const std::vector<int>& wanted, int world, const char* what = "the export") {
  for (int r : wanted) {
    if (r < 0 || r >= world) {
      return Error(ExitCode::kUsage, world == 0
                                         ? fmt::format("--ranks {}: the export holds no GPU work, so no ranks", r)
                                         : fmt::format("--ranks {}: {} has ranks 0..{}", r, what, world - 1));
    }
  }
  return OkStatus();
}

// Flow ids of the CP view's instances start here: above every launch flow's (rank << 32 |
// correlationId) and below 2^53, so viewers that read ids as doubles keep them apart.
constexpr int64_t kCpFlowIdBase = int64_t{1} << 52;

double Us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// The CP view's tracks and events for the ranks kept (`pid_of_rank`: rank -> the trace's pid).
void WriteCpView(const CpView& cp, const std::map<int, int>& pid_of_rank, const ChromeTraceOptions& options,
                 int64_t offset_ns, render::ChromeTraceWriter& w, int64_t& next_tid, ChromeTraceSummary& summary) {
  auto in_window = [&](int64_t start, int64_t end) {
    return (!options.start_ns || end >= *options.start_ns) && (!options.end_ns || start <= *options.end_ns);
  };
  auto meta = [&](const char* what, int pid, int64_t tid, Json args) {
    w.Event({{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}});
  };
  auto slice = [&](int pid, int64_t tid, const std::string& name, const char* cat, int64_t start, int64_t end,
                   Json args) {
    w.Event({{"ph", "X"},
             {"name", name},
             {"cat", cat},
             {"pid", pid},
             {"tid", tid},
             {"ts", Us(start)},
             {"dur", Us(end - start)},
             {"args", std::move(args)}});
    ++summary.cp_slices;
  };
  // (rank, op start) -> (pid, tid) of its communication lane, for the flows.
  std::map<std::pair<int, int64_t>, std::pair<int, int64_t>> lane_of_op;
  for (const auto& rv : cp.ranks) {
    auto pid_it = pid_of_rank.find(rv.rank);
    if (pid_it == pid_of_rank.end()) continue;
    const int pid = pid_it->second;
    const int64_t mod_tid[2] = {next_tid++, next_tid++};
    meta("thread_name", pid, mod_tid[0], {{"name", "CP modules"}});
    meta("thread_sort_index", pid, mod_tid[0], {{"sort_index", -100}});
    meta("thread_name", pid, mod_tid[1], {{"name", "CP modules (one level down)"}});
    meta("thread_sort_index", pid, mod_tid[1], {{"sort_index", -99}});
    for (const auto& m : rv.modules) {
      if (!in_window(m.start, m.end)) continue;
      slice(pid, mod_tid[m.level], m.name, "cp.module", m.start + offset_ns, m.end + offset_ns,
            {{"path", m.path}, {"split", m.cp ? "CP" : "serial"}});
    }
    // Communication: ops that overlap (two kinds at once) go to the first lane where they fit.
    std::vector<std::pair<int64_t, int64_t>> lanes;  // (tid, end of its last op)
    for (size_t i = 0; i < rv.comm.size();) {
      const int64_t op_start = rv.comm[i].op_start;
      size_t j = i;
      int64_t op_end = op_start;
      while (j < rv.comm.size() && rv.comm[j].op_start == op_start && rv.comm[j].kind == rv.comm[i].kind) {
        op_end = std::max(op_end, rv.comm[j].end);
        ++j;
      }
      if (!in_window(op_start, op_end)) {
        i = j;
        continue;
      }
      size_t lane = 0;
      while (lane < lanes.size() && lanes[lane].second > op_start) ++lane;
      if (lane == lanes.size()) {
        const int64_t tid = next_tid++;
        meta("thread_name", pid, tid,
             {{"name", lane ? fmt::format("CP communication {}", lane + 1) : "CP communication"}});
        meta("thread_sort_index", pid, tid, {{"sort_index", -98 + static_cast<int>(lane)}});
        lanes.push_back({tid, 0});
      }
      lanes[lane].second = op_end;
      for (; i < j; ++i) {
        const CpCommSlice& s = rv.comm[i];
        const char* part = s.part == CpCommSlice::Part::kWait       ? "waiting"
                           : s.part == CpCommSlice::Part::kTransfer ? "transfer"
                                                                    : "unmatched";
        Json args = {{"kind", std::string(model::Name(s.kind))}};
        if (s.instance >= 0) args["instance"] = s.instance;
        slice(pid, lanes[lane].first, fmt::format("{} {}", model::Name(s.kind), part),
              s.part == CpCommSlice::Part::kWait       ? "cp.wait"
              : s.part == CpCommSlice::Part::kTransfer ? "cp.transfer"
                                                       : "cp.unmatched",
              s.start + offset_ns, s.end + offset_ns, std::move(args));
      }
      lane_of_op[{rv.rank, op_start}] = {pid, lanes[lane].first};
    }
    // GPU memory as a counter, MiB.
    auto counter = [&](const model::MemoryPoint& p) {
      w.Event({{"ph", "C"},
               {"name", "GPU memory"},
               {"pid", pid},
               {"ts", Us(p.time_ns + offset_ns)},
               {"args", {{"MiB", std::round(static_cast<double>(p.bytes) / 1048.576) / 1000.0}}}});
    };
    const model::MemoryPoint* before = nullptr;  // the value the window starts with
    for (const auto& p : rv.memory) {
      if (options.start_ns && p.time_ns < *options.start_ns) {
        before = &p;
        continue;
      }
      if (options.end_ns && p.time_ns > *options.end_ns) break;
      if (before) counter(*before), before = nullptr;
      counter(p);
    }
    if (before) counter(*before);
  }
  // Flows: the ops of one instance in the order the ranks arrived, the last arrival last.
  for (size_t n = 0; n < cp.instances.size(); ++n) {
    const CpInstance& in = cp.instances[n];
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
                {"ts", Us(ts + offset_ns)},
                {"bp", "e"}};
      w.Event(e);
    }
    ++summary.cp_flows;
  }
}

// read(db) on a connection of its own to the export at `path`.
template <class Read>
auto OnOwnConnection(const std::string& path, Read&& read) -> decltype(read(std::declval<const Database&>())) {
  CPPROF_ASSIGN_OR_RETURN(Database own, Database::Open(path));
  return read(own);
}

class TraceBuilder {
 public:
  TraceBuilder(const Database& db, const nsys::ExportSchema& schema, const ChromeTraceOptions& options)
      : db_(db), schema_(schema), options_(options), strings_(db) {}

  StatusOr<ChromeTraceSummary> Run(std::ostream& out, const Placement* place = nullptr) {
    StageTimer timer;
    // Whole-table scans before anything is written, each on a connection of its own where there
    // are cores: NCCL's rank payloads and the NVTX domain names (two scans of NVTX_EVENTS) while
    // this thread counts the GPU ops per process.
    const bool threads = WorkerThreads() > 1;
    std::future<StatusOr<std::map<int64_t, model::NcclRankInfo>>> nccl_read;
    if (!place && threads)
      nccl_read = std::async(std::launch::async, [path = db_.path()] {
        return OnOwnConnection(path, [](const Database& own) { return nsys::ReadNcclRanks(own); });
      });
    if (options_.nvtx && db_.HasTable(nsys::kNvtxTable) && threads) {
      domains_ = std::async(std::launch::async, [path = db_.path()] {
        return OnOwnConnection(path, [](const Database& own) { return nsys::NvtxDomains::Read(own); });
      });
    }
    std::vector<model::GpuProcess> gpu_procs;
    if (place && place->census) {
      gpu_procs = *place->census;
    } else {
      CPPROF_ASSIGN_OR_RETURN(gpu_procs, nsys::ReadGpuProcesses(db_));
    }
    std::optional<render::ChromeTraceWriter> own_writer;
    if (place) {
      off_ = place->offset_ns;
      next_tid_ = *place->next_tid;
      writer_ = place->writer;
      for (const auto& p : gpu_procs) {
        auto r = place->rank_of.find(p.global_pid);
        if (r == place->rank_of.end() || !Wanted(r->second)) continue;
        procs_[p.global_pid] = {r->second, r->second, p.pid, p.MainDevice(), p.name};
      }
    } else {
      CPPROF_ASSIGN_OR_RETURN(auto nccl, nccl_read.valid() ? nccl_read.get() : nsys::ReadNcclRanks(db_));
      analysis::RankAssignment ranks = analysis::AssignRanks(gpu_procs, nccl);
      CPPROF_RETURN_IF_ERROR(CheckRanks(options_.ranks, static_cast<int>(ranks.process_of_rank.size())));
      for (int r = 0; r < static_cast<int>(ranks.process_of_rank.size()); ++r) {
        if (!Wanted(r)) continue;
        const auto& p = gpu_procs[ranks.process_of_rank[r]];
        procs_[p.global_pid] = {r, p.pid, p.pid, p.MainDevice(), p.name};
      }
      summary_.notes = ranks.notes;
      Json other;
      other["generator"] = std::string("cpprof ") + CPPROF_VERSION;
      other["nsys_version"] = schema_.nsys_version;
      other["export_schema"] = schema_.schema_version;
      other["rank_method"] = ranks.method;
      other["time"] = "ts and dur in microseconds of the export's clock (0 = start of the nsys session)";
      Json top;
      if (options_.kineto) {
        // What Holistic Trace Analysis reads of a Kineto trace (docs/kineto.md).
        int rank = procs_.empty() ? 0 : procs_.begin()->second.rank;
        top["schemaVersion"] = 1;
        top["distributedInfo"] = {
            {"backend", "nccl"}, {"rank", rank}, {"world_size", static_cast<int>(ranks.process_of_rank.size())}};
        Json devices = Json::array();
        for (const auto& [gpid, p] : procs_) devices.push_back({{"id", p.device}});
        top["deviceProperties"] = devices;
        top["traceName"] = fmt::format("cpprof kineto export, rank {}", rank);
      }
      own_writer.emplace(out, other, top);
      writer_ = &*own_writer;
    }
    summary_.ranks = static_cast<int>(procs_.size());

    const bool want_api = options_.api || options_.flows || options_.kineto;
    bool api = want_api && db_.HasTable(nsys::kRuntimeTable);
    if (want_api && !api) {
      summary_.notes.push_back(
          "the export has no CUDA runtime API calls (captured with --trace cuda): "
          "no API calls or flows");
    }
    timer.Mark("export: processes, ranks");
    if (api) CPPROF_RETURN_IF_ERROR(WriteApiCalls());
    timer.Mark("export: API calls");
    if (WorkerThreads() > 1) gpu_writer_ = std::make_unique<BatchWriter<GpuOpBatch>>(*writer_, off_);
    Status gpu_status = WriteKernels();
    timer.Mark("export: kernels");
    if (gpu_status.ok()) gpu_status = WriteMemOps();
    FinishBatches(gpu_batch_, gpu_writer_);  // every GPU op written before anything else is
    CPPROF_RETURN_IF_ERROR(gpu_status);
    CPPROF_RETURN_IF_ERROR(strings_.status());
    if (api && options_.flows) WriteFlowStarts();
    timer.Mark("export: memory ops, flows");
    if (options_.nvtx && db_.HasTable(nsys::kNvtxTable)) CPPROF_RETURN_IF_ERROR(WriteNvtx());
    timer.Mark("export: NVTX");
    CPPROF_RETURN_IF_ERROR(WriteMetadata());
    if (!place && options_.await_cp) CPPROF_RETURN_IF_ERROR(options_.await_cp());
    timer.Mark("export: metadata, CP view awaited");
    if (!place && options_.cp && !options_.kineto) {
      std::map<int, int> pid_of_rank;
      for (const auto& [gpid, p] : procs_) pid_of_rank[p.rank] = p.pid;
      WriteCpView(*options_.cp, pid_of_rank, options_, 0, *writer_, next_tid_, summary_);
    }
    if (place) {
      *place->next_tid = next_tid_;
    } else {
      own_writer->Finish();
      summary_.events = own_writer->events();
    }
    return summary_;
  }

  bool Wanted(int rank) const {
    return options_.ranks.empty() ||
           std::find(options_.ranks.begin(), options_.ranks.end(), rank) != options_.ranks.end();
  }

 private:
  bool InWindow(int64_t start, int64_t end) const {
    return (!options_.start_ns || end + off_ >= *options_.start_ns) &&
           (!options_.end_ns || start + off_ <= *options_.end_ns);
  }

  // The category of an event: the op class in a Chrome trace, Kineto's name in a Kineto trace.
  std::string_view Cat(std::string_view chrome, std::string_view kineto) const {
    return options_.kineto ? kineto : chrome;
  }
  static std::string_view KinetoCat(OpClass cls) {
    return cls == OpClass::kMemset                                ? "gpu_memset"
           : cls == OpClass::kMemcpy || cls == OpClass::kPeerCopy ? "gpu_memcpy"
                                                                  : "kernel";
  }
  // The arg that holds a launch's correlation id: Kineto's name in a Kineto trace.
  static const char* CorrelationKey(bool kineto) { return kineto ? "correlation" : "correlationId"; }
  // Kineto puts GPU ops on pid = device, tid = stream.
  int GpuPid(const RankProcess& p, int device) const { return options_.kineto ? device : p.pid; }

  const RankProcess* ProcessOf(int64_t global_pid) {
    if (global_pid == last_gpid_) return last_proc_;
    auto it = procs_.find(global_pid);
    last_gpid_ = global_pid;
    last_proc_ = it == procs_.end() ? nullptr : &it->second;
    return last_proc_;
  }

  // A complete event's fields (between its braces); times clamped so that ts >= 0 and dur >= 0,
  // with the raw values in args. `name(w)` writes the name's value; `args(w)` the event's own
  // args (`has_args`: whether it writes any). Shared by EmitX and the NVTX batches, so that both
  // write the same bytes.
  template <class NameFn, class ArgsFn>
  static void WriteX(render::JsonWriter& w, int64_t off, NameFn&& name, std::string_view cat, int pid, int64_t tid,
                     int64_t start, int64_t end, bool has_args, ArgsFn&& args) {
    start += off;
    end += off;
    std::optional<int64_t> end_before_start, clamped_start;
    if (end < start) {
      end_before_start = end;
      end = start;
    }
    if (start < 0) {
      clamped_start = start;
      start = 0;
      end = std::max<int64_t>(end, 0);
    }
    w.Key("ph"), w.RawString("\"X\"");
    w.Key("name"), name(w);
    w.Key("cat"), w.String(cat);
    w.Key("pid"), w.Int(pid);
    w.Key("tid"), w.Int(tid);
    w.Key("ts"), w.Thousandths(start);
    w.Key("dur"), w.Thousandths(end - start);
    if (has_args || end_before_start || clamped_start) {
      w.Key("args");
      w.BeginObject();
      args(w);
      if (end_before_start) w.Key("end_before_start_ns"), w.Int(*end_before_start);
      if (clamped_start) w.Key("clamped_start_ns"), w.Int(*clamped_start);
      w.EndObject();
    }
  }

  // A complete event (WriteX); `name` is the name serialized (JsonWriter::EscapedString, cached
  // for names that repeat).
  template <class ArgsFn>
  void EmitX(std::string_view name, std::string_view cat, int pid, int64_t tid, int64_t start, int64_t end,
             bool has_args, ArgsFn&& args) {
    render::JsonWriter& w = writer_->Begin();
    WriteX(
        w, off_, [&](render::JsonWriter& jw) { jw.RawString(name); }, cat, pid, tid, start, end, has_args, args);
    writer_->End();
  }

  // A name of StringIds, serialized once.
  const std::string& EscapedName(int64_t name_id) {
    auto [it, inserted] = escaped_names_.try_emplace(name_id);
    if (inserted) it->second = writer_->Escape(strings_.Get(name_id));
    return it->second;
  }

  int64_t StreamTid(int64_t gpid, int device, int stream, bool comm) {
    auto [it, inserted] = streams_.try_emplace({gpid, device, stream});
    if (inserted) it->second.tid = next_tid_++;
    it->second.comm |= comm;
    return it->second.tid;
  }

  // nsys names API calls with their ABI version ("cudaLaunchKernel_v7000"); Kineto (and HTA's
  // launch statistics) use the plain name.
  const std::string& KinetoApiName(int64_t name_id) {
    auto [it, inserted] = kineto_api_names_.try_emplace(name_id);
    if (inserted) {
      std::string name(strings_.Get(name_id));
      size_t v = name.rfind("_v");
      if (v != std::string::npos && v + 2 < name.size() &&
          name.find_first_not_of("0123456789", v + 2) == std::string::npos) {
        name.resize(v);
      }
      it->second = writer_->Escape(name);
    }
    return it->second;
  }

  int64_t KinetoStreamTid(const RankProcess& p, int device, int stream) {
    kineto_streams_.emplace(device, stream);
    (void)p;
    return stream;
  }

  int64_t ThreadTid(int64_t global_tid) {
    if (global_tid != last_thread_) {  // most events come in runs of one thread's
      threads_.try_emplace(global_tid, 0);
      last_thread_ = global_tid;
    }
    return nsys::TidOf(global_tid);
  }

  OpClass ClassOf(int64_t name_id) {
    auto it = classes_.find(name_id);
    if (it != classes_.end()) return it->second;
    return classes_[name_id] = analysis::ClassifyKernel(strings_.Get(name_id));
  }

  Status WriteApiCalls() {
    CPPROF_ASSIGN_OR_RETURN(nsys::ApiCallCursor calls, nsys::ApiCallCursor::Open(db_, false, false));
    if (WorkerThreads() > 1) api_writer_ = std::make_unique<BatchWriter<ApiCallBatch>>(*writer_, off_);
    while (calls.Next()) {
      const nsys::ApiCallRow& c = calls.row();
      const RankProcess* p = ProcessOf(model::GlobalPidOf(c.global_tid));
      if (!p || !InWindow(c.start, c.end)) continue;
      int64_t tid = ThreadTid(c.global_tid);
      if (c.has_correlation && options_.flows) {
        if (c.global_tid != last_launch_gtid_) {
          auto [it, added] = launch_thread_of_.try_emplace(c.global_tid, static_cast<uint32_t>(launch_threads_.size()));
          if (added) launch_threads_.push_back({p->pid, tid});
          last_launch_gtid_ = c.global_tid;
          last_launch_thread_ = it->second;
        }
        launches_.push_back({Key(p->rank, c.correlation), std::max<int64_t>(c.start + off_, 0), last_launch_thread_});
      }
      api_batch_.Add({options_.kineto ? &KinetoApiName(c.name_id) : &EscapedName(c.name_id),
                      Cat("cuda_api", "cuda_runtime"), p->pid, tid, c.start, c.end, c.correlation, c.has_correlation,
                      options_.kineto});
      if (api_batch_.size() >= ApiCallBatch::kEvents) PutBatch(api_batch_, api_writer_);
      ++summary_.api_calls;
    }
    FinishBatches(api_batch_, api_writer_);  // every call written before anything else is
    CPPROF_RETURN_IF_ERROR(calls.status());
    // In place (a stable sort takes a buffer as large: 20 bytes per call, 13 M calls at 10 GB); calls of
    // one key (a correlation id seen twice on a rank) by time, then thread: the order is total.
    std::sort(launches_.begin(), launches_.end(), [](const Launch& a, const Launch& b) {
      const uint64_t ak = a.key, bk = b.key;
      const int64_t at = a.ts_ns, bt = b.ts_ns;
      return ak != bk ? ak < bk : at != bt ? at < bt : a.thread < b.thread;
    });
    launch_used_.assign(launches_.size(), false);
    return OkStatus();
  }

  static uint64_t Key(int rank, int64_t correlation_id) {
    return (static_cast<uint64_t>(rank) << 32) | static_cast<uint32_t>(correlation_id);
  }

  // Formatted blocks of events waiting to be appended to the trace, in order (BatchWriter's
  // stand-in for the ChromeTraceWriter while it formats ahead of the appending).
  struct FormattedBlocks {
    int64_t base_events = 0;                              // the trace's events before the BatchWriter began
    int64_t staged_events = 0;                            // formatted by it so far, appended or not
    std::vector<std::pair<std::string, int64_t>> blocks;  // text, events counted with it
    int64_t events() const { return base_events + staged_events; }
    void AppendRaw(std::string&& text, int64_t count) {
      staged_events += count;
      blocks.emplace_back(std::move(text), count);
    }
    void Clear() { blocks.clear(); }
  };

  // Formats batches of events on a thread of its own, in order, while this one reads and places
  // the next (two batches at most waiting), and appends them to the trace on a third (two
  // formatted batches at most waiting): placing, formatting and writing overlap. Nothing else
  // writes to the trace while it runs.
  template <class Batch>
  class BatchWriter {
   public:
    BatchWriter(render::ChromeTraceWriter& writer, int64_t off)
        : writer_(writer),
          off_(off),
          appender_(2,
                    [this](FormattedBlocks& blocks) {
                      for (auto& [text, count] : blocks.blocks) writer_.AppendRaw(text, count);
                      blocks.Clear();  // it goes back to the formatter as a spare: without its megabytes of text
                      return true;
                    }),
          formatter_(2, [this, base = writer.events()](Batch& batch) {
            blocks_.Clear();
            blocks_.base_events = base;
            blocks_.staged_events = staged_;
            batch.WriteTo(blocks_, off_);
            staged_ = blocks_.staged_events;
            return appender_.Put(blocks_);  // false: the appending failed
          }) {}
    // Hands `batch` over and puts an empty one in its place.
    void Put(Batch& batch) {
      if (!formatter_.Put(batch)) batch.Clear();  // the writer failed: Finish says how
    }
    // Waits until every batch is written; rethrows what formatting or writing threw.
    void Finish() {
      formatter_.Finish();
      appender_.Finish();
      if (std::getenv("CPPROF_TIMING")) {
        std::fprintf(stderr,
                     "cpprof: timing: export: placing waited %.3f s for formatting, formatting %.3f s for placing; "
                     "formatting waited %.3f s for appending, appending %.3f s for formatting\n",
                     formatter_.producer_waited_s(), formatter_.consumer_waited_s(), appender_.producer_waited_s(),
                     appender_.consumer_waited_s());
      }
    }

   private:
    render::ChromeTraceWriter& writer_;
    const int64_t off_;
    FormattedBlocks blocks_;  // the formatter's: handed to the appender batch by batch
    int64_t staged_ = 0;      // events formatted so far
    BatchThread<FormattedBlocks> appender_;
    BatchThread<Batch> formatter_;  // declared last: stopped first, before the appender it feeds
  };

  // Items [0, n) formatted on all cores, a block of items each, and appended in order: the same
  // bytes as writing them one by one. write(w, separate, i) writes item i's events, calling
  // separate() before each (",\n", or "\n" before the document's first, as
  // ChromeTraceWriter::Begin); `events` is how many that makes in all; `bytes` a guess per item.
  // `writer`: the ChromeTraceWriter, or a BatchWriter's FormattedBlocks.
  template <class Writer, class WriteItem>
  static void WriteInBlocks(Writer& writer, size_t n, int64_t events, size_t bytes, WriteItem&& write) {
    if (n == 0) return;
    const size_t blocks = std::min<size_t>(WorkerThreads(), (n + 1023) / 1024);
    std::vector<std::string> text(blocks);
    const bool first_of_document = writer.events() == 0;
    ParallelFor(blocks, [&](size_t b) {
      const size_t from = n * b / blocks, to = n * (b + 1) / blocks;
      text[b].reserve((to - from) * bytes);
      render::JsonWriter w(text[b]);
      bool first = b == 0 && first_of_document;
      auto separate = [&] {
        text[b] += first ? "\n" : ",\n";
        first = false;
      };
      for (size_t i = from; i < to; ++i) write(w, separate, i);
    });
    for (size_t b = 0; b < blocks; ++b) writer.AppendRaw(std::move(text[b]), b == 0 ? events : 0);
  }

  // GPU ops (kernels, memcpys, memsets) placed (pid, tid: their tracks) in order but not yet
  // formatted, each with its launch's flow end where it has one; formatted as NVTX batches are.
  class GpuOpBatch {
   public:
    static constexpr size_t kEvents = 1 << 14;
    struct Op {
      const std::string* name;  // serialized (escaped_names_, memop_names_: they outlive the batch)
      std::string_view cat;     // static text
      int pid;
      int64_t tid, start, end;
      int32_t stream, device;
      bool has_correlation, kineto, memop, has_launch_config, flow_end;
      int64_t correlation, bytes;
      int64_t grid[3], block[3];
      uint64_t flow_key;  // flow_end: the flow's id, on the rank's process (a Kineto trace's ops are on the device's)
      int flow_pid;
    };
    void Add(const Op& op) { ops_.push_back(op), flows_ += op.flow_end; }
    size_t size() const { return ops_.size(); }
    void Clear() { ops_.clear(), flows_ = 0; }
    template <class Writer>
    void WriteTo(Writer& writer, int64_t off) {
      WriteInBlocks(writer, ops_.size(), static_cast<int64_t>(ops_.size() + flows_), 260,
                    [&](render::JsonWriter& w, const auto& separate, size_t i) {
                      const Op& op = ops_[i];
                      separate();
                      w.BeginObject();
                      WriteX(
                          w, off, [&](render::JsonWriter& jw) { jw.RawString(*op.name); }, op.cat, op.pid, op.tid,
                          op.start, op.end, true, [&](render::JsonWriter& jw) { GpuOpArgs(jw, op); });
                      w.EndObject();
                      if (!op.flow_end) return;
                      separate();
                      w.BeginObject();
                      FlowEnd(w, op.flow_key, op.flow_pid, op.tid, std::max<int64_t>(op.start + off, 0));
                      w.EndObject();
                    });
      Clear();
    }

   private:
    std::vector<Op> ops_;
    size_t flows_ = 0;
  };

  static void GpuOpArgs(render::JsonWriter& w, const GpuOpBatch::Op& op) {
    w.Key("stream"), w.Int(op.stream);
    w.Key("device"), w.Int(op.device);
    if (op.has_correlation) w.Key(CorrelationKey(op.kineto)), w.Int(op.correlation);
    if (op.memop) {
      w.Key("bytes"), w.Int(op.bytes);
      return;
    }
    if (op.kineto && op.has_correlation) w.Key("external id"), w.Int(op.correlation);
    if (op.has_launch_config) {
      for (const auto& [key, dims] : {std::pair{"grid", &op.grid}, std::pair{"block", &op.block}}) {
        w.Key(key);
        w.BeginArray();
        for (auto d : *dims) w.Int(d);
        w.EndArray();
      }
    }
  }

  // CUDA API calls placed (pid, tid) in order but not yet formatted, as GPU ops are.
  class ApiCallBatch {
   public:
    static constexpr size_t kEvents = 1 << 15;
    struct Call {
      const std::string* name;  // serialized (escaped_names_, kineto_api_names_: they outlive the batch)
      std::string_view cat;     // static text
      int pid;
      int64_t tid, start, end, correlation;
      bool has_correlation, kineto;
    };
    void Add(const Call& c) { calls_.push_back(c); }
    size_t size() const { return calls_.size(); }
    void Clear() { calls_.clear(); }
    template <class Writer>
    void WriteTo(Writer& writer, int64_t off) {
      WriteInBlocks(writer, calls_.size(), static_cast<int64_t>(calls_.size()), 200,
                    [&](render::JsonWriter& w, const auto& separate, size_t i) {
                      const Call& c = calls_[i];
                      separate();
                      w.BeginObject();
                      WriteX(
                          w, off, [&](render::JsonWriter& jw) { jw.RawString(*c.name); }, c.cat, c.pid, c.tid, c.start,
                          c.end, c.has_correlation,
                          [&](render::JsonWriter& jw) {
                            jw.Key(CorrelationKey(c.kineto)), jw.Int(c.correlation);
                            if (c.kineto) jw.Key("external id"), jw.Int(c.correlation);
                          });
                      w.EndObject();
                    });
      Clear();
    }

   private:
    std::vector<Call> calls_;
  };

  // A flow's end at a GPU op: the first op of its launch.
  static void FlowEnd(render::JsonWriter& w, uint64_t key, int pid, int64_t tid, int64_t ts) {
    w.Key("ph"), w.RawString("\"f\"");
    w.Key("bp"), w.RawString("\"e\"");
    w.Key("name"), w.RawString("\"launch\"");
    w.Key("cat"), w.RawString("\"cuda_flow\"");
    w.Key("id"), w.UInt(key);
    w.Key("pid"), w.Int(pid);
    w.Key("tid"), w.Int(tid);
    w.Key("ts"), w.Thousandths(ts);
  }

  // Whether a GPU op ends its launch's flow (the first op of a launch: graph launches run
  // several), and the flow's id.
  bool FlowEndsAt(const RankProcess& p, bool has_corr, int64_t corr, uint64_t* key) {
    if (!options_.flows || !has_corr || launches_.empty()) return false;
    *key = Key(p.rank, corr);
    auto it = std::lower_bound(launches_.begin(), launches_.end(), *key,
                               [](const Launch& l, uint64_t k) { return l.key < k; });
    if (it == launches_.end() || it->key != *key) return false;
    size_t i = static_cast<size_t>(it - launches_.begin());
    if (launch_used_[i]) return false;
    launch_used_[i] = true;
    ++summary_.flows;
    return true;
  }

  // A GPU op on its track (`name` serialized, kept by this builder): a kernel's without its
  // launch configuration.
  GpuOpBatch::Op PlaceGpuOp(const RankProcess& p, const std::string& name, OpClass cls, int64_t global_pid, int device,
                            int stream, int64_t start, int64_t end, bool has_corr, int64_t corr) {
    GpuOpBatch::Op op{};
    op.name = &name;
    op.cat = Cat(model::Name(cls), KinetoCat(cls));
    op.pid = GpuPid(p, device);
    op.tid = options_.kineto ? KinetoStreamTid(p, device, stream)
                             : StreamTid(global_pid, device, stream, model::IsComm(cls));
    op.start = start, op.end = end;
    op.stream = stream, op.device = device;
    op.has_correlation = has_corr, op.correlation = corr;
    op.kineto = options_.kineto;
    return op;
  }

  // A GPU op placed: into the batch (written on another thread where there are cores).
  void AddGpuOp(GpuOpBatch::Op& op, const RankProcess& p) {
    op.flow_end = FlowEndsAt(p, op.has_correlation, op.correlation, &op.flow_key);
    op.flow_pid = p.pid;
    gpu_batch_.Add(op);
    ++summary_.gpu_ops;
    if (gpu_batch_.size() >= GpuOpBatch::kEvents) PutBatch(gpu_batch_, gpu_writer_);
  }

  // A full batch to its writer thread, or written here (one thread).
  template <class Batch>
  void PutBatch(Batch& batch, std::unique_ptr<BatchWriter<Batch>>& writer) {
    if (writer) {
      writer->Put(batch);
    } else {
      batch.WriteTo(*writer_, off_);
    }
  }

  // Writes what is left in the batch and waits until every batch is written.
  template <class Batch>
  void FinishBatches(Batch& batch, std::unique_ptr<BatchWriter<Batch>>& writer) {
    PutBatch(batch, writer);
    if (writer) {
      std::unique_ptr<BatchWriter<Batch>> w = std::move(writer);
      w->Finish();
    }
  }

  void WriteFlowStarts() {
    for (size_t i = 0; i < launches_.size(); ++i) {
      if (!launch_used_[i]) continue;
      const Launch& l = launches_[i];
      render::JsonWriter& w = writer_->Begin();
      w.Key("ph"), w.RawString("\"s\"");
      w.Key("name"), w.RawString("\"launch\"");
      w.Key("cat"), w.RawString("\"cuda_flow\"");
      w.Key("id"), w.UInt(l.key);
      const auto& [pid, tid] = launch_threads_[l.thread];
      w.Key("pid"), w.Int(pid);
      w.Key("tid"), w.Int(tid);
      w.Key("ts"), w.Thousandths(l.ts_ns);
      writer_->End();
    }
  }

  static nsys::KernelColumns LaunchConfig() {
    nsys::KernelColumns c;
    c.launch_config = true;
    return c;
  }

  Status WriteKernels() {
    return nsys::ForEachKernel(
        db_, schema_,
        [&](const nsys::KernelRow& k) {
          gpu_max_end_ = std::max(gpu_max_end_, std::max(k.start, k.end));
          const RankProcess* p = ProcessOf(k.global_pid);
          if (!p || !InWindow(k.start, k.end)) return;
          GpuOpBatch::Op op = PlaceGpuOp(*p, EscapedName(k.name_id), ClassOf(k.name_id), k.global_pid, k.device,
                                         k.stream, k.start, k.end, k.has_correlation, k.correlation);
          op.has_launch_config = k.has_launch_config;
          for (int i = 0; i < 3; ++i) op.grid[i] = k.grid[i], op.block[i] = k.block[i];
          AddGpuOp(op, *p);
        },
        LaunchConfig());
  }

  Status WriteMemOps() {
    CPPROF_ASSIGN_OR_RETURN(auto kind_names, nsys::ReadMemcpyKindNames(db_));
    return nsys::ForEachMemOp(db_, [&](const nsys::MemOpRow& m) {
      gpu_max_end_ = std::max(gpu_max_end_, std::max(m.start, m.end));
      const RankProcess* p = ProcessOf(m.global_pid);
      if (!p || !InWindow(m.start, m.end)) return;
      int kind = m.copy_kind;
      OpClass cls = kind < 0                          ? OpClass::kMemset
                    : kind == nsys::kMemcpyPeerToPeer ? OpClass::kPeerCopy
                                                      : OpClass::kMemcpy;
      auto [name, inserted] = memop_names_.try_emplace(kind);
      if (inserted) {
        auto it = kind_names.find(kind);
        name->second = writer_->Escape(kind < 0                 ? std::string("[CUDA memset]")
                                       : it != kind_names.end() ? it->second
                                                                : fmt::format("[CUDA memcpy kind {}]", kind));
      }
      GpuOpBatch::Op op = PlaceGpuOp(*p, name->second, cls, m.global_pid, m.device, m.stream, m.start, m.end,
                                     m.has_correlation, m.correlation);
      op.memop = true;
      op.bytes = m.bytes;
      AddGpuOp(op, *p);
    });
  }

  // Where ranges still open when the capture stopped end: the last timestamp of the export's
  // GPU ops, CUDA API calls and NVTX events.
  StatusOr<int64_t> CaptureEnd() {
    if (capture_end_) return *capture_end_;
    CPPROF_ASSIGN_OR_RETURN(int64_t nvtx_end, nsys::LastNvtxTimestamp(db_, nsys::OpenEnd::kLastNvtxEvent));
    CPPROF_ASSIGN_OR_RETURN(int64_t api_end, nsys::LastApiCallEnd(db_));
    capture_end_ = std::max({gpu_max_end_, nvtx_end, api_end});
    return *capture_end_;
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

  // NVTX ranges in table order (nsys lists them by start): no sort of the whole table. Ranges of
  // one start go out longest first (containers before what they contain, which a viewer needs
  // to nest them); start/end ranges, which need start order for their lanes, are held and go out
  // last, sorted.
  Status WriteNvtx() {
    CPPROF_ASSIGN_OR_RETURN(nsys::NvtxDomains domains,
                            domains_.valid() ? domains_.get() : nsys::NvtxDomains::Read(db_));
    if (!options_.kineto && WorkerThreads() > 1)
      nvtx_writer_ = std::make_unique<BatchWriter<NvtxBatch>>(*writer_, off_);
    Status status = WriteNvtxRanges(domains);
    if (nvtx_writer_) {
      FlushNvtx();
      std::unique_ptr<BatchWriter<NvtxBatch>> w = std::move(nvtx_writer_);
      w->Finish();  // every batch written before anything else is
    }
    return status;
  }

  Status WriteNvtxRanges(const nsys::NvtxDomains& domains) {
    nsys::NvtxRangeCursor::Options options;
    // SQLite reads NVTX on other cores while this one places the ranges.
    options.prefetch = WorkerThreads() > 1;
    CPPROF_ASSIGN_OR_RETURN(nsys::NvtxRangeCursor ranges, nsys::NvtxRangeCursor::Open(db_, options));
    last_domain_ = {INT64_MIN, INT64_MIN};  // EmitNvtx's cached name is of these domains
    // Ranges held (those of one start, to go out longest first; start/end ranges, to go out
    // last), their texts in an arena per list: no allocation per range.
    struct Held {
      nsys::NvtxRangeRow row;
      size_t text_begin, text_size;
    };
    std::vector<Held> same_start, start_end;
    std::string same_start_text, start_end_text;
    int64_t skipped = 0, out_of_order = 0, last_start = INT64_MIN;
    auto longest_first = [](const Held& a, const Held& b) {
      if (a.row.start != b.row.start) return a.row.start < b.row.start;
      if (a.row.open != b.row.open) return a.row.open;
      if (a.row.end != b.row.end) return a.row.end > b.row.end;
      return a.row.rowid < b.row.rowid;
    };
    auto hold = [](std::vector<Held>& held, std::string& text, const nsys::NvtxRangeRow& r) {
      held.push_back({r, text.size(), r.text.size()});
      text.append(r.text);
    };
    auto emit = [&](std::vector<Held>& held, std::string& text) -> Status {
      std::sort(held.begin(), held.end(), longest_first);
      for (Held& h : held) {
        h.row.text = std::string_view(text.data() + h.text_begin, h.text_size);
        CPPROF_RETURN_IF_ERROR(EmitNvtx(h.row, domains));
      }
      held.clear();
      text.clear();
      return OkStatus();
    };
    while (ranges.Next()) {
      const nsys::NvtxRangeRow& r = ranges.row();
      if (!ProcessOf(model::GlobalPidOf(r.global_tid))) {
        ++skipped;
        continue;
      }
      if (r.event_type != nsys::kNvtxPushPop && r.event_type != nsys::kNvtxtPushPop) {
        hold(start_end, start_end_text, r);
        continue;
      }
      if (r.start != last_start) {
        CPPROF_RETURN_IF_ERROR(emit(same_start, same_start_text));
        if (r.start < last_start) ++out_of_order;
        last_start = r.start;
      }
      hold(same_start, same_start_text, r);
    }
    CPPROF_RETURN_IF_ERROR(ranges.status());
    CPPROF_RETURN_IF_ERROR(emit(same_start, same_start_text));
    CPPROF_RETURN_IF_ERROR(emit(start_end, start_end_text));
    FlushNvtx();
    if (skipped && !options_.kineto) {  // a Kineto trace holds one rank: the others' ranges are left out by design
      summary_.notes.push_back(fmt::format(
          "{} NVTX ranges of processes without GPU work (or of ranks not asked for) were left out", skipped));
    }
    if (out_of_order) {
      summary_.notes.push_back(fmt::format(
          "{} NVTX push/pop ranges come earlier in time than the row before them in the export's NVTX table "
          "(nsys lists them by start): they are written in table order, so ranges that start together "
          "may not nest in the viewer",
          out_of_order));
    }
    return OkStatus();
  }

  Status EmitNvtx(const nsys::NvtxRangeRow& r, const nsys::NvtxDomains& domains) {
    const RankProcess* p = ProcessOf(model::GlobalPidOf(r.global_tid));
    int64_t start = r.start, gtid = r.global_tid, end = r.end;
    if (r.open) {
      CPPROF_ASSIGN_OR_RETURN(end, CaptureEnd());
      end = std::max(end, start);
    }
    if (!InWindow(start, end)) return OkStatus();
    // The domain's name, looked up again only when the domain or the thread changes.
    if (r.domain_id != last_domain_.first || gtid != last_domain_.second) {
      last_domain_ = {r.domain_id, gtid};
      last_domain_name_ = &domains.NamesFor(r.domain_id, gtid).front();
    }
    const std::string& domain = *last_domain_name_;
    bool push_pop = r.event_type == nsys::kNvtxPushPop || r.event_type == nsys::kNvtxtPushPop;
    int64_t tid;
    if (push_pop) {
      tid = ThreadTid(gtid);
    } else {
      ThreadTid(gtid);  // named with its thread
      tid = LaneTid(gtid, start, end);
    }
    const bool ended_elsewhere = r.ends_on_other_thread && r.end_global_tid != gtid;
    std::string name;  // "domain:text", built here for a Kineto trace only (a batch keeps the parts)
    if (options_.kineto) name = domain + ":" + std::string(r.text);
    if (options_.kineto && nsys::IsIterationName(name)) {
      // HTA finds iterations by Kineto's step annotations: ProfilerStep#N over each iteration range.
      size_t digits = name.find_last_not_of("0123456789") + 1;
      std::string step = "ProfilerStep#" + (digits < name.size() ? name.substr(digits) : std::to_string(steps_));
      ++steps_;
      EmitX(writer_->Escape(step), "user_annotation", p->pid, tid, start, end, false, [](render::JsonWriter&) {});
    }
    ++summary_.nvtx_ranges;
    if (!options_.kineto) {  // formatted later, in parallel (NvtxBatch)
      nvtx_batch_.Add(domain, r.text, p->pid, tid, start, end, r.open, push_pop, nsys::TidOf(gtid),
                      ended_elsewhere ? std::optional<int64_t>(nsys::TidOf(r.end_global_tid)) : std::nullopt);
      if (nvtx_batch_.size() >= NvtxBatch::kEvents) FlushNvtx();
      return OkStatus();
    }
    EmitX(writer_->Escape(name), Cat(push_pop ? "nvtx" : "nvtx start/end", "user_annotation"), p->pid, tid, start, end,
          r.open || !push_pop, [&](render::JsonWriter& w) {
            NvtxArgs(w, r.open, push_pop, nsys::TidOf(gtid),
                     ended_elsewhere ? std::optional<int64_t>(nsys::TidOf(r.end_global_tid)) : std::nullopt);
          });
    return OkStatus();
  }

  static void NvtxArgs(render::JsonWriter& w, bool open, bool push_pop, int64_t thread,
                       std::optional<int64_t> ended_on) {
    if (open) w.Key("open_at_capture_end"), w.Bool(true);
    if (push_pop) return;
    w.Key("thread"), w.Int(thread);
    if (ended_on) w.Key("ended_on_tid"), w.Int(*ended_on);
  }

  // NVTX ranges placed (pid, tid, times) in order but not yet formatted: the JSON of a batch is
  // written on all cores, a block per thread, then appended in order (the same bytes as one by one).
  class NvtxBatch {
   public:
    static constexpr size_t kEvents = 1 << 15;
    // The range's name is "domain:text".
    void Add(std::string_view domain, std::string_view text, int pid, int64_t tid, int64_t start, int64_t end,
             bool open, bool push_pop, int64_t thread, std::optional<int64_t> ended_on) {
      events_.push_back({pid, tid, start, end, thread, ended_on.value_or(0), names_.size(),
                         domain.size() + 1 + text.size(), open, push_pop, ended_on.has_value()});
      names_.append(domain);
      names_ += ':';
      names_.append(text);
    }
    size_t size() const { return events_.size(); }
    void Clear() {
      events_.clear();
      names_.clear();
    }
    // Formats the batch (WriteX) and appends it to `writer`; empties it.
    template <class Writer>
    void WriteTo(Writer& writer, int64_t off) {
      WriteInBlocks(writer, events_.size(), static_cast<int64_t>(events_.size()),
                    160 + names_.size() / std::max<size_t>(1, events_.size()),
                    [&](render::JsonWriter& w, const auto& separate, size_t i) {
                      const Event& e = events_[i];
                      separate();
                      w.BeginObject();
                      const std::string_view name(names_.data() + e.name_begin, e.name_size);
                      WriteX(
                          w, off, [&](render::JsonWriter& jw) { jw.String(name); },
                          e.push_pop ? "nvtx" : "nvtx start/end", e.pid, e.tid, e.start, e.end, e.open || !e.push_pop,
                          [&](render::JsonWriter& jw) {
                            NvtxArgs(jw, e.open, e.push_pop, e.thread,
                                     e.has_ended_on ? std::optional<int64_t>(e.ended_on) : std::nullopt);
                          });
                      w.EndObject();
                    });
      Clear();
    }

   private:
    struct Event {
      int pid;
      int64_t tid, start, end, thread, ended_on;
      size_t name_begin, name_size;
      bool open, push_pop, has_ended_on;
    };
    std::vector<Event> events_;
    std::string names_;
  };

  void FlushNvtx() {
    if (nvtx_writer_) {
      nvtx_writer_->Put(nvtx_batch_);
    } else {
      nvtx_batch_.WriteTo(*writer_, off_);
    }
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
    CPPROF_ASSIGN_OR_RETURN(auto thread_names, nsys::ReadThreadNames(db_));
    std::vector<const std::pair<const int64_t, RankProcess>*> by_rank;
    for (const auto& kv : procs_) by_rank.push_back(&kv);
    std::sort(by_rank.begin(), by_rank.end(), [](auto* a, auto* b) { return a->second.rank < b->second.rank; });
    for (const auto* kv : by_rank) {
      int64_t gpid = kv->first;
      const RankProcess& p = kv->second;
      std::string label = fmt::format("rank {} (pid {}, GPU {})", p.rank, p.os_pid, p.device);
      if (!p.name.empty()) label += " " + p.name;
      Metadata("process_name", p.pid, std::nullopt, {{"name", label}});
      Metadata("process_sort_index", p.pid, std::nullopt, {{"sort_index", p.rank}});
      if (options_.kineto) {
        Metadata("process_labels", p.pid, std::nullopt, {{"labels", fmt::format("rank {}", p.rank)}});
        int last_device = -1;
        for (const auto& [device, stream] : kineto_streams_) {
          if (device != last_device) {
            Metadata("process_name", device, std::nullopt, {{"name", fmt::format("GPU {}", device)}});
            Metadata("process_sort_index", device, std::nullopt, {{"sort_index", 1000 + device}});
            last_device = device;
          }
          Metadata("thread_name", device, stream, {{"name", fmt::format("stream {}", stream)}});
        }
      }
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
  std::unordered_map<int64_t, std::string> escaped_names_;         // StringIds id -> name as a JSON string
  std::map<std::tuple<int64_t, int, int>, StreamTrack> streams_;   // (globalPid, device, stream)
  std::map<int64_t, int> threads_;                                 // CPU threads used, by globalTid
  int64_t last_thread_ = INT64_MIN;                                // ThreadTid's last: in threads_
  std::pair<int64_t, int64_t> last_domain_{INT64_MIN, INT64_MIN};  // EmitNvtx's last (domainId, globalTid)
  const std::string* last_domain_name_ = nullptr;                  // and its name
  std::map<int64_t, std::vector<Lane>> lanes_;                     // NVTX start/end lanes by globalTid
  int64_t next_tid_ = kSyntheticTidBase;
  std::set<std::pair<int, int>> kineto_streams_;
  std::unordered_map<int64_t, std::string> kineto_api_names_;  // (device, stream) of a Kineto trace
  int64_t steps_ = 0;
  std::vector<Launch> launches_;  // sorted by key
  std::vector<bool> launch_used_;
  std::vector<std::pair<int, int64_t>> launch_threads_;     // a launch's (pid, tid) by Launch::thread
  std::unordered_map<int64_t, uint32_t> launch_thread_of_;  // globalTid -> index there
  int64_t last_launch_gtid_ = INT64_MIN;
  uint32_t last_launch_thread_ = 0;
  int64_t gpu_max_end_ = 0;
  std::optional<int64_t> capture_end_;
  int64_t off_ = 0;  // added to every time written: the run's clock
  NvtxBatch nvtx_batch_;
  GpuOpBatch gpu_batch_;
  ApiCallBatch api_batch_;
  std::unique_ptr<BatchWriter<ApiCallBatch>> api_writer_;  // while API calls are written, on more than one thread
  std::unique_ptr<BatchWriter<GpuOpBatch>> gpu_writer_;    // while GPU ops are written, on more than one thread
  std::unordered_map<int, std::string> memop_names_;       // copy kind (-1: memset) -> name serialized
  std::unique_ptr<BatchWriter<NvtxBatch>> nvtx_writer_;    // while WriteNvtx runs, on more than one thread
  std::future<StatusOr<nsys::NvtxDomains>> domains_;       // read on another connection (Run)
};

}  // namespace

StatusOr<int> CountRanks(const std::string& path) {
  CPPROF_ASSIGN_OR_RETURN(Database db, Database::Open(path));
  CPPROF_ASSIGN_OR_RETURN(nsys::ExportSchema schema, nsys::ProbeExport(db));
  (void)schema;
  CPPROF_ASSIGN_OR_RETURN(std::vector<model::GpuProcess> gpu_procs, nsys::ReadGpuProcesses(db));
  CPPROF_ASSIGN_OR_RETURN(auto nccl, nsys::ReadNcclRanks(db));
  return static_cast<int>(analysis::AssignRanks(gpu_procs, nccl).process_of_rank.size());
}

StatusOr<ChromeTraceSummary> WriteChromeTrace(const std::string& path, const ChromeTraceOptions& options,
                                              std::ostream& out) {
  CPPROF_ASSIGN_OR_RETURN(Database db, Database::Open(path));
  CPPROF_ASSIGN_OR_RETURN(nsys::ExportSchema schema, nsys::ProbeExport(db));
  TraceBuilder builder(db, schema, options);
  return builder.Run(out);
}

namespace {

// What a run read from several exports needs before its events go out: per export the census,
// NCCL's payloads and the launcher's variables (its ranks), and the NCCL kernels (its clock), read
// in parallel; the exports' databases stay open for the events.
struct RunSource {
  std::optional<Database> db;
  nsys::ExportSchema schema;
  std::vector<model::GpuProcess> procs;
  std::map<int64_t, model::NcclRankInfo> nccl;
  model::CaptureInfo capture;
};

struct RunLayout {
  std::vector<RunSource> sources;
  std::vector<analysis::ClockAlignment> aligned;  // by export
  analysis::RankAssignment ranks;                 // over the processes below
  std::vector<size_t> export_of;                  // by process: its export
  std::vector<int64_t> own_pid;                   // by process: its globalPid in its export
  int World() const { return static_cast<int>(ranks.process_of_rank.size()); }
};

StatusOr<RunLayout> ReadRunLayout(const std::vector<std::string>& paths, bool force) {
  RunLayout run;
  run.sources.resize(paths.size());
  std::vector<std::vector<model::CommOpTime>> comm(paths.size());
  std::vector<Status> status(paths.size());
  ParallelFor(paths.size(), [&](size_t e) {
    status[e] = [&]() -> Status {
      RunSource& s = run.sources[e];
      CPPROF_ASSIGN_OR_RETURN(Database db, Database::Open(paths[e]));
      s.db.emplace(std::move(db));
      CPPROF_ASSIGN_OR_RETURN(s.schema, nsys::ProbeExport(*s.db));
      CPPROF_ASSIGN_OR_RETURN(s.procs, nsys::ReadGpuProcesses(*s.db));
      CPPROF_ASSIGN_OR_RETURN(s.nccl, nsys::ReadNcclRanks(*s.db));
      CPPROF_ASSIGN_OR_RETURN(s.capture, nsys::ReadCaptureInfo(*s.db));
      CPPROF_ASSIGN_OR_RETURN(comm[e], nsys::ReadCommOps(*s.db, s.schema, analysis::ClassifyKernel));
      return OkStatus();
    }();
  });
  for (const auto& st : status) CPPROF_RETURN_IF_ERROR(st);
  std::vector<const model::CaptureInfo*> captures;
  for (const auto& s : run.sources) captures.push_back(&s.capture);
  CPPROF_RETURN_IF_ERROR(CheckSameRun(captures, paths, force));
  std::vector<analysis::ClockInput> clocks(paths.size());
  for (size_t e = 0; e < paths.size(); ++e) {
    clocks[e].utc_start_ns = run.sources[e].capture.utc_start_ns;
    clocks[e].comm = std::move(comm[e]);
  }
  run.aligned = analysis::AlignClocks(clocks);
  std::vector<model::GpuProcess> procs;
  std::map<int64_t, model::NcclRankInfo> nccl;
  for (size_t e = 0; e < paths.size(); ++e) {
    for (auto p : run.sources[e].procs) {
      run.own_pid.push_back(p.global_pid);
      p.global_pid = RunPid(e, p.global_pid);
      procs.push_back(std::move(p));
      run.export_of.push_back(e);
    }
    for (const auto& [gpid, info] : run.sources[e].nccl) nccl[RunPid(e, gpid)] = info;
  }
  run.ranks = AssignRunRanks(procs, nccl, run.export_of, captures);
  return run;
}

}  // namespace

StatusOr<int> CountRanks(const std::vector<std::string>& paths, bool force) {
  if (paths.size() == 1) return CountRanks(paths[0]);
  CPPROF_ASSIGN_OR_RETURN(RunLayout run, ReadRunLayout(paths, force));
  return run.World();
}

StatusOr<ChromeTraceSummary> WriteChromeTrace(const std::vector<std::string>& paths, const ChromeTraceOptions& options,
                                              std::ostream& out) {
  if (paths.size() == 1) return WriteChromeTrace(paths[0], options, out);
  if (options.kineto && options.ranks.size() != 1) {
    return Error(ExitCode::kUsage, "a Kineto trace of several exports holds one rank: give one rank per trace");
  }
  CPPROF_ASSIGN_OR_RETURN(RunLayout run, ReadRunLayout(paths, options.force));
  CPPROF_RETURN_IF_ERROR(CheckRanks(options.ranks, run.World(), "the run"));

  Json other;
  other["generator"] = std::string("cpprof ") + CPPROF_VERSION;
  other["nsys_version"] = run.sources[0].schema.nsys_version;
  other["export_schema"] = run.sources[0].schema.schema_version;
  other["rank_method"] = run.ranks.method;
  other["time"] =
      "ts and dur in microseconds of the run's clock: the first export's session clock (0 = its start); each "
      "other export's times shifted by its offset";
  Json exports = Json::array();
  const std::vector<std::string> names = DistinctNames(paths);
  for (size_t e = 0; e < paths.size(); ++e) {
    exports.push_back({{"name", names[e]},
                       {"offset_ns", run.aligned[e].offset_ns},
                       {"residual_ns", run.aligned[e].residual_ns},
                       {"method", run.aligned[e].method}});
  }
  other["exports"] = exports;
  Json top;
  if (options.kineto) {  // as the one-export Kineto trace has them (docs/kineto.md)
    const int rank = options.ranks[0];
    const size_t p = run.ranks.process_of_rank[static_cast<size_t>(rank)];
    top["schemaVersion"] = 1;
    top["distributedInfo"] = {{"backend", "nccl"}, {"rank", rank}, {"world_size", run.World()}};
    int device = -1;
    for (const auto& q : run.sources[run.export_of[p]].procs) {
      if (q.global_pid == run.own_pid[p]) device = q.MainDevice();
    }
    top["deviceProperties"] = Json::array({Json{{"id", device}}});
    top["traceName"] = fmt::format("cpprof kineto export, rank {}", rank);
  }
  render::ChromeTraceWriter writer(out, other, top);
  int64_t next_tid = kSyntheticTidBase;
  ChromeTraceSummary summary;
  summary.notes.push_back(
      "several exports: a process per rank with the rank as its pid; times on the first export's clock");
  for (size_t e = 0; e < paths.size(); ++e) {
    Placement place;
    place.offset_ns = run.aligned[e].offset_ns;
    place.writer = &writer;
    place.next_tid = &next_tid;
    place.census = &run.sources[e].procs;
    bool wanted = false;
    for (size_t r = 0; r < run.ranks.process_of_rank.size(); ++r) {
      size_t p = run.ranks.process_of_rank[r];
      if (run.export_of[p] != e) continue;
      place.rank_of[run.own_pid[p]] = static_cast<int>(r);
      wanted = wanted || options.ranks.empty() ||
               std::find(options.ranks.begin(), options.ranks.end(), static_cast<int>(r)) != options.ranks.end();
    }
    if (!wanted) continue;  // none of its ranks asked for: not read at all
    TraceBuilder builder(*run.sources[e].db, run.sources[e].schema, options);
    CPPROF_ASSIGN_OR_RETURN(ChromeTraceSummary part, builder.Run(out, &place));
    summary.ranks += part.ranks;
    summary.gpu_ops += part.gpu_ops;
    summary.nvtx_ranges += part.nvtx_ranges;
    summary.api_calls += part.api_calls;
    summary.flows += part.flows;
    for (auto& n : part.notes) summary.notes.push_back(fmt::format("{}: {}", paths[e], n));
  }
  if (options.await_cp) CPPROF_RETURN_IF_ERROR(options.await_cp());
  if (options.cp && !options.kineto) {
    // Several exports: a rank's pid is the rank; the view is already on the run's clock.
    std::map<int, int> pid_of_rank;
    for (int r = 0; r < run.World(); ++r) {
      if (options.ranks.empty() || std::find(options.ranks.begin(), options.ranks.end(), r) != options.ranks.end())
        pid_of_rank[r] = r;
    }
    WriteCpView(*options.cp, pid_of_rank, options, 0, writer, next_tid, summary);
  }
  writer.Finish();
  summary.events = writer.events();
  return summary;
}

}  // namespace cpprof::pipeline
