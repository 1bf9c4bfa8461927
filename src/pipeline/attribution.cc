// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "pipeline/attribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "analysis/backtrace_modules.h"
#include "analysis/name_cache.h"
#include "analysis/size_inference.h"
#include "base/batch_pipe.h"
#include "base/regex.h"
#include "nsys/export_reader.h"
#include "nsys/launch_reader.h"
#include "nsys/nccl_ranks.h"
#include "nsys/nvtx_reader.h"
#include "nsys/python_backtraces.h"

namespace cpprof::pipeline {

namespace {

// Names longer than this are never iteration markers.
constexpr size_t kMaxMarkerName = 4096;

// A module called more often than this per process is a layer, not an iteration.
constexpr size_t kMaxRepeatIterations = 1000;

// Without iteration markers: the outermost module range (no other module range around it on its
// thread) that repeats most, when every process that runs it runs it the same number of times,
// from 2 to kMaxRepeatIterations. Its k-th call on each process is iteration k ("name #k").
std::vector<analysis::IterationMark> RepeatedOutermostModule(const std::vector<analysis::KeptRange>& kept,
                                                             const std::vector<std::string>& names) {
  std::vector<const analysis::KeptRange*> mods;
  for (const auto& k : kept) {
    if (k.module && k.seq == -1) mods.push_back(&k);
  }
  std::sort(mods.begin(), mods.end(), [](const auto* x, const auto* y) {
    if (x->tid != y->tid) return x->tid < y->tid;
    return x->start != y->start ? x->start < y->start : x->end > y->end;
  });
  // name -> process -> its outermost calls
  std::map<uint32_t, std::map<int64_t, std::vector<const analysis::KeptRange*>>> outer;
  int64_t tid = -1, open_end = INT64_MIN;
  for (const auto* k : mods) {
    if (k->tid != tid) tid = k->tid, open_end = INT64_MIN;
    if (k->start < open_end) continue;  // inside an outer module range
    open_end = k->end;
    outer[k->name][nsys::ProcessOfThread(k->tid)].push_back(k);
  }
  const std::vector<const analysis::KeptRange*>* best = nullptr;
  uint32_t best_name = 0;
  std::map<int64_t, std::vector<const analysis::KeptRange*>>* best_procs = nullptr;
  for (auto& [name, procs] : outer) {
    size_t n = procs.begin()->second.size();
    bool same = n >= 2 && n <= kMaxRepeatIterations &&
                std::all_of(procs.begin(), procs.end(), [&](const auto& p) { return p.second.size() == n; });
    if (!same) continue;
    if (!best || n > best->size()) best = &procs.begin()->second, best_name = name, best_procs = &procs;
  }
  std::vector<analysis::IterationMark> marks;
  if (!best_procs) return marks;
  for (const auto& [pid, calls] : *best_procs) {
    for (size_t i = 0; i < calls.size(); ++i) {
      marks.push_back(
          {fmt::format("{} #{}", names[best_name], i), pid, calls[i]->start, calls[i]->end, false, calls[i]->tid});
    }
  }
  return marks;
}

// Ranges handed from the NVTX scan's thread to the thread that classifies them, in batches:
// each range's domain name and text back to back in `bytes`.
struct RangeBatch {
  struct Range {
    int64_t start, end, tid;
    size_t domain_end, text_end;  // in bytes
  };
  static constexpr size_t kRanges = 4096;
  std::vector<Range> ranges;
  std::string bytes;
  bool restart = false;  // forget what the batches before gave (ScanNvtx's restart)
  void Clear() {
    ranges.clear();
    bytes.clear();
    restart = false;
  }
};

// Runs `classify` on each batch of ranges in order: on a thread of its own where there are
// cores to spare, else on the caller's.
class RangeClassifier {
 public:
  // `spare_threads`: classify on a thread of its own.
  RangeClassifier(bool spare_threads, std::function<void(const RangeBatch&)> classify)
      : classify_(std::move(classify)) {
    if (spare_threads) {
      thread_.emplace(4, [this](RangeBatch& batch) {
        classify_(batch);
        return true;
      });
    }
  }

