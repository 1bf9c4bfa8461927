#include "pipeline/nvtx_reports.h"

#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>

#include "analysis/nvtx_projection.h"
#include "analysis/summary_stats.h"
#include "model/global_id.h"
#include "nsys/export_reader.h"
#include "nsys/launch_reader.h"
#include "nsys/nvtx_reader.h"
#include "pipeline/summary_table.h"
#include "render/pyformat.h"

namespace cpprof::pipeline {

namespace {

const char* Style(int event_type) {
  switch (event_type) {
    case nsys::kNvtxPushPop:
    case nsys::kNvtxtPushPop:
      return "PushPop";
    case nsys::kNvtxStartEnd:
    case nsys::kNvtxtStartEnd:
      return "StartEnd";
    default:
      return "Unknown";
  }
}

}  // namespace

StatusOr<model::StatsTable> NvtxSum(const nsys::Database& db) {
  if (!db.HasTable("StringIds")) {
    model::StatsTable t;
    t.skipped = db.path() + " file does not contain StringIds table.";
    return t;
  }
  if (!db.HasTable(nsys::kNvtxTable)) {
    model::StatsTable t;
    t.skipped = db.path() + " does not contain NV Tools Extension (NVTX) data.";
    return t;
  }
  CPPROF_ASSIGN_OR_RETURN(nsys::NvtxDomains domains, nsys::NvtxDomains::Read(db));
  // Groups keyed by (range name, style); std::map keeps keys sorted for the tie-break.
  std::map<std::pair<std::string, std::string>, model::ChunkedVector<int64_t>> groups;
  std::string tag;
  CPPROF_RETURN_IF_ERROR(nsys::ForEachNvtxRange(db, nsys::OpenEnd::kLastNvtxEvent, [&](const nsys::NvtxRangeRow& r) {
    for (const auto& domain : domains.NamesFor(r.domain_id, r.global_tid)) {
      tag.assign(domain).append(":").append(r.text);
      groups[{tag, Style(r.event_type)}].push_back(r.end - r.start);
    }
  }));
  std::vector<KeyedValues> keyed;
  keyed.reserve(groups.size());
  for (auto& [key, values] : groups) keyed.push_back({{key.second, key.first}, std::move(values)});
  // nsys groups by (range, style): ties are ordered by range, then style.
  return DurationSummaryTable(SummarizeGroups(std::move(keyed)), "Instances", {"Style", "Range"}, TieBreak::kKeys,
                              {1, 0});
}

}  // namespace cpprof::pipeline

