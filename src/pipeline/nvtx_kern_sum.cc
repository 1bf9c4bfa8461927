// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "pipeline/nvtx_kern_sum.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analysis/summary_stats.h"
#include "model/global_id.h"
#include "nsys/export_reader.h"
#include "nsys/launch_reader.h"
#include "nsys/nvtx_reader.h"
#include "pipeline/summary_table.h"
#include "render/pyformat.h"

namespace cpprof::pipeline {

namespace {

constexpr int64_t kNull = -1;  // a NULL key column (PID and TID without a launch; no range)

// Strings by id, one id per distinct text (groups are keyed by text, as nsys's GROUP BY is).
class Interner {
 public:
  int64_t Id(const std::string& s) {
    auto [it, added] = ids_.try_emplace(s, static_cast<int64_t>(texts_.size()));
    if (added) texts_.push_back(s);
    return it->second;
  }
  const std::string& Text(int64_t id) const { return texts_[static_cast<size_t>(id)]; }

 private:
  std::unordered_map<std::string, int64_t> ids_;
  std::vector<std::string> texts_;
};

// nsys's GROUP BY PID, TID, "NVTX Range", Style, "Kernel Name" (kNull for NULL).
struct Key {
  int64_t pid, tid, range, style, kernel;
  bool operator==(const Key& o) const {
    return std::tie(pid, tid, range, style, kernel) == std::tie(o.pid, o.tid, o.range, o.style, o.kernel);
  }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = std::hash<int64_t>()(k.pid);
    for (int64_t v : {k.tid, k.range, k.style, k.kernel}) h = h * 1000003u ^ std::hash<int64_t>()(v);
    return h;
  }
};

// A kernel's part of a group: how many of the group's ranges held its launch (1 for the group of
// no range).
struct Entry {
  int64_t kernel;  // unique over the exports read
  int64_t times;
};

struct Group {
  Key key;
  std::vector<Entry> entries;       // sorted by kernel (table order) before they are summarized
  int64_t ranges = 0;               // range instances that held a kernel of the group
  int64_t last_launch = INT64_MIN;  // start of the group's latest launch (of its thread's sweep)
};

struct Groups {
  Interner names;  // range names ("domain:text") and kernel names
  std::vector<Group> groups;
  std::unordered_map<Key, size_t, KeyHash> index;
  int64_t entries = 0;             // in all groups (bounded: max_entries)
  int64_t max_entries = 0;         // MaxEntries of the kernels read so far
  int64_t kernels_before = 0;      // kernels of the exports read before: ids unique over all
  std::vector<int64_t> durations;  // by kernel id
  int64_t damaged = 0;             // kernels with damaged times, left out
  int64_t damaged_ranges = 0;      // NVTX ranges with damaged times, left out

