#include "pipeline/nvtx_kern_sum.h"

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

struct Group {
  Key key;
  std::vector<int64_t> durations;  // one per (range instance, kernel) pair, kernels in table order
  std::vector<int64_t> ranges;     // the range instances (distinct once sorted)
  int64_t kernels = 0;             // distinct kernels
  int64_t last_kernel = -1;
};

struct Groups {
  Interner names;  // range names ("domain:text") and kernel names
  std::vector<Group> groups;
  std::unordered_map<Key, size_t, KeyHash> index;
  int64_t kernels_before = 0;  // kernels of the exports read before: ids unique over all
  int64_t ranges_before = 0;

  Group& Of(const Key& k) {
    auto [it, added] = index.try_emplace(k, groups.size());
    if (added) groups.push_back({k, {}, {}, 0, -1});
    return groups[it->second];
  }
};

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
  int64_t id;  // unique over the exports read
};

// One (kernel, range) pair of the join; range kNull: no range holds the launch; global_tid kNull:
// no launch.
struct Pair {
  uint32_t kernel;
  int64_t global_tid;
  const Range* range;
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
    auto [it, added] = name_of.try_emplace(k.name_id, 0);
    if (added) it->second = g.names.Id(strings.Get(k.name_id));
    if (k.has_correlation) by_launch.emplace_back(k.global_pid, k.correlation, static_cast<uint32_t>(kernels.size()));
    kernels.push_back({k.end - k.start, it->second});
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
  CPPROF_RETURN_IF_ERROR(nsys::ForEachNvtxRange(db, nsys::OpenEnd::kLastRange, [&](const nsys::NvtxRangeRow& r) {
    if (r.ends_on_other_thread) return;
    for (const std::string& domain : domains.NamesFor(r.domain_id, r.global_tid)) {
      name.assign(domain).append(":").append(r.text);
      by_thread[r.global_tid].push_back({r.start, r.end, g.names.Id(name), StyleIndex(r.event_type),
                                         g.ranges_before + r.rowid});
    }
  }));
  return by_thread;
}

// The pairs of one thread: each launch with every range that holds it (a sweep by start; the ranges
// still open at a launch are few, the stack of its pushes).
void PairThread(std::vector<Launch*>& launches, std::vector<Range>* ranges, std::vector<Pair>& out) {
  std::sort(launches.begin(), launches.end(), [](const Launch* a, const Launch* b) { return a->start < b->start; });
  if (ranges) {
    std::stable_sort(ranges->begin(), ranges->end(), [](const Range& a, const Range& b) { return a.start < b.start; });
  }
  std::multiset<std::pair<int64_t, const Range*>> open;  // by end
  size_t next = 0;
  for (const Launch* l : launches) {
    while (ranges && next < ranges->size() && (*ranges)[next].start <= l->start) {
      open.insert({(*ranges)[next].end, &(*ranges)[next]});
      ++next;
    }
    while (!open.empty() && open.begin()->first < l->start) open.erase(open.begin());
    bool held = false;
    for (auto it = open.lower_bound({l->end, nullptr}); it != open.end(); ++it) {
      out.push_back({l->kernel, l->global_tid, it->second});
      held = true;
    }
    if (!held) out.push_back({l->kernel, l->global_tid, nullptr});
  }
}

Status AddExport(const nsys::Database& db, Groups& g) {
  std::vector<std::tuple<int64_t, int64_t, uint32_t>> by_launch;  // (globalPid, correlationId, kernel)
  CPPROF_ASSIGN_OR_RETURN(std::vector<Kernel> kernels, ReadKernels(db, g, by_launch));
  CPPROF_ASSIGN_OR_RETURN(std::vector<Launch> launches, ReadLaunches(db, kernels, by_launch));
  std::vector<std::tuple<int64_t, int64_t, uint32_t>>().swap(by_launch);
  CPPROF_ASSIGN_OR_RETURN(auto ranges, ReadRanges(db, g));
  std::map<int64_t, std::vector<Launch*>> launches_of;  // by thread
  for (Launch& l : launches) launches_of[l.global_tid].push_back(&l);
  std::vector<Pair> pairs;
  for (auto& [tid, mine] : launches_of) {
    auto r = ranges.find(tid);
    PairThread(mine, r == ranges.end() ? nullptr : &r->second, pairs);
  }
  for (uint32_t k = 0; k < kernels.size(); ++k) {
    if (!kernels[k].launched) pairs.push_back({k, kNull, nullptr});
  }
  // nsys's join gives a kernel's rows together, kernels in table order: the order the durations
  // are summarized in.
  std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.kernel < b.kernel; });
  for (const Pair& p : pairs) {
    const Kernel& k = kernels[p.kernel];
    const bool launched = p.global_tid != kNull;
    Group& grp = g.Of({launched ? model::PidOf(p.global_tid) : kNull, launched ? model::TidOf(p.global_tid) : kNull,
                       p.range ? p.range->name : kNull, p.range ? p.range->style : kNull, k.name});
    grp.durations.push_back(k.duration);
    if (p.range) grp.ranges.push_back(p.range->id);
    const int64_t id = g.kernels_before + p.kernel;
    if (grp.last_kernel != id) ++grp.kernels, grp.last_kernel = id;
  }
  g.kernels_before += static_cast<int64_t>(kernels.size());
  // Past every rowid of this export (rowids are positive and below 2^63 / exports).
  int64_t max_id = g.ranges_before;
  for (const auto& [tid, rs] : ranges) {
    for (const Range& r : rs) max_id = std::max(max_id, r.id);
  }
  g.ranges_before = max_id + 1;
  return OkStatus();
}

struct Row {
  const Group* group;
  analysis::Summary s;
};

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
  for (Group& grp : g.groups) {
    std::sort(grp.ranges.begin(), grp.ranges.end());
    grp.ranges.erase(std::unique(grp.ranges.begin(), grp.ranges.end()), grp.ranges.end());
    rows.push_back({&grp, analysis::Summarize(grp.durations)});
  }
  std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) { return RowBefore(a, b, g.names); });
  t.columns = {{"NVTX Range", false},   {"Style", false},    {"PID"},      {"TID"},      {"NVTX Inst"},
               {"Kern Inst"},           {"Total Time (ns)"}, {"Avg (ns)"}, {"Med (ns)"}, {"Min (ns)"},
               {"Max (ns)"},            {"StdDev (ns)"},     {"Kernel Name", false}};
  for (const Row& r : rows) {
    const Key& k = r.group->key;
    t.rows.push_back({k.range == kNull ? "" : g.names.Text(k.range), k.style == kNull ? "" : StyleName(k.style),
                      OrEmpty(k.pid), OrEmpty(k.tid), std::to_string(r.group->ranges.size()),
                      std::to_string(r.group->kernels), std::to_string(r.s.total), render::PyRound1(r.s.mean),
                      render::PyRound1(r.s.median), std::to_string(r.s.min), std::to_string(r.s.max),
                      render::PyRound1(r.s.stdev), g.names.Text(k.kernel)});
  }
  return t;
}

}  // namespace cpprof::pipeline
