// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The trace exports' events read from the exports of a run (model/trace_events.h) and handed to
// the format's writer (render/chrome_trace_format.h, render/kineto_format.h): ranks as the
// report assigns them, the window and --ranks applied, every export's times on the run's clock.
#include "pipeline/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "analysis/classify.h"
#include "analysis/clock_align.h"
#include "analysis/module_config.h"
#include "analysis/ranks.h"
#include "analysis/window.h"
#include "base/input_files.h"
#include "base/stage_timer.h"
#include "model/global_id.h"
#include "model/op_class.h"
#include "model/trace_events.h"
#include "nsys/capture_reader.h"
#include "nsys/export_reader.h"
#include "nsys/gpu_work_loader.h"
#include "nsys/launch_reader.h"
#include "nsys/nccl_ranks.h"
#include "nsys/nvtx_reader.h"
#include "pipeline/attribution.h"
#include "pipeline/run_exports.h"
#include "pipeline/run_reader.h"
#include "render/chrome_trace_format.h"
#include "render/kineto_format.h"

namespace cpprof::pipeline {

namespace {

using model::OpClass;
using nsys::Database;

// A CUDA call that may start a flow (--flows): 20 bytes, one per call with a correlation id (13
// million at 10 GB of export). Its thread is an index into ExportEvents::launch_threads_.
struct __attribute__((packed, aligned(4))) Launch {
  uint64_t key;  // rank << 32 | correlationId
  int64_t ts_ns;
  uint32_t thread;
};
static_assert(sizeof(Launch) == 20);

uint64_t FlowKey(int rank, int64_t correlation_id) {
  return (static_cast<uint64_t>(rank) << 32) | static_cast<uint32_t>(correlation_id);
}

bool Wanted(const std::vector<int>& ranks, int rank) {
  return ranks.empty() || std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
}

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

// read(own) on a thread of its own, `own` a second connection to `db`'s export.
template <class Read>
auto ReadAhead(const Database& db, Read read) -> std::future<decltype(read(db))> {
  return std::async(std::launch::async, [own = db.Reopen(), read]() -> decltype(read(db)) {
    if (!own.ok()) return own.status();
    return read(*own);
  });
}

// The writer of the format asked for; `chrome` the same when it is the Chrome trace (the CP view).
struct TraceOut {
  std::unique_ptr<render::TraceWriter> writer;
  render::ChromeTraceFormat* chrome = nullptr;
};

// With several writers at once (a Kineto trace per rank in one pass), each formats its batches on
// the reading thread, not on threads of its own.
render::TraceWriterOptions WriterOptions(const ExecContext& exec, bool several_writers) {
  render::TraceWriterOptions o;
  o.exec = exec;
  o.batch_threads = !several_writers;
  return o;
}

TraceOut MakeWriter(const ChromeTraceOptions& options, std::ostream& out, const model::TraceHeader& header) {
  const render::TraceWriterOptions o = WriterOptions(options.exec, false);
  TraceOut t;
  if (options.kineto) {
    t.writer = std::make_unique<render::KinetoFormat>(out, header, o);
  } else {
    auto chrome = std::make_unique<render::ChromeTraceFormat>(out, header, o);
    t.chrome = chrome.get();
    t.writer = std::move(chrome);
  }
  return t;
}

// One export's events, read in table order and handed to the writer: its ranks' API calls, GPU
// ops, launch flows and NVTX ranges in the window, then its metadata.
class ExportEvents {
 public:
  // The export's ranks to write (globalPid in the export), each with the writer of its trace (one
  // for all, or one per rank); `offset_ns` puts its times on the run's clock; `domains`: the NVTX
  // domain names being read (ReadDomainsAhead), or none (read when needed).
  struct Output {
    model::TraceProcess process;
    render::TraceWriter* writer = nullptr;
  };
  ExportEvents(const Database& db, const nsys::ExportSchema& schema, const ChromeTraceOptions& options,
               const std::vector<Output>& outputs, int64_t offset_ns, std::future<StatusOr<nsys::NvtxDomains>> domains)
      : db_(db), schema_(schema), options_(options), strings_(db), off_(offset_ns), domains_(std::move(domains)) {
    for (const auto& o : outputs) {
      size_t w = std::find(writers_.begin(), writers_.end(), o.writer) - writers_.begin();
      if (w == writers_.size()) writers_.push_back(o.writer);
      procs_[o.process.global_pid] = {o.process, w};
    }
  }