  Group& Of(const Key& k) {
    auto [it, added] = index.try_emplace(k, groups.size());
    if (added) groups.push_back({k, {}, 0, INT64_MIN});
    return groups[it->second];
  }
};

// A kernel costs an entry (16 bytes) per (range name, style) open at its launch: about the depth
// of its ranges (nested ranges of one name are one entry), but ranges that never close, each of a
// new name, make the entries grow with the square of the capture (as nsys's rows do). Past 32 a
// kernel on average (and 2^24 in all), or 2^27 (2 GB), the report is refused.
int64_t MaxEntries(int64_t kernels) { return std::min<int64_t>((int64_t{1} << 24) + 32 * kernels, int64_t{1} << 27); }

struct Kernel {
  int64_t duration;
  int64_t name;  // interned
  bool launched = false;
};

struct Launch {
  int64_t start, end, global_tid;
  uint32_t kernel;
};

struct Range {
  int64_t start, end;
  int64_t name;  // interned "domain:text"
  int64_t style;
  int64_t NameKey() const { return name << 2 | style; }
};

int64_t StyleIndex(int event_type) {
  if (event_type == nsys::kNvtxPushPop || event_type == nsys::kNvtxtPushPop) return 0;
  if (event_type == nsys::kNvtxStartEnd || event_type == nsys::kNvtxtStartEnd) return 1;
  return 2;
}
const char* StyleName(int64_t style) {
  static const char* const kNames[] = {"PushPop", "StartEnd", "Unknown"};
  return kNames[style];
}

// Why nsys skips the report on this export ("" when it does not), its table checks in order.
std::string SkipReason(const nsys::Database& db) {
  if (!db.HasTable("StringIds")) return db.path() + " file does not contain StringIds table.";
  if (!db.HasTable(nsys::kNvtxTable)) return db.path() + " does not contain NV Tools Extension (NVTX) data.";
  if (!db.HasTable(nsys::kKernelTable)) return db.path() + " does not contain CUDA kernel data.";
  if (!db.HasTable(nsys::kRuntimeTable)) return db.path() + " does not contain CUDA API data.";
  return "";
}

StatusOr<std::vector<Kernel>> ReadKernels(const nsys::Database& db, Groups& g,
                                          std::vector<std::tuple<int64_t, int64_t, uint32_t>>& by_launch) {
  nsys::ExportSchema schema;
  schema.kernel_name_column = "demangledName";
  nsys::StringTable strings(db);
  std::unordered_map<int64_t, int64_t> name_of;  // StringIds id -> interned
  std::vector<Kernel> kernels;
  CPPROF_RETURN_IF_ERROR(nsys::ForEachKernel(db, schema, [&](const nsys::KernelRow& k) {
    if (!k.valid_times) {  // left out as report leaves it out, and said
      ++g.damaged;
      return;
    }
    auto [it, added] = name_of.try_emplace(k.name_id, 0);
    if (added) it->second = g.names.Id(strings.Get(k.name_id));
    if (k.has_correlation) by_launch.emplace_back(k.global_pid, k.correlation, static_cast<uint32_t>(kernels.size()));
    kernels.push_back({k.end - k.start, it->second});
    g.durations.push_back(k.end - k.start);
  }));
  CPPROF_RETURN_IF_ERROR(strings.status());
  std::sort(by_launch.begin(), by_launch.end());
  return kernels;
}

// The launches of the kernels: a kernel launched by one call per runtime row of its process
// with its correlation id (nsys's LEFT JOIN keeps each).
StatusOr<std::vector<Launch>> ReadLaunches(const nsys::Database& db, std::vector<Kernel>& kernels,
                                           const std::vector<std::tuple<int64_t, int64_t, uint32_t>>& by_launch) {
  std::vector<Launch> launches;
  CPPROF_ASSIGN_OR_RETURN(nsys::ApiCallCursor calls, nsys::ApiCallCursor::Open(db, false, true));
  while (calls.Next()) {
    const nsys::ApiCallRow& c = calls.row();
    if (!c.has_correlation) continue;
    const int64_t pid = nsys::ProcessOfThread(c.global_tid);
    auto it = std::lower_bound(by_launch.begin(), by_launch.end(), std::make_tuple(pid, c.correlation, uint32_t{0}));
    for (; it != by_launch.end() && std::get<0>(*it) == pid && std::get<1>(*it) == c.correlation; ++it) {
      kernels[std::get<2>(*it)].launched = true;
      launches.push_back({c.start, c.end, c.global_tid, std::get<2>(*it)});
    }
  }
  CPPROF_RETURN_IF_ERROR(calls.status());
  return launches;
}

// The ranges by thread: push/pop and start/end ranges not ended on another thread, named
// "domain:text" (a range of a domain created on several threads once per name, as nsys's join
// lists it), open ones ending at the last range timestamp.
StatusOr<std::unordered_map<int64_t, std::vector<Range>>> ReadRanges(const nsys::Database& db, Groups& g) {
  CPPROF_ASSIGN_OR_RETURN(nsys::NvtxDomains domains, nsys::NvtxDomains::Read(db));
  std::unordered_map<int64_t, std::vector<Range>> by_thread;
  std::string name;
  CPPROF_RETURN_IF_ERROR(nsys::ForEachNvtxRange(
      db, nsys::OpenEnd::kLastRange,
      [&](const nsys::NvtxRangeRow& r) {
        if (r.ends_on_other_thread) return;
        for (const std::string& domain : domains.NamesFor(r.domain_id, r.global_tid)) {
          name.assign(domain).append(":").append(r.text);
          by_thread[r.global_tid].push_back({r.start, r.end, g.names.Id(name), StyleIndex(r.event_type)});
        }
      },
      &g.damaged_ranges));
  return by_thread;
}

// The active ranges of one (name, style) in a thread's sweep.
struct NameState {
  int64_t count = 0;
  std::vector<int64_t> starts;  // ascending (ranges come in start order)
  size_t live_at = 0;           // its index in ThreadSweep::live while count > 0
};

// One thread's launches against its ranges, by start: the ranges open at a launch are kept by
// end, with a count per (name, style), so that a launch costs the names open at it (not the
// ranges: a thousand unclosed pushes of one name are one count).
class ThreadSweep {
 public:
  ThreadSweep(int64_t global_tid, const std::vector<Kernel>& kernels, Groups& g)
      : gtid_(global_tid), kernels_(kernels), g_(g) {}