  void Add(int64_t start, int64_t end, int64_t tid, std::string_view domain, std::string_view text) {
    batch_.bytes.append(domain);
    const size_t domain_end = batch_.bytes.size();
    batch_.bytes.append(text);
    batch_.ranges.push_back({start, end, tid, domain_end, batch_.bytes.size()});
    if (batch_.ranges.size() == RangeBatch::kRanges) HandOver();
  }
  void Restart() {
    HandOver();
    batch_.restart = true;
  }
  // Every range classified; rethrows what the classifying thread threw.
  void Finish() {
    HandOver();
    if (thread_) thread_->Finish();
  }

 private:
  void HandOver() {
    if (batch_.ranges.empty() && !batch_.restart) return;
    if (!thread_) {
      classify_(batch_);
    } else {
      thread_->Put(batch_);  // false: the classifying thread failed (Finish says how), the rest is dropped
    }
    batch_.Clear();
  }

  std::function<void(const RangeBatch&)> classify_;
  RangeBatch batch_;
  std::optional<BatchThread<RangeBatch>> thread_;  // last: stopped first
};

// The iterations' method: the marker ranges found (by name or --iteration-range), else the
// repeats of the outermost module range.
void FindIterations(Attribution& a, const std::vector<analysis::KeptRange>& kept, const std::vector<std::string>& names,
                    const RE2* iteration_range, const std::string& iteration_pattern) {
  if (a.iteration_marks.empty() && !iteration_range) {
    a.iteration_marks = RepeatedOutermostModule(kept, names);
    if (!a.iteration_marks.empty()) {
      const std::string& name = a.iteration_marks.front().name;
      a.iteration_method = fmt::format("repeats of the outermost module range '{}' (no iteration ranges were found)",
                                       name.substr(0, name.rfind(" #")));
    }
  } else if (!a.iteration_marks.empty()) {
    const std::string& first = a.iteration_marks.front().name;
    a.iteration_method = iteration_range ? fmt::format("ranges matching --iteration-range '{}'", iteration_pattern)
                         : first.find("ProfilerStep") != std::string::npos
                             ? std::string("torch.profiler's ProfilerStep#N ranges")
                             : fmt::format("iteration ranges such as '{}'", first);
  }
}

// An op range with shapes, where it ran: which module it is under is known once the ranges are.
struct PendingShapes {
  int64_t start, tid;
  model::OpShapes op;
};
// At most this many op ranges with shapes are kept per export: the first calls of each module
// need a few dozen each.
constexpr size_t kMaxShapeOps = 1 << 15;

// An op range whose shapes tell sizes (a LayerNorm's, a linear's, ...), kept up to kMaxShapeOps.
void KeepShapes(int64_t start, int64_t tid, std::string_view text, std::vector<PendingShapes>& out) {
  if (out.size() >= kMaxShapeOps || !analysis::IsSizeBearingOp(text)) return;
  if (auto op = analysis::ParseOpShapes(text)) out.push_back({start, tid, std::move(*op)});
}

// The op ranges with shapes under each module node (and its ancestors), from the first process
// that ran it, at most ModuleShapes::kMaxOpsPerModule per node.
std::vector<model::ModuleShapes> ShapesByModule(const analysis::ModuleAttribution& m,
                                                const std::vector<PendingShapes>& ops) {
  const auto& nodes = m.nodes();
  std::vector<model::ModuleShapes> by_node(nodes.size());
  std::vector<int64_t> pid_of(nodes.size(), -1);
  for (const PendingShapes& p : ops) {
    const int64_t pid = nsys::ProcessOfThread(p.tid);
    for (int n = m.ForCall(p.tid, p.start).node; n > 0 && n < static_cast<int>(nodes.size()); n = nodes[n].parent) {
      if (pid_of[n] == -1) pid_of[n] = pid;
      if (pid_of[n] != pid || by_node[n].ops.size() >= model::ModuleShapes::kMaxOpsPerModule) continue;
      by_node[n].ops.push_back(p.op);
    }
  }
  std::vector<model::ModuleShapes> out;
  for (size_t n = 1; n < nodes.size(); ++n) {
    if (by_node[n].ops.empty() || nodes[n].is_group) continue;
    std::string path;
    for (int k = static_cast<int>(n); k >= 0; k = nodes[k].parent)
      path = nodes[k].name + (path.empty() ? "" : "/") + path;
    by_node[n].path = std::move(path);
    out.push_back(std::move(by_node[n]));
  }
  return out;
}

// Every launch tagged with the module and phase around it (ModuleAttribution over the kept ranges,
// when there are any); with `host`, every call's start and thread and the blocking calls
// (Attribution::host_calls).
Status TagLaunches(const nsys::Database& db, const analysis::ModuleConfig& config,
                   std::vector<analysis::KeptRange> kept, std::vector<std::string> names, std::set<int64_t> autograd,
                   const std::vector<PendingShapes>& shape_ops, bool host, Attribution& a) {
  if (!kept.empty() || !autograd.empty()) {
    a.modules =
        std::make_unique<analysis::ModuleAttribution>(std::move(kept), std::move(names), config, std::move(autograd));
  }
  const analysis::LaunchTag none;
  std::optional<nsys::StringTable> strings;  // the calls' names, for the syncs (with `host` only)
  if (host) strings.emplace(db);
  std::unordered_map<int64_t, bool> sync_of;  // nameId -> analysis::IsHostSync
  CPPROF_ASSIGN_OR_RETURN(a.damaged_runtime_rows, nsys::ForEachRuntimeCall(db, [&](const nsys::RuntimeCall& c) {
                            const int64_t pid = nsys::ProcessOfThread(c.global_tid);
                            if (a.modules) {
                              analysis::LaunchTag tag = a.modules->ForCall(c.global_tid, c.start);
                              if (!(tag == none)) a.calls.Add(pid, c.correlation, tag);
                            }
                            if (!host) return;
                            auto [it, added] = sync_of.try_emplace(c.name_id, false);
                            if (added) it->second = analysis::IsHostSync(strings->Get(c.name_id));
                            a.host_calls.Add(pid, c.global_tid, c.correlation, c.start, c.end, it->second);
                          }));
  if (strings) CPPROF_RETURN_IF_ERROR(strings->status());
  a.calls.Finish();
  a.host_calls.Finish();
  if (!a.modules) return OkStatus();
  a.module_calls = a.modules->ModuleCalls();
  a.shapes = ShapesByModule(*a.modules, shape_ops);
  a.modules->ReleaseRanges();  // every launch is tagged: only the module tree is needed from here
  return OkStatus();
}

// Module calls from the launches' Python backtraces where no NVTX module range is around them
// (analysis/backtrace_modules.h), appended to the kept ranges.
void AddBacktraceModules(const model::PythonBacktraces& python, const analysis::ModuleConfig& config,
                         const analysis::SourceReader& sources, Attribution& a, std::vector<analysis::KeptRange>& kept,
                         std::vector<std::string>& names) {
  if (python.marks.empty() && python.damaged == 0) return;
  analysis::BacktraceModuleInput in;
  in.backtraces = &python;
  in.kept = &kept;
  in.read_source = sources;
  for (const auto& m : a.iteration_marks) {
    in.iteration_starts.push_back({m.global_pid, m.start});
    in.iteration_starts.push_back({m.global_pid, m.end});
  }
  analysis::BacktraceModules b = analysis::BuildBacktraceModules(in, config);
  a.backtraces = std::move(b.summary);
  a.backtraces.damaged = python.damaged;
  const auto offset = static_cast<uint32_t>(names.size());
  for (auto& n : b.names) names.push_back(std::move(n));
  for (auto& r : b.ranges) {
    r.name += offset;
    kept.push_back(r);
  }
}

// What the NVTX pass keeps for attribution: module, marker and autograd ranges (names indexes
// `names`), op ranges with shapes, and the Python backtraces.
struct NvtxKept {
  std::vector<analysis::KeptRange> kept;
  std::vector<std::string> names;
  std::vector<PendingShapes> shape_ops;
  model::PythonBacktraces python;
};

// What the NVTX pass keeps of each range, in table order (on the classifying thread): its shapes,
// autograd's sequence numbers (with `map_backward`), the iteration marks, and the module,
// optimizer, warm-up and excluded-work ranges, each distinct name classified once.
class RangeKeeper {
 public:
  RangeKeeper(const analysis::ModuleConfig& config, const RE2* iteration_range, bool map_backward, Attribution& a,
              NvtxKept& out)
      : iteration_range_(iteration_range),
        map_backward_(map_backward),
        a_(a),
        out_(out),
        // Every pattern is asked once per distinct name (one RE2::Set pass), not once per range.
        seen_([this, &config](const std::string& name) {
          const analysis::NameClass c = config.Classify(name);
          Flags f{-1, c.module, c.optimizer, c.warmup, c.excluded_work, MarkerOf(name, c.warmup)};
          if (f.module || f.optimizer || f.warmup || f.excluded) {
            f.index = static_cast<int32_t>(out_.names.size());
            out_.names.push_back(name);
          }
          return f;
        }) {}