  Status Write(ChromeTraceSummary& summary) {
    StageTimer timer(db_.exec());
    summary_ = &summary;
    for (size_t w = 0; w < writers_.size(); ++w) {
      std::vector<model::TraceProcess> procs;  // the writer's, by globalPid
      for (const auto& [gpid, p] : procs_) {
        if (p.writer == w) procs.push_back(p.process);
      }
      writers_[w]->BeginExport(procs);
    }
    const bool want_api = options_.api || options_.flows || options_.kineto;
    const bool api = want_api && db_.HasTable(nsys::kRuntimeTable);
    if (want_api && !api) {
      summary.notes.push_back(
          "the export has no CUDA runtime API calls (captured with --trace cuda): "
          "no API calls or flows");
    }
    timer.Mark("export: processes, ranks");
    if (api) CPPROF_RETURN_IF_ERROR(ApiCalls());
    timer.Mark("export: API calls");
    Status gpu_status = Kernels();
    timer.Mark("export: kernels");
    if (gpu_status.ok()) gpu_status = MemOps();
    for (auto* w : writers_) w->EndGpuOps();  // every GPU op written before anything else is
    CPPROF_RETURN_IF_ERROR(gpu_status);
    CPPROF_RETURN_IF_ERROR(strings_.status());
    if (api && options_.flows) FlowStarts();
    timer.Mark("export: memory ops, flows");
    if (options_.nvtx && db_.HasTable(nsys::kNvtxTable)) CPPROF_RETURN_IF_ERROR(Nvtx());
    timer.Mark("export: NVTX");
    DamagedNotes();
    CPPROF_ASSIGN_OR_RETURN(auto thread_names, nsys::ReadThreadNames(db_));
    for (auto* w : writers_) w->EndExport(thread_names);
    timer.Mark("export: metadata");
    return OkStatus();
  }

 private:
  // A rank written: its process and its writer's index.
  struct Placed {
    model::TraceProcess process;
    size_t writer = 0;
  };

  const Placed* ProcessOf(int64_t global_pid) {
    if (global_pid == last_gpid_) return last_proc_;
    auto it = procs_.find(global_pid);
    last_gpid_ = global_pid;
    last_proc_ = it == procs_.end() ? nullptr : &it->second;
    return last_proc_;
  }

  // On the run's clock: whether [start, end] overlaps the trace's time range.
  bool InWindow(int64_t start, int64_t end) const {
    return (!options_.start_ns || end >= *options_.start_ns) && (!options_.end_ns || start <= *options_.end_ns);
  }

  OpClass ClassOf(int64_t name_id) {
    auto it = classes_.find(name_id);
    if (it != classes_.end()) return it->second;
    return classes_[name_id] = analysis::ClassifyKernel(strings_.Get(name_id));
  }