  void Run(std::vector<Launch*>& launches, std::vector<Range>* ranges) {
    std::sort(launches.begin(), launches.end(), [](const Launch* a, const Launch* b) { return a->start < b->start; });
    if (ranges) {
      std::stable_sort(ranges->begin(), ranges->end(),
                       [](const Range& a, const Range& b) { return a.start < b.start; });
    }
    size_t next = 0;
    for (const Launch* l : launches) {
      if (g_.entries > g_.max_entries) return;  // refused by the caller
      for (; ranges && next < ranges->size() && (*ranges)[next].start <= l->start; ++next) Open((*ranges)[next]);
      while (!open_.empty() && open_.begin()->first < l->start) Close(*open_.begin()->second);
      Place(*l);
    }
  }

 private:
  void Open(const Range& r) {
    open_.insert({r.end, &r});
    NameState& n = names_[r.NameKey()];
    if (n.count++ == 0) n.live_at = live_.size(), live_.push_back(r.NameKey());
    n.starts.push_back(r.start);
  }
  void Close(const Range& r) {
    open_.erase(open_.begin());
    NameState& n = names_[r.NameKey()];
    n.starts.erase(std::find(n.starts.rbegin(), n.starts.rend(), r.start).base() - 1);
    if (--n.count == 0) {  // out of the live list: the last one takes its place
      names_[live_.back()].live_at = n.live_at;
      live_[n.live_at] = live_.back();
      live_.pop_back();
    }
  }
  // Open ranges of `key` that started after `after`.
  int64_t StartedAfter(const NameState& n, int64_t after) const {
    return n.starts.end() - std::upper_bound(n.starts.begin(), n.starts.end(), after);
  }

  void Place(const Launch& l) {
    // Open ranges that end inside the launch call do not hold it (rare: start/end ranges).
    partial_.clear();
    for (auto it = open_.lower_bound({l.start, nullptr}); it != open_.end() && it->first < l.end; ++it) {
      partial_.push_back(it->second);
    }
    const Kernel& k = kernels_[l.kernel];
    const int64_t kernel = g_.kernels_before + l.kernel;
    bool held = false;
    for (int64_t key : live_) {
      const NameState& n = names_[key];
      int64_t times = n.count;
      Group& grp = g_.Of({model::PidOf(gtid_), model::TidOf(gtid_), key >> 2, key & 3, k.name});
      // The ranges that held the group's previous launch hold this one too if still open: new
      // instances are those opened since.
      int64_t fresh = StartedAfter(n, grp.last_launch);
      for (const Range* p : partial_) {
        if (p->NameKey() != key) continue;
        --times;
        if (p->start > grp.last_launch) --fresh;
      }
      if (times == 0) continue;
      held = true;
      grp.entries.push_back({kernel, times});
      ++g_.entries;
      grp.ranges += fresh;
      grp.last_launch = l.start;
    }
    if (!held) {
      g_.Of({model::PidOf(gtid_), model::TidOf(gtid_), kNull, kNull, k.name}).entries.push_back({kernel, 1});
    }
  }