  void Keep(int64_t start, int64_t end, int64_t tid, std::string_view domain, std::string_view text) {
    KeepShapes(start, tid, text, out_.shape_ops);
    // Autograd's op ranges link backward work to the forward op's module by sequence number
    // (their texts are unique per op: they never go through `seen_`).
    if (map_backward_) {
      int64_t seq = analysis::AutogradSeq(text);
      if (seq < 0 && analysis::IsAutogradEvaluate(text)) seq = analysis::kSeqOfChild;
      if (seq != -1) {
        out_.kept.push_back({start, end, tid, 0, false, false, false, false, seq});
        return;
      }
    }
    // PyTorch's op ranges in one form per op name: per-call numbers never decide (AppendOpRangeKey).
    full_.assign(domain).append(":");
    analysis::AppendOpRangeKey(text, full_);
    const uint32_t id = seen_.Intern(full_);
    const Flags& f = seen_.info(id);
    if (f.marker != analysis::MarkerKind::kNone) {
      a_.iteration_marks.push_back(
          {seen_.name(id), nsys::ProcessOfThread(tid), start, end, f.marker == analysis::MarkerKind::kWarmup, tid});
    }
    if (f.index < 0) return;
    out_.kept.push_back({start, end, tid, static_cast<uint32_t>(f.index), f.module, f.optimizer, f.warmup, f.excluded});
    if (f.warmup && a_.warmup_range.empty()) a_.warmup_range = full_;
  }