namespace cpprof::pipeline {

namespace {

// A group of ranges as the sweep keys them: (domainId, process, text, style); named at the end,
// when every domain is known.
struct SweepGroup {
  int64_t domain_id, global_tid;
  std::string_view text;  // into the group's key, which the sweep keeps
  const char* style;
};

struct ProjectedValue {
  uint64_t seq;  // rowid: the statistics are taken in table order, as nsys takes them
  int64_t proj;
};

struct GroupTotals {
  std::vector<ProjectedValue> proj;  // a plain vector: most groups (autograd's per-op texts) hold one or two
  int64_t range_time = 0, launches = 0, children = 0, level_sum = 0, levels = 0;
};

enum class SweepResult { kDone, kNeedOpenEnd, kNeedSort };

// How far out of time order API calls may come and still be placed without sorting the table.
constexpr int64_t kCallReorderNs = 50'000'000;

struct PendingCall {
  int64_t start;
  uint64_t arrival;  // table order among calls of one start
  int64_t end, global_tid, correlation;
  bool operator>(const PendingCall& o) const { return start != o.start ? start > o.start : arrival > o.arrival; }
};

struct Sweep {
  std::unordered_map<std::string, uint32_t> group_index;  // keys hold the texts
  std::vector<SweepGroup> groups;
  std::vector<GroupTotals> totals;
  nsys::NvtxDomains domains;
};

// One merge of the NVTX ranges and the CUDA API calls by start, fed to the projector.
// `split_default_domain`: key ranges of the default domain by process too (needed only when some
// process created a domain with id 0, which names them).
StatusOr<SweepResult> RunSweep(const nsys::Database& db, analysis::LaunchSpans& spans, bool by_start,
                               std::optional<int64_t> open_end, bool split_default_domain, Sweep& sweep) {
  nsys::NvtxRangeCursor::Options options;
  options.by_start = by_start;
  options.open_end = open_end;
  CPPROF_ASSIGN_OR_RETURN(nsys::NvtxRangeCursor nvtx, nsys::NvtxRangeCursor::Open(db, options));
  CPPROF_ASSIGN_OR_RETURN(nsys::ApiCallCursor calls, nsys::ApiCallCursor::Open(db, by_start, true));
  std::string key;
  analysis::NvtxProjector projector([&](const analysis::ClosedRange& c) {
    if (!c.proj.projected) return;
    GroupTotals& g = sweep.totals[c.group];
    g.proj.push_back({c.seq, c.proj.proj_end - c.proj.proj_start});
    g.range_time += c.end - c.start;
    g.launches += c.proj.launches;
    g.children += c.proj.children;
    if (c.proj.level >= 0) g.level_sum += c.proj.level, ++g.levels;
  });
  auto add_range = [&](const nsys::NvtxRangeRow& r) {
    if (r.ends_on_other_thread) return;
    const char* style = Style(r.event_type);
    int64_t process = model::GlobalPidOf(r.global_tid);
    // (domain, process, style, text); ranges of the default domain are named ":text" in every
    // process, so one key serves them all.
    if (r.domain_id == 0 && !split_default_domain) process = 0;
    key.assign(reinterpret_cast<const char*>(&r.domain_id), sizeof r.domain_id);
    key.append(reinterpret_cast<const char*>(&process), sizeof process);
    key.append(style).append(1, '\0');
    const size_t prefix = key.size();
    key.append(r.text);
    auto [it, inserted] = sweep.group_index.try_emplace(key, static_cast<uint32_t>(sweep.groups.size()));
    if (inserted) {
      sweep.groups.push_back({r.domain_id, r.global_tid, std::string_view(it->first).substr(prefix), style});
      sweep.totals.emplace_back();
    }
    projector.Range(r.global_tid, r.start, r.end, it->second, static_cast<uint64_t>(r.rowid));
  };
  auto add_call = [&](const PendingCall& c) {
    int64_t op_start, op_end;
    if (spans.Find(model::GlobalPidOf(c.global_tid), c.correlation, &op_start, &op_end)) {
      projector.Launch(c.global_tid, c.start, c.end, c.correlation, op_start, op_end);
    }
  };
  // API calls pass through a small reorder buffer (kCallReorderNs of calls by start): an export
  // whose calls are a little out of time order needs no sorted second pass. One that comes in
  // later than that is read again sorted.
  std::priority_queue<PendingCall, std::vector<PendingCall>, std::greater<>> pending;
  int64_t latest_call = INT64_MIN, released = INT64_MIN;
  uint64_t arrival = 0;
  bool more_nvtx = nvtx.Next(), more_calls = calls.Next();
  while (true) {
    while (more_calls && (pending.empty() || pending.top().start > latest_call - kCallReorderNs)) {
      const nsys::ApiCallRow& c = calls.row();
      if (c.start < released) return SweepResult::kNeedSort;
      latest_call = std::max(latest_call, c.start);
      pending.push({c.start, arrival++, c.end, c.global_tid, c.correlation});
      more_calls = calls.Next();
    }
    if (!more_nvtx && pending.empty()) break;
    // At equal times a range opens before a call is placed in it.
    if (more_nvtx && (pending.empty() || nvtx.row().start <= pending.top().start)) {
      add_range(nvtx.row());
      more_nvtx = nvtx.Next();
    } else {
      released = pending.top().start;
      add_call(pending.top());
      pending.pop();
    }
    if (!projector.in_order()) return SweepResult::kNeedSort;
  }
  CPPROF_RETURN_IF_ERROR(nvtx.status());
  CPPROF_RETURN_IF_ERROR(calls.status());
  if (nvtx.saw_open()) return SweepResult::kNeedOpenEnd;
  projector.Finish();
  sweep.domains = nvtx.domains();
  return SweepResult::kDone;
}

}  // namespace

StatusOr<model::StatsTable> NvtxGpuProjSum(const nsys::Database& db) {
  model::StatsTable skipped;
  if (!db.HasTable("StringIds"))
    skipped.skipped = db.path() + " file does not contain StringIds table.";
  else if (!db.HasTable(nsys::kNvtxTable))
    skipped.skipped = db.path() + " does not contain NV Tools Extension (NVTX) data.";
  else if (!db.HasTable(nsys::kRuntimeTable))
    skipped.skipped = db.path() + " does not contain CUDA API data.";
  else if (!db.HasTable(nsys::kKernelTable) && !db.HasTable(nsys::kMemcpyTable) && !db.HasTable(nsys::kMemsetTable))
    skipped.skipped = db.path() + " does not contain GPU operation data.";
  if (!skipped.skipped.empty()) return skipped;

  // The span of each launch's ops: 16 bytes per launch, allocated once.
  analysis::LaunchSpans spans;
  int64_t rows = 0;
  for (const char* t : {nsys::kKernelTable, nsys::kMemcpyTable, nsys::kMemsetTable}) {
    CPPROF_ASSIGN_OR_RETURN(int64_t n, nsys::RowsUpperBound(db, t));
    rows += n;
  }
  spans.Reserve(static_cast<size_t>(rows));
  CPPROF_RETURN_IF_ERROR(nsys::ForEachOpLaunch(
      db, [&](int64_t gpid, int64_t corr, int64_t start, int64_t end) { spans.Add(gpid, corr, start, end); }));
  spans.Finish();

  // One sweep in table order (exports list NVTX ranges and API calls by start); again sorted by
  // SQLite if they are not, or with the end of open ranges if some range never ended.
  Sweep sweep;
  bool by_start = false, split_default = false;
  std::optional<int64_t> open_end;
  for (int attempt = 0;; ++attempt) {
    sweep = Sweep{};
    CPPROF_ASSIGN_OR_RETURN(SweepResult result, RunSweep(db, spans, by_start, open_end, split_default, sweep));
    if (result == SweepResult::kDone && !split_default && sweep.domains.HasDomain(0)) {
      split_default = true;  // a process named domain 0: its ranges are not ":text"
      continue;
    }
    if (result == SweepResult::kDone) break;
    if (attempt == 3) return Error(ExitCode::kError, "nvtx_gpu_proj_sum: the NVTX sweep did not settle");
    if (result == SweepResult::kNeedSort) by_start = true;
    if (result == SweepResult::kNeedOpenEnd) {
      CPPROF_ASSIGN_OR_RETURN(int64_t end, nsys::LastNvtxTimestamp(db, nsys::OpenEnd::kLastRange));
      open_end = end;
    }
  }
  spans = {};

  // Named groups: (range name, style); groups of other processes or domain ids with the same
  // name are one.
  struct Group {
    std::vector<const GroupTotals*> parts;
    int64_t range_time = 0, launches = 0, children = 0, level_sum = 0, levels = 0;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;
  for (size_t i = 0; i < sweep.groups.size(); ++i) {
    const SweepGroup& sg = sweep.groups[i];
    const GroupTotals& t = sweep.totals[i];
    if (t.proj.empty()) continue;
    Group& g =
        groups[{sweep.domains.NamesFor(sg.domain_id, sg.global_tid).front() + ":" + std::string(sg.text), sg.style}];
    g.parts.push_back(&t);
    g.range_time += t.range_time;
    g.launches += t.launches;
    g.children += t.children;
    g.level_sum += t.level_sum;
    g.levels += t.levels;
  }

  struct Row {
    const std::pair<std::string, std::string>* key;
    analysis::Summary s;
    const Group* g;
  };
  std::vector<Row> rows_out;
  std::vector<ProjectedValue> ordered;
  std::vector<int64_t> values;
  for (auto& [key, g] : groups) {
    ordered.clear();
    for (const GroupTotals* part : g.parts) {
      ordered.insert(ordered.end(), part->proj.begin(), part->proj.end());
    }
    std::sort(ordered.begin(), ordered.end(),
              [](const ProjectedValue& a, const ProjectedValue& b) { return a.seq < b.seq; });
    values.clear();
    for (const ProjectedValue& v : ordered) values.push_back(v.proj);
    rows_out.push_back({&key, analysis::Summarize(values), &g});
  }
  std::sort(rows_out.begin(), rows_out.end(), [](const Row& a, const Row& b) {
    return a.s.total != b.s.total ? a.s.total > b.s.total : *a.key < *b.key;
  });
  auto avg = [](int64_t sum, int64_t n) {
    return n ? render::PyRound1(static_cast<double>(sum) / static_cast<double>(n)) : std::string();
  };
  model::StatsTable t;
  t.columns = {{"Range", false},    {"Style", false},     {"Total Proj Time (ns)"}, {"Total Range Time (ns)"},
               {"Range Instances"}, {"Proj Avg (ns)"},    {"Proj Med (ns)"},        {"Proj Min (ns)"},
               {"Proj Max (ns)"},   {"Proj StdDev (ns)"}, {"Total GPU Ops"},        {"Avg GPU Ops"},
               {"Avg Range Lvl"},   {"Avg Num Child"}};
  for (const Row& r : rows_out) {
    const Group& g = *r.g;
    t.rows.push_back({r.key->first, r.key->second, std::to_string(r.s.total), std::to_string(g.range_time),
                      std::to_string(r.s.count), render::PyRound1(r.s.mean), render::PyRound1(r.s.median),
                      std::to_string(r.s.min), std::to_string(r.s.max), render::PyRound1(r.s.stdev),
                      std::to_string(g.launches), avg(g.launches, r.s.count), avg(g.level_sum, g.levels),
                      avg(g.children, r.s.count)});
  }
  return t;
}

}  // namespace cpprof::pipeline