  const int64_t gtid_;
  const std::vector<Kernel>& kernels_;
  Groups& g_;
  std::multiset<std::pair<int64_t, const Range*>> open_;  // by end
  std::unordered_map<int64_t, NameState> names_;          // by Range::NameKey
  std::vector<int64_t> live_;                             // the keys with open ranges
  std::vector<const Range*> partial_;
};

Status AddExport(const nsys::Database& db, Groups& g) {
  std::vector<std::tuple<int64_t, int64_t, uint32_t>> by_launch;  // (globalPid, correlationId, kernel)
  CPPROF_ASSIGN_OR_RETURN(std::vector<Kernel> kernels, ReadKernels(db, g, by_launch));
  CPPROF_ASSIGN_OR_RETURN(std::vector<Launch> launches, ReadLaunches(db, kernels, by_launch));
  std::vector<std::tuple<int64_t, int64_t, uint32_t>>().swap(by_launch);
  CPPROF_ASSIGN_OR_RETURN(auto ranges, ReadRanges(db, g));
  g.max_entries = MaxEntries(static_cast<int64_t>(g.durations.size()));
  std::map<int64_t, std::vector<Launch*>> launches_of;  // by thread
  for (Launch& l : launches) launches_of[l.global_tid].push_back(&l);
  for (auto& [tid, mine] : launches_of) {
    auto r = ranges.find(tid);
    ThreadSweep(tid, kernels, g).Run(mine, r == ranges.end() ? nullptr : &r->second);
    if (g.entries > g.max_entries) {
      return Error(
          ExitCode::kError,
          fmt::format("nvtx_kern_sum: on thread {} of {}, kernels are launched inside open NVTX ranges of "
                      "so many names at once that their (range, kernel) pairs pass {} ({} kernels): ranges "
                      "that never close (a push without its pop, each of a new name) do this. Close them "
                      "in the workload, or use nvtx_gpu_proj_sum (each range's GPU time, linear in the ranges)",
                      model::TidOf(tid), db.path(), g.max_entries, g.durations.size()));
    }
  }
  for (uint32_t k = 0; k < kernels.size(); ++k) {
    if (!kernels[k].launched)
      g.Of({kNull, kNull, kNull, kNull, kernels[k].name}).entries.push_back({g.kernels_before + k, 1});
  }
  g.kernels_before += static_cast<int64_t>(kernels.size());
  return OkStatus();
}

struct Row {
  const Group* group;
  analysis::Summary s;
  int64_t kernels;  // distinct
};

// The group's statistics as nsys's join gives its rows: each kernel's duration once per range that
// held it, kernels in table order.
Row Summarize(Group& grp, const std::vector<int64_t>& durations) {
  std::stable_sort(grp.entries.begin(), grp.entries.end(),
                   [](const Entry& a, const Entry& b) { return a.kernel < b.kernel; });
  std::vector<std::pair<int64_t, int64_t>> value_times;
  value_times.reserve(grp.entries.size());
  int64_t kernels = 0, last = -1;
  for (const Entry& e : grp.entries) {
    value_times.push_back({durations[static_cast<size_t>(e.kernel)], e.times});
    if (e.kernel != last) ++kernels, last = e.kernel;
  }
  std::vector<Entry>().swap(grp.entries);
  return {&grp, analysis::SummarizeRepeated(value_times), kernels};
}

// ORDER BY "NVTX Range", PID, TID, "Total Time" DESC, NULLs first; ties in GROUP BY order
// (PID, TID, range, style, kernel name).
bool RowBefore(const Row& a, const Row& b, const Interner& names) {
  const Key& x = a.group->key;
  const Key& y = b.group->key;
  auto text_less = [&](int64_t p, int64_t q) -> int {  // -1, 0, 1 with NULL first
    if (p == q) return 0;
    if (p == kNull) return -1;
    if (q == kNull) return 1;
    const int c = names.Text(p).compare(names.Text(q));
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  };
  if (int c = text_less(x.range, y.range)) return c < 0;
  if (x.pid != y.pid) return x.pid < y.pid;
  if (x.tid != y.tid) return x.tid < y.tid;
  if (a.s.total != b.s.total) return a.s.total > b.s.total;
  if (x.style != y.style) return x.style < y.style;
  return text_less(x.kernel, y.kernel) < 0;
}

std::string OrEmpty(int64_t v) { return v == kNull ? std::string() : std::to_string(v); }

}  // namespace

StatusOr<model::StatsTable> NvtxKernSum(std::span<const nsys::Database> dbs) {
  Groups g;
  std::string reasons;
  bool any = false;
  for (const nsys::Database& db : dbs) {
    std::string why = SkipReason(db);
    if (!why.empty()) {
      reasons += (reasons.empty() ? "" : "\n") + why;
      continue;
    }
    any = true;
    CPPROF_RETURN_IF_ERROR(AddExport(db, g));
  }
  model::StatsTable t;
  if (!any) {
    t.skipped = reasons;
    return t;
  }
  std::vector<Row> rows;
  rows.reserve(g.groups.size());
  for (Group& grp : g.groups) rows.push_back(Summarize(grp, g.durations));
  std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) { return RowBefore(a, b, g.names); });
  t.columns = {{"NVTX Range", false}, {"Style", false}, {"PID"},      {"TID"},      {"NVTX Inst"}, {"Kern Inst"},
               {"Total Time (ns)"},   {"Avg (ns)"},     {"Med (ns)"}, {"Min (ns)"}, {"Max (ns)"},  {"StdDev (ns)"},
               {"Kernel Name", false}};
  NoteDamaged(g.damaged, "kernels", t);
  NoteDamaged(g.damaged_ranges, "NVTX ranges", t);
  for (const Row& r : rows) {
    const Key& k = r.group->key;
    t.rows.push_back({k.range == kNull ? "" : g.names.Text(k.range), k.style == kNull ? "" : StyleName(k.style),
                      OrEmpty(k.pid), OrEmpty(k.tid), std::to_string(r.group->ranges), std::to_string(r.kernels),
                      std::to_string(r.s.total), render::PyRound1(r.s.mean), render::PyRound1(r.s.median),
                      std::to_string(r.s.min), std::to_string(r.s.max), render::PyRound1(r.s.stdev),
                      g.names.Text(k.kernel)});
  }
  return t;
}

}  // namespace cpprof::pipeline