  // Every range comes again (NvtxScanCallbacks::restart): what was kept of them is forgotten.
  void Restart() {
    out_.kept.clear(), out_.shape_ops.clear();
    a_.iteration_marks.clear();
    a_.warmup_range.clear();
  }

  size_t distinct_names() const { return seen_.size(); }

 private:
  struct Flags {
    int32_t index;  // into names; -1: not kept
    bool module, optimizer, warmup, excluded;
    analysis::MarkerKind marker;
  };

  analysis::MarkerKind MarkerOf(const std::string& name, bool warmup) const {
    if (name.size() > kMaxMarkerName) return analysis::MarkerKind::kNone;
    if (!iteration_range_) return analysis::IterationMarkerKind(name);
    if (!RegexSearch(name, *iteration_range_)) return analysis::MarkerKind::kNone;
    return warmup ? analysis::MarkerKind::kWarmup : analysis::MarkerKind::kIteration;
  }

  const RE2* iteration_range_;
  const bool map_backward_;
  Attribution& a_;
  NvtxKept& out_;
  analysis::NameCache<Flags> seen_;
  std::string full_;  // "domain:key" of the range being kept
};

// One pass over NVTX_EVENTS: the ranges classified (RangeKeeper, on a thread of their own), the
// iteration marks, the tallies for the diagnostics, NCCL's ranks and, when launches are tagged,
// the backtraces.
Status ScanNvtxForAttribution(const nsys::Database& db, const analysis::ModuleConfig& config,
                              const RE2* iteration_range, bool tag_launches, Attribution& a, NvtxKept& out) {
  // Classifying a range (autograd's numbers, PyTorch's op range keys, the names' classes) took
  // most of the scan's thread: it runs on a thread of its own, in table order, while the scan's
  // thread tallies the ranges and finds the iteration windows.
  RangeKeeper keeper(config, iteration_range, a.has_autograd_threads, a, out);
  RangeClassifier classifier(db.exec().HasSpareThreads(), [&](const RangeBatch& batch) {
    if (batch.restart) keeper.Restart();
    size_t at = 0;
    for (const RangeBatch::Range& r : batch.ranges) {
      const std::string_view domain(batch.bytes.data() + at, r.domain_end - at);
      const std::string_view text(batch.bytes.data() + r.domain_end, r.text_end - r.domain_end);
      at = r.text_end;
      keeper.Keep(r.start, r.end, r.tid, domain, text);
    }
  });
  CPPROF_ASSIGN_OR_RETURN(nsys::NcclRankDecoder nccl, nsys::NcclRankDecoder::Open(db));
  nsys::PythonBacktraceDecoder backtraces;
  nsys::NvtxScanCallbacks callbacks;
  callbacks.range = [&](const nsys::NvtxRangeRow& r, const std::vector<std::string>& domain_names) {
    a.tally.Add(domain_names, r);
    if (r.ends_on_other_thread) {
      ++a.cross_thread;
      return;
    }
    classifier.Add(r.start, r.end, r.global_tid, domain_names.front(), r.text);
  };
  a.tally.payload_events = 0;  // counted below: ReadNvtxFacts need not look for them again
  callbacks.restart = [&] {
    const int64_t payloads = a.tally.payload_events;  // read once, before the restart: not again
    a.tally = {};
    a.tally.payload_events = payloads;
    a.cross_thread = 0;
    classifier.Restart();  // kept, the iteration marks and the warm-up range, in order
  };
  callbacks.payload = [&](const nsys::NvtxRangeRow& r) {
    if (r.event_type != nsys::kNvtxDomainCreate) ++a.tally.payload_events;
    if (tag_launches && backtraces.Add(r.start, r.global_tid, r.payload)) return;
    if (nccl.wanted()) nccl.Add(r.global_tid, r.payload);
  };
  CPPROF_ASSIGN_OR_RETURN(nsys::NvtxScan scan, nsys::ScanNvtx(db, nsys::OpenEnd::kLastRange, callbacks));
  classifier.Finish();  // every range classified (rethrows what the classifying thread threw)
  a.domains = std::move(scan.domains);
  a.tally.marks = std::move(scan.marks);
  a.tally.damaged_rows = scan.damaged_rows;
  a.nccl_ranks = nccl.ranks();
  a.distinct_names = static_cast<int64_t>(keeper.distinct_names());
  CPPROF_ASSIGN_OR_RETURN(out.python, backtraces.Finish(db));
  return OkStatus();
}

}  // namespace

StatusOr<Attribution> ReadAttribution(const nsys::Database& db, const analysis::ModuleConfig& config,
                                      const RE2* iteration_range, const std::string& iteration_pattern,
                                      Launches launches, const analysis::SourceReader& sources) {
  Attribution a;
  const bool tag_launches = launches != Launches::kNone;
  CPPROF_ASSIGN_OR_RETURN(std::set<int64_t> autograd, nsys::ReadAutogradThreads(db));
  a.has_autograd_threads = !autograd.empty();

  NvtxKept nvtx;
  std::vector<analysis::KeptRange>& kept = nvtx.kept;
  std::vector<std::string>& names = nvtx.names;
  if (db.HasTable(nsys::kNvtxTable) && db.HasTable("StringIds")) {
    a.has_nvtx = true;
    CPPROF_RETURN_IF_ERROR(ScanNvtxForAttribution(db, config, iteration_range, tag_launches, a, nvtx));
  } else {
    CPPROF_ASSIGN_OR_RETURN(a.nccl_ranks, nsys::ReadNcclRanks(db));
  }
  FindIterations(a, kept, names, iteration_range, iteration_pattern);
  AddBacktraceModules(nvtx.python, config, sources, a, kept, names);
  a.kept_ranges = static_cast<int64_t>(kept.size());
  // The replay predicts per iteration: without any, no call's time is kept.
  const bool host = launches == Launches::kTagAndHost && !a.iteration_marks.empty();
  if ((kept.empty() && autograd.empty() && !host) || !tag_launches) return a;

  CPPROF_RETURN_IF_ERROR(
      TagLaunches(db, config, std::move(kept), std::move(names), std::move(autograd), nvtx.shape_ops, host, a));
  return a;
}

}  // namespace cpprof::pipeline