  Status ApiCalls() {
    CPPROF_ASSIGN_OR_RETURN(nsys::ApiCallCursor calls, nsys::ApiCallCursor::Open(db_, false, false));
    model::TraceApiCall e;
    while (calls.Next()) {
      const nsys::ApiCallRow& c = calls.row();
      const Placed* p = ProcessOf(model::GlobalPidOf(c.global_tid));
      e.start = c.start + off_, e.end = c.end + off_;
      if (!p || !InWindow(e.start, e.end)) continue;
      if (c.has_correlation && options_.flows) NoteLaunch(*p, c, e.start);
      e.process = &p->process;
      e.name_id = c.name_id;
      e.name = strings_.Get(c.name_id);
      e.global_tid = c.global_tid;
      e.has_correlation = c.has_correlation, e.correlation = c.correlation;
      e.backtrace = c.backtrace;
      writers_[p->writer]->ApiCall(e);
      ++summary_->api_calls;
    }
    for (auto* w : writers_) w->EndApiCalls();  // every call written before anything else is
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

  // A launch that may start a flow: its key, time and thread.
  void NoteLaunch(const Placed& p, const nsys::ApiCallRow& c, int64_t start) {
    if (c.global_tid != last_launch_gtid_) {
      auto [it, added] = launch_thread_of_.try_emplace(c.global_tid, static_cast<uint32_t>(launch_threads_.size()));
      if (added) launch_threads_.push_back({p.process.pid, model::TidOf(c.global_tid), p.writer});
      last_launch_gtid_ = c.global_tid;
      last_launch_thread_ = it->second;
    }
    launches_.push_back({FlowKey(p.process.rank, c.correlation), std::max<int64_t>(start, 0), last_launch_thread_});
  }

  // Whether a GPU op ends its launch's flow (the first op of a launch: graph launches run
  // several), and the flow's id.
  bool FlowEndsAt(const model::TraceProcess& p, bool has_corr, int64_t corr, uint64_t* key) {
    if (!options_.flows || !has_corr || launches_.empty()) return false;
    *key = FlowKey(p.rank, corr);
    auto it = std::lower_bound(launches_.begin(), launches_.end(), *key,
                               [](const Launch& l, uint64_t k) { return l.key < k; });
    if (it == launches_.end() || it->key != *key) return false;
    size_t i = static_cast<size_t>(it - launches_.begin());
    if (launch_used_[i]) return false;
    launch_used_[i] = true;
    ++summary_->flows;
    return true;
  }

  // A GPU op of `p` to its writer: its launch's flow end found.
  void GpuOp(const Placed& p, model::TraceGpuOp& op) {
    op.process = &p.process;
    op.flow_end = FlowEndsAt(p.process, op.has_correlation, op.correlation, &op.flow_id);
    writers_[p.writer]->GpuOp(op);
    ++summary_->gpu_ops;
  }

  // An op whose times the numbers cannot use (ValidOpTimes), but for one that starts before the
  // session (its start clamped to 0 where it is drawn, and said in its args).
  template <class Row>
  static bool Damaged(const Row& r) {
    const bool early =
        r.start < 0 && r.start >= -nsys::kMaxTimestampNs / 2 && r.start <= r.end && r.end <= nsys::kMaxTimestampNs;
    return !r.valid_times && !early;
  }

  static nsys::KernelColumns LaunchConfig() {
    nsys::KernelColumns c;
    c.launch_config = true;
    return c;
  }

  Status Kernels() {
    return nsys::ForEachKernel(
        db_, schema_,
        [&](const nsys::KernelRow& k) {
          if (Damaged(k)) return void(++damaged_ops_);  // as report: left out, and said
          gpu_max_end_ = std::max(gpu_max_end_, std::max(k.start, k.end));
          const Placed* p = ProcessOf(k.global_pid);
          model::TraceGpuOp op;
          op.start = k.start + off_, op.end = k.end + off_;
          if (!p || !InWindow(op.start, op.end)) return;
          op.name_id = k.name_id;
          op.name = strings_.Get(k.name_id);
          op.cls = ClassOf(k.name_id);
          op.global_pid = k.global_pid, op.device = k.device, op.stream = k.stream;
          op.has_correlation = k.has_correlation, op.correlation = k.correlation;
          op.has_launch_config = k.has_launch_config;
          for (int i = 0; i < 3; ++i) op.grid[i] = k.grid[i], op.block[i] = k.block[i];
          GpuOp(*p, op);
        },
        LaunchConfig());
  }

  Status MemOps() {
    CPPROF_ASSIGN_OR_RETURN(auto kind_names, nsys::ReadMemcpyKindNames(db_));
    CPPROF_ASSIGN_OR_RETURN(auto memory_kinds, nsys::ReadMemoryKindNames(db_));
    auto memory_kind = [&](int kind) -> std::string_view {
      auto it = memory_kinds.find(kind);
      return it == memory_kinds.end() ? std::string_view() : std::string_view(it->second);
    };
    std::unordered_map<int, std::string> names;  // copy kind (-1: memset) -> name
    return nsys::ForEachMemOp(db_, [&](const nsys::MemOpRow& m) {
      if (Damaged(m)) return void(++damaged_ops_);
      gpu_max_end_ = std::max(gpu_max_end_, std::max(m.start, m.end));
      const Placed* p = ProcessOf(m.global_pid);
      model::TraceGpuOp op;
      op.start = m.start + off_, op.end = m.end + off_;
      if (!p || !InWindow(op.start, op.end)) return;
      const int kind = m.copy_kind;
      auto [name, inserted] = names.try_emplace(kind);
      if (inserted) {
        auto it = kind_names.find(kind);
        name->second = kind < 0                 ? std::string("[CUDA memset]")
                       : it != kind_names.end() ? it->second
                                                : fmt::format("[CUDA memcpy kind {}]", kind);
      }
      op.memop = true;
      op.name_id = kind;
      op.name = name->second;
      op.cls = kind < 0 ? OpClass::kMemset : kind == nsys::kMemcpyPeerToPeer ? OpClass::kPeerCopy : OpClass::kMemcpy;
      op.global_pid = m.global_pid, op.device = m.device, op.stream = m.stream;
      op.has_correlation = m.has_correlation, op.correlation = m.correlation;
      op.bytes = m.bytes;
      op.src_kind = m.src_kind, op.dst_kind = m.dst_kind;
      op.src_kind_name = memory_kind(m.src_kind), op.dst_kind_name = memory_kind(m.dst_kind);
      GpuOp(*p, op);
    });
  }

  void FlowStarts() {
    for (size_t i = 0; i < launches_.size(); ++i) {
      if (!launch_used_[i]) continue;
      const Launch& l = launches_[i];
      const auto& [pid, tid, writer] = launch_threads_[l.thread];
      writers_[writer]->FlowStart({l.key, pid, tid, l.ts_ns});
    }
  }

  // Where ranges still open when the capture stopped end: the last timestamp of the export's
  // GPU ops, CUDA API calls and NVTX events (the export's clock).
  StatusOr<int64_t> CaptureEnd() {
    if (capture_end_) return *capture_end_;
    CPPROF_ASSIGN_OR_RETURN(int64_t nvtx_end, nsys::LastNvtxTimestamp(db_, nsys::OpenEnd::kLastNvtxEvent));
    CPPROF_ASSIGN_OR_RETURN(int64_t api_end, nsys::LastApiCallEnd(db_));
    capture_end_ = std::max({gpu_max_end_, nvtx_end, api_end});
    return *capture_end_;
  }

  // NVTX ranges in table order (nsys lists them by start): no sort of the whole table. Ranges of
  // one start go out longest first (containers before what they contain, which a viewer needs
  // to nest them); start/end ranges, which need start order for their lanes, are held and go out
  // last, sorted.
  Status Nvtx() {
    CPPROF_ASSIGN_OR_RETURN(nsys::NvtxDomains domains,
                            domains_.valid() ? domains_.get() : nsys::NvtxDomains::Read(db_));
    Status status = NvtxRanges(domains);
    for (auto* w : writers_) w->EndNvtx();  // every range written before anything else is
    return status;
  }

  // Each writer's ranges in the order a pass over its ranks alone gives them.
  Status NvtxRanges(const nsys::NvtxDomains& domains) {
    nsys::NvtxRangeCursor::Options options;
    // SQLite reads NVTX on other cores while this one places the ranges.
    options.prefetch = db_.exec().HasSpareThreads();
    CPPROF_ASSIGN_OR_RETURN(nsys::NvtxRangeCursor ranges, nsys::NvtxRangeCursor::Open(db_, options));
    last_domain_ = {INT64_MIN, INT64_MIN};  // Range's cached name is of these domains
    struct Held {
      HeldRanges same_start, start_end;
      int64_t last_start = INT64_MIN;
    };
    std::vector<Held> held(writers_.size());
    int64_t skipped = 0, out_of_order = 0;
    while (ranges.Next()) {
      const nsys::NvtxRangeRow& r = ranges.row();
      const Placed* p = ProcessOf(model::GlobalPidOf(r.global_tid));
      if (!p) {
        ++skipped;
        continue;
      }
      Held& h = held[p->writer];
      if (r.event_type != nsys::kNvtxPushPop && r.event_type != nsys::kNvtxtPushPop) {
        h.start_end.Hold(r);
        continue;
      }
      if (r.start != h.last_start) {
        CPPROF_RETURN_IF_ERROR(Emit(h.same_start, domains));
        if (r.start < h.last_start) ++out_of_order;
        h.last_start = r.start;
      }
      h.same_start.Hold(r);
    }
    CPPROF_RETURN_IF_ERROR(ranges.status());
    damaged_ranges_ = ranges.damaged_rows();
    for (Held& h : held) {
      CPPROF_RETURN_IF_ERROR(Emit(h.same_start, domains));
      CPPROF_RETURN_IF_ERROR(Emit(h.start_end, domains));
    }
    NvtxNotes(skipped, out_of_order);
    return OkStatus();
  }

  // What was left out for damaged times, as report leaves it out.
  void DamagedNotes() {
    if (damaged_ops_) {
      summary_->notes.push_back(
          fmt::format("{} GPU ops with damaged times (not integers, ending before they start, or "
                      "past 2^62 ns) were left out, as 'cpprof report' leaves them out",
                      damaged_ops_));
    }
    if (damaged_ranges_) {
      summary_->notes.push_back(
          fmt::format("{} NVTX ranges with damaged times were left out, as 'cpprof report' "
                      "leaves them out",
                      damaged_ranges_));
    }
  }

  void NvtxNotes(int64_t skipped, int64_t out_of_order) {
    if (skipped && !options_.kineto) {  // a Kineto trace holds one rank: the others' ranges are left out by design
      summary_->notes.push_back(fmt::format(
          "{} NVTX ranges of processes without GPU work (or of ranks not asked for) were left out", skipped));
    }
    if (out_of_order) {
      summary_->notes.push_back(fmt::format(
          "{} NVTX push/pop ranges come earlier in time than the row before them in the export's NVTX table "
          "(nsys lists them by start): they are written in table order, so ranges that start together "
          "may not nest in the viewer",
          out_of_order));
    }
  }

  // Ranges held (those of one start, to go out longest first; start/end ranges, to go out last),
  // their texts in an arena: no allocation per range.
  struct HeldRanges {
    struct Held {
      nsys::NvtxRangeRow row;
      size_t text_begin, text_size;
    };
    std::vector<Held> held;
    std::string text;
    void Hold(const nsys::NvtxRangeRow& r) {
      held.push_back({r, text.size(), r.text.size()});
      text.append(r.text);
    }
  };

  Status Emit(HeldRanges& h, const nsys::NvtxDomains& domains) {
    std::sort(h.held.begin(), h.held.end(), [](const HeldRanges::Held& a, const HeldRanges::Held& b) {
      if (a.row.start != b.row.start) return a.row.start < b.row.start;
      if (a.row.open != b.row.open) return a.row.open;
      if (a.row.end != b.row.end) return a.row.end > b.row.end;
      return a.row.rowid < b.row.rowid;
    });
    for (HeldRanges::Held& r : h.held) {
      r.row.text = std::string_view(h.text.data() + r.text_begin, r.text_size);
      CPPROF_RETURN_IF_ERROR(Range(r.row, domains));
    }
    h.held.clear();
    h.text.clear();
    return OkStatus();
  }

  // Whether the range "domain:text" is a module range (the readout's built-in rule), asked once
  // per distinct name (PyTorch's op ranges in one form per op, as attribution asks).
  bool IsModule(std::string_view domain, std::string_view text) {
    name_.assign(domain).append(":");
    analysis::AppendOpRangeKey(text, name_);
    auto [it, added] = is_module_.try_emplace(name_, false);
    if (added) it->second = modules_.IsModule(name_);
    return it->second;
  }

  Status Range(const nsys::NvtxRangeRow& r, const nsys::NvtxDomains& domains) {
    const Placed* p = ProcessOf(model::GlobalPidOf(r.global_tid));
    model::TraceNvtxRange e;
    e.process = &p->process;
    e.start = r.start, e.end = r.end;
    if (r.open) {
      CPPROF_ASSIGN_OR_RETURN(e.end, CaptureEnd());
      e.end = std::max(e.end, e.start);
    }
    e.start += off_, e.end += off_;
    // The domain's name, looked up again only when the domain or the thread changes.
    if (r.domain_id != last_domain_.first || r.global_tid != last_domain_.second) {
      last_domain_ = {r.domain_id, r.global_tid};
      last_domain_name_ = &domains.NamesFor(r.domain_id, r.global_tid).front();
    }
    e.domain = *last_domain_name_;
    e.text = r.text;
    e.global_tid = r.global_tid;
    e.open = r.open;
    e.push_pop = r.event_type == nsys::kNvtxPushPop || r.event_type == nsys::kNvtxtPushPop;
    if (r.ends_on_other_thread && r.end_global_tid != r.global_tid) e.ended_on_tid = model::TidOf(r.end_global_tid);
    if (!InWindow(e.start, e.end)) return OkStatus();
    if (options_.kineto && e.push_pop) e.module = IsModule(e.domain, e.text);
    ++summary_->nvtx_ranges;
    writers_[p->writer]->NvtxRange(e);
    return OkStatus();
  }

  const Database& db_;
  const nsys::ExportSchema& schema_;
  const ChromeTraceOptions& options_;
  nsys::StringTable strings_;
  const int64_t off_;                                 // added to every time: the run's clock
  std::future<StatusOr<nsys::NvtxDomains>> domains_;  // read on another connection, or not yet
  std::vector<render::TraceWriter*> writers_;
  ChromeTraceSummary* summary_ = nullptr;

  std::map<int64_t, Placed> procs_;  // by globalPid: the ranks kept
  int64_t last_gpid_ = -1;
  const Placed* last_proc_ = nullptr;
  std::unordered_map<int64_t, OpClass> classes_;
  std::pair<int64_t, int64_t> last_domain_{INT64_MIN, INT64_MIN};  // Range's last (domainId, globalTid)
  const std::string* last_domain_name_ = nullptr;                  // and its name
  std::string name_;                                               // IsModule's "domain:text"
  const analysis::ModuleConfig modules_ = analysis::DefaultModuleConfig();
  std::unordered_map<std::string, bool> is_module_;
  std::vector<Launch> launches_;  // sorted by key
  std::vector<bool> launch_used_;
  std::vector<std::tuple<int, int64_t, size_t>> launch_threads_;  // a launch's (pid, tid, writer) by Launch::thread
  std::unordered_map<int64_t, uint32_t> launch_thread_of_;        // globalTid -> index there
  int64_t last_launch_gtid_ = INT64_MIN;
  uint32_t last_launch_thread_ = 0;
  int64_t gpu_max_end_ = 0;
  int64_t damaged_ops_ = 0, damaged_ranges_ = 0;
  std::optional<int64_t> capture_end_;
};

// The NVTX domain names of the export, read on a connection of their own where there are cores
// (ExportEvents waits for them when it reaches NVTX); an invalid future otherwise.
std::future<StatusOr<nsys::NvtxDomains>> ReadDomainsAhead(const Database& db, const ChromeTraceOptions& options) {
  if (!options.nvtx || !db.HasTable(nsys::kNvtxTable) || !db.exec().HasSpareThreads()) return {};
  return ReadAhead(db, [](const Database& own) { return nsys::NvtxDomains::Read(own); });
}

// After the run's events: the CP view (a Chrome trace's), of the ranks written (by rank, their
// pid); then the document closed.
Status Finish(const ChromeTraceOptions& options, const std::vector<model::TraceProcess>& written, TraceOut& t,
              ChromeTraceSummary& summary) {
  if (options.await_cp) CPPROF_RETURN_IF_ERROR(options.await_cp());
  if (options.cp && t.chrome) {
    std::map<int, int> pid_of_rank;
    for (const auto& p : written) pid_of_rank[p.rank] = p.pid;
    t.chrome->CpView(*options.cp, pid_of_rank, options.start_ns, options.end_ns);
    summary.cp_slices = t.chrome->cp_slices();
    summary.cp_flows = t.chrome->cp_flows();
    summary.cp_path_iterations = options.cp->PathIterations();
  }
  t.writer->Finish();
  summary.events = t.writer->events();
  return OkStatus();
}

// One export of the run and what the trace needs of it besides: its GPU processes (the census),
// NCCL's rank payloads, its NVTX domain names (being read ahead), and for a Kineto trace the
// attribution's pass over NVTX that finds the iterations.
struct TraceExport : OpenedExport {
  std::vector<model::GpuProcess> procs;
  std::map<int64_t, model::NcclRankInfo> nccl;
  std::future<StatusOr<nsys::NvtxDomains>> domains;
  Attribution attribution;  // Kineto: iterations only (no launch tagged); emptied once the run is open
};

// The run: its exports open, on one clock, its ranks (analysis::AssignRunRanks) and, for a
// Kineto trace, its iterations (the readout's rule, pipeline/run_reader.h).
struct TraceRun {
  std::vector<std::string> paths;
  std::vector<TraceExport> exports;
  analysis::RankAssignment ranks;      // over the processes below
  std::vector<size_t> export_of;       // by process: its export
  std::vector<model::GpuProcess> own;  // by process: as its export has it (its own globalPid)
  RunIterations iterations;            // on the run's clock (Kineto)
  int World() const { return static_cast<int>(ranks.process_of_rank.size()); }
  bool Several() const { return exports.size() > 1; }
};

// A future that holds `v` already.
template <class T>
std::future<T> Ready(T v) {
  std::promise<T> p;
  p.set_value(std::move(v));
  return p.get_future();
}

// What the trace reads of export `x` while the run opens: the census and NCCL's payloads (on a
// connection of its own while this one counts the GPU ops per process, where there are cores),
// with one export its NVTX domain names too (read ahead). A Kineto trace reads NVTX once here for
// the iterations, every export's domain names and NCCL's payloads alike (the readout's pass,
// without tagging launches).
Status ReadTraceExport(const ChromeTraceOptions& options, const analysis::ModuleConfig& config, bool several,
                       TraceExport& x) {
  if (options.kineto) {
    std::future<StatusOr<std::vector<model::GpuProcess>>> procs_read;
    if (x.db->exec().HasSpareThreads()) {
      procs_read = ReadAhead(*x.db, [](const Database& own) { return nsys::ReadGpuProcesses(own); });
    }
    CPPROF_ASSIGN_OR_RETURN(x.attribution, ReadAttribution(*x.db, config, nullptr, "", Launches::kNone));
    CPPROF_ASSIGN_OR_RETURN(x.procs, procs_read.valid() ? procs_read.get() : nsys::ReadGpuProcesses(*x.db));
    x.nccl = x.attribution.nccl_ranks;
    if (options.nvtx && x.attribution.has_nvtx) {  // every export's: no thread is needed to keep them
      x.domains = Ready(StatusOr<nsys::NvtxDomains>(std::move(x.attribution.domains)));
    }
    return OkStatus();
  }
  std::future<StatusOr<std::map<int64_t, model::NcclRankInfo>>> nccl_read;
  if (x.db->exec().HasSpareThreads()) {
    nccl_read = ReadAhead(*x.db, [](const Database& own) { return nsys::ReadNcclRanks(own); });
  }
  if (!several) x.domains = ReadDomainsAhead(*x.db, options);
  CPPROF_ASSIGN_OR_RETURN(x.procs, nsys::ReadGpuProcesses(*x.db));
  CPPROF_ASSIGN_OR_RETURN(x.nccl, nccl_read.valid() ? nccl_read.get() : nsys::ReadNcclRanks(*x.db));
  return OkStatus();
}

// Opens the run (pipeline/run_exports.h: once per command) and reads what the trace's ranks need
// (ReadTraceExport).
StatusOr<TraceRun> OpenTraceRun(const std::vector<std::string>& paths, const ChromeTraceOptions& options) {
  TraceRun run;
  run.paths = paths;
  run.exports = std::vector<TraceExport>(paths.size());
  std::vector<OpenedExport*> open;
  for (auto& x : run.exports) open.push_back(&x);
  const analysis::ModuleConfig config = analysis::DefaultModuleConfig();
  OpenRunOptions o;
  o.exec = options.exec;
  o.force = options.force;
  o.read = [&](size_t e) { return ReadTraceExport(options, config, paths.size() > 1, run.exports[e]); };
  CPPROF_RETURN_IF_ERROR(OpenRun(paths, o, open));
  for (size_t e = 0; options.kineto && e < paths.size(); ++e) {
    TraceExport& x = run.exports[e];
    TakeIterationMarks(x.attribution, e, run.Several(), x.clock.offset_ns, run.iterations);
    x.attribution = {};
  }
  std::vector<model::GpuProcess> procs;  // the run's: globalPids with the export in the high bits
  std::map<int64_t, model::NcclRankInfo> nccl;
  for (size_t e = 0; e < paths.size(); ++e) {
    auto pid = [&](int64_t gpid) { return run.Several() ? model::RunPid(e, gpid) : gpid; };
    for (const auto& p : run.exports[e].procs) {
      run.own.push_back(p);
      procs.push_back(p);
      procs.back().global_pid = pid(p.global_pid);
      run.export_of.push_back(e);
    }
    for (const auto& [gpid, info] : run.exports[e].nccl) nccl[pid(gpid)] = info;
  }
  run.ranks = analysis::AssignRunRanks(procs, nccl, run.export_of, CapturesOf(open));
  return run;
}

// The ranks written (all, or those asked for), by export then globalPid: a trace of one export
// names a rank's process by its OS pid, a run's trace by its rank.
std::vector<model::TraceProcess> Written(const TraceRun& run, const std::vector<int>& wanted) {
  std::vector<std::pair<size_t, model::TraceProcess>> out;
  for (int r = 0; r < run.World(); ++r) {
    if (!Wanted(wanted, r)) continue;
    const size_t p = run.ranks.process_of_rank[static_cast<size_t>(r)];
    const model::GpuProcess& q = run.own[p];
    out.push_back({run.export_of[p], {r, run.Several() ? r : q.pid, q.pid, q.MainDevice(), q.name, q.global_pid}});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second.global_pid < b.second.global_pid;
  });
  std::vector<model::TraceProcess> procs;
  for (auto& [e, p] : out) procs.push_back(std::move(p));
  return procs;
}

size_t ExportOf(const TraceRun& run, int rank) {
  return run.export_of[run.ranks.process_of_rank[static_cast<size_t>(rank)]];
}

// What the document says about itself, for the ranks `processes`.
model::TraceHeader Header(const TraceRun& run, std::vector<model::TraceProcess> processes) {
  model::TraceHeader header;
  header.nsys_version = run.exports[0].schema.nsys_version;
  header.export_schema = run.exports[0].schema.schema_version;
  header.rank_method = run.ranks.method;
  header.world_size = run.World();
  header.processes = std::move(processes);
  if (!run.Several()) {
    header.time = "ts and dur in microseconds of the export's clock (0 = start of the nsys session)";
    return header;
  }
  header.time =
      "ts and dur in microseconds of the run's clock: the first export's session clock (0 = its start); each "
      "other export's times shifted by its offset";
  const std::vector<std::string> names = DistinctNames(run.paths);
  for (size_t e = 0; e < run.exports.size(); ++e) {
    const analysis::ClockAlignment& c = run.exports[e].clock;
    header.exports.push_back({names[e], c.offset_ns, c.residual_ns, c.method});
  }
  return header;
}

// The run's iterations (options.iterations: the readout's, on the run's clock, global_pid the
// run's) on each rank written, numbered as the readout numbers them: a step per outermost mark
// (as analysis::ChooseWindow keeps them) of an iteration the window holds, or (a time range
// given in ns) that overlaps the range by more than an instant.
void WriteSteps(const TraceRun& run, const ChromeTraceOptions& options, const std::vector<model::TraceProcess>& written,
                const std::function<render::TraceWriter*(int rank)>& writer_of_rank) {
  if (options.iterations.empty()) return;
  StatusOr<model::Window> all = analysis::ChooseWindow(options.iterations, options.iteration_method, "all");
  if (!all.ok()) return;
  std::map<std::string, int64_t> number;  // the iteration's name -> its number in the run
  for (size_t i = 0; i < all->iterations.size(); ++i) number[all->iterations[i].name] = static_cast<int64_t>(i);
  std::map<int64_t, const model::TraceProcess*> written_of;  // by the run's globalPid
  for (const auto& p : written) {
    const size_t e = ExportOf(run, p.rank);
    written_of[run.Several() ? model::RunPid(e, p.global_pid) : p.global_pid] = &p;
  }
  std::vector<analysis::IterationMark> marks = options.iterations;
  std::sort(marks.begin(), marks.end(), [](const auto& x, const auto& y) {
    return x.global_pid != y.global_pid ? x.global_pid < y.global_pid
           : x.start != y.start         ? x.start < y.start
                                        : x.end > y.end;
  });
  const analysis::IterationMark* outer = nullptr;
  for (const auto& m : marks) {
    if (outer && outer->global_pid == m.global_pid && m.end <= outer->end) continue;  // nested
    outer = &m;
    auto n = number.find(m.name);
    auto p = written_of.find(m.global_pid);
    const bool in_range = !options.window_iterations.empty() ? options.window_iterations.count(m.name) > 0
                                                             : (!options.start_ns || m.end > *options.start_ns) &&
                                                                   (!options.end_ns || m.start < *options.end_ns);
    if (n == number.end() || p == written_of.end() || !in_range) continue;
    writer_of_rank(p->second->rank)->Step({p->second, model::TidOf(m.global_tid), m.start, m.end, n->second});
  }
}

// Each export's events to the writers of its ranks (`writer_of_rank`), in export order; an export
// none of whose ranks is written is not read at all.
Status WriteExports(TraceRun& run, const ChromeTraceOptions& options, const std::vector<model::TraceProcess>& written,
                    const std::function<render::TraceWriter*(int rank)>& writer_of_rank, ChromeTraceSummary& summary) {
  for (size_t e = 0; e < run.exports.size(); ++e) {
    TraceExport& x = run.exports[e];
    std::vector<ExportEvents::Output> mine;
    for (const auto& p : written) {
      if (ExportOf(run, p.rank) == e) mine.push_back({p, writer_of_rank(p.rank)});
    }
    if (mine.empty()) continue;
    ChromeTraceSummary part;
    ExportEvents reader(*x.db, x.schema, options, mine, x.clock.offset_ns,
                        x.domains.valid() ? std::move(x.domains) : ReadDomainsAhead(*x.db, options));
    CPPROF_RETURN_IF_ERROR(reader.Write(run.Several() ? part : summary));
    if (!run.Several()) continue;
    summary.gpu_ops += part.gpu_ops;
    summary.nvtx_ranges += part.nvtx_ranges;
    summary.api_calls += part.api_calls;
    summary.flows += part.flows;
    for (auto& n : part.notes) summary.notes.push_back(fmt::format("{}: {}", run.paths[e], n));
  }
  WriteSteps(run, options, written, writer_of_rank);
  return OkStatus();
}

// The notes a trace of the run starts with.
std::vector<std::string> RunNotes(const TraceRun& run) {
  if (!run.Several()) return run.ranks.notes;
  return {"several exports: a process per rank with the rank as its pid; times on the first export's clock"};
}

// A Kineto trace's iterations and time range: the run's iterations (the readout's one rule:
// markers, else the repeats of the outermost module range), and its window (`window`, default
// steady) unless --start-ns/--end-ns give one.
Status KinetoWindow(TraceRun& run, ChromeTraceOptions& o) {
  RunIterations& it = run.iterations;
  CPPROF_ASSIGN_OR_RETURN(model::Window w,
                          analysis::ChooseWindow(it.marks, it.method, o.window.empty() ? "steady" : o.window));
  o.iterations = std::move(it.marks);
  o.iteration_method = std::move(it.method);
  if (o.start_ns || o.end_ns || w.whole_capture) return OkStatus();
  o.start_ns = w.start_ns, o.end_ns = w.end_ns;
  for (const auto& i : w.iterations) {
    if (i.in_window) o.window_iterations.insert(i.name);
  }
  return OkStatus();
}

}  // namespace

StatusOr<ChromeTraceSummary> WriteChromeTrace(const std::string& path, const ChromeTraceOptions& options,
                                              std::ostream& out) {
  return WriteChromeTrace(std::vector<std::string>{path}, options, out);
}

StatusOr<ChromeTraceSummary> WriteChromeTrace(const std::vector<std::string>& paths, const ChromeTraceOptions& given,
                                              std::ostream& out) {
  if (paths.empty()) return Status(ExitCode::kUsage, "no export given");
  if (given.kineto && paths.size() > 1 && given.ranks.size() != 1) {
    return Error(ExitCode::kUsage, "a Kineto trace of several exports holds one rank: give one rank per trace");
  }
  ChromeTraceOptions options = given;
  CPPROF_ASSIGN_OR_RETURN(TraceRun run, OpenTraceRun(paths, options));
  if (options.kineto) CPPROF_RETURN_IF_ERROR(KinetoWindow(run, options));
  CPPROF_RETURN_IF_ERROR(CheckRanks(options.ranks, run.World(), run.Several() ? "the run" : "the export"));
  const std::vector<model::TraceProcess> written = Written(run, options.ranks);
  TraceOut t = MakeWriter(options, out, Header(run, written));
  ChromeTraceSummary summary;
  summary.notes = RunNotes(run);
  summary.ranks = static_cast<int>(written.size());
  CPPROF_RETURN_IF_ERROR(WriteExports(
      run, options, written, [&](int) { return t.writer.get(); }, summary));
  CPPROF_RETURN_IF_ERROR(Finish(options, written, t, summary));
  summary.invalid_utf8 = AnyInvalidUtf8(run.exports);
  return summary;
}

StatusOr<ChromeTraceSummary> WriteKinetoTraces(const std::vector<std::string>& paths, const ChromeTraceOptions& options,
                                               const KinetoFiles& files) {
  if (paths.empty()) return Status(ExitCode::kUsage, "no export given");
  ChromeTraceOptions o = options;
  o.kineto = true;
  CPPROF_ASSIGN_OR_RETURN(TraceRun run, OpenTraceRun(paths, o));
  CPPROF_RETURN_IF_ERROR(KinetoWindow(run, o));
  CPPROF_ASSIGN_OR_RETURN(std::vector<int> ranks, files.ranks(run.World()));
  CPPROF_RETURN_IF_ERROR(CheckRanks(ranks, run.World(), run.Several() ? "the run" : "the export"));
  o.ranks = ranks;
  const std::vector<model::TraceProcess> written = Written(run, ranks);
  ChromeTraceSummary summary;
  summary.notes = RunNotes(run);
  summary.ranks = static_cast<int>(written.size());
  auto write = [&](const std::vector<std::ostream*>& streams) -> Status {
    std::map<int, TraceOut> traces;  // by rank: one file each, its rank alone in it
    const render::TraceWriterOptions wo = WriterOptions(o.exec, /*several_writers=*/ranks.size() > 1);
    for (size_t i = 0; i < ranks.size(); ++i) {
      std::vector<model::TraceProcess> one;
      for (const auto& p : written) {
        if (p.rank == ranks[i]) one.push_back(p);
      }
      traces[ranks[i]].writer = std::make_unique<render::KinetoFormat>(*streams[i], Header(run, one), wo);
    }
    CPPROF_RETURN_IF_ERROR(WriteExports(
        run, o, written, [&](int r) { return traces[r].writer.get(); }, summary));
    for (auto& [rank, t] : traces) {
      ChromeTraceSummary own;
      CPPROF_RETURN_IF_ERROR(Finish(o, {}, t, own));
      summary.events += own.events;
    }
    return OkStatus();
  };
  CPPROF_RETURN_IF_ERROR(files.open(ranks, write));
  summary.invalid_utf8 = AnyInvalidUtf8(run.exports);
  return summary;
}

}  // namespace cpprof::pipeline
