#include "pipeline/nvtx_reports.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/nvtx_projection.h"
#include "analysis/summary_stats.h"
#include "nsys/export_reader.h"
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
  return DurationSummaryTable(SummarizeGroups(std::move(keyed)), "Instances", {"Style", "Range"},
                              TieBreak::kKeys, {1, 0});
}

}  // namespace cpprof::pipeline

namespace cpprof::pipeline {

namespace {

// A launch is identified by (globalPid, correlationId): the key compares both, so two launches
// can never be merged by a hash collision. OpSpan: the span of the ops one launch started.
struct LaunchKey {
  int64_t global_pid, correlation;
  bool operator==(const LaunchKey&) const = default;
};
struct LaunchKeyHash {
  size_t operator()(const LaunchKey& k) const {
    return std::hash<int64_t>()(k.global_pid) ^ (std::hash<int64_t>()(k.correlation) * 0x9E3779B97F4A7C15ull);
  }
};
struct OpSpan {
  int64_t start, end;
};
using OpSpans = std::unordered_map<LaunchKey, OpSpan, LaunchKeyHash>;

StatusOr<OpSpans> ReadOpSpans(const nsys::Database& db) {
  OpSpans spans;
  for (const char* table : {nsys::kKernelTable, nsys::kMemcpyTable, nsys::kMemsetTable}) {
    if (!db.HasTable(table)) continue;
    CPPROF_ASSIGN_OR_RETURN(
        nsys::Statement st,
        db.Prepare(std::string("SELECT start, end, globalPid, correlationId FROM ") + table +
                       " WHERE correlationId IS NOT NULL",
                   "reading GPU ops"));
    while (st.Step()) {
      auto [it, inserted] = spans.try_emplace(LaunchKey{st.Int(2), st.Int(3)}, OpSpan{st.Int(0), st.Int(1)});
      if (!inserted) {
        it->second.start = std::min(it->second.start, st.Int(0));
        it->second.end = std::max(it->second.end, st.Int(1));
      }
    }
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  return spans;
}

}  // namespace

StatusOr<model::StatsTable> NvtxGpuProjSum(const nsys::Database& db) {
  model::StatsTable skipped;
  if (!db.HasTable("StringIds")) skipped.skipped = db.path() + " file does not contain StringIds table.";
  else if (!db.HasTable(nsys::kNvtxTable))
    skipped.skipped = db.path() + " does not contain NV Tools Extension (NVTX) data.";
  else if (!db.HasTable(nsys::kRuntimeTable)) skipped.skipped = db.path() + " does not contain CUDA API data.";
  else if (!db.HasTable(nsys::kKernelTable) && !db.HasTable(nsys::kMemcpyTable) && !db.HasTable(nsys::kMemsetTable))
    skipped.skipped = db.path() + " does not contain GPU operation data.";
  if (!skipped.skipped.empty()) return skipped;

  CPPROF_ASSIGN_OR_RETURN(nsys::NvtxDomains domains, nsys::NvtxDomains::Read(db));
  std::vector<analysis::NvtxRange> ranges;
  std::vector<std::pair<std::string, std::string>> keys;  // (range name, style) per range
  CPPROF_RETURN_IF_ERROR(nsys::ForEachNvtxRange(db, nsys::OpenEnd::kLastRange, [&](const nsys::NvtxRangeRow& r) {
    if (r.ends_on_other_thread) return;
    ranges.push_back({r.start, r.end, r.global_tid});
    keys.emplace_back(domains.NamesFor(r.domain_id, r.global_tid).front() + ":" + std::string(r.text),
                      Style(r.event_type));
  }));

  CPPROF_ASSIGN_OR_RETURN(auto spans, ReadOpSpans(db));
  std::vector<analysis::Launch> launches;
  {
    CPPROF_ASSIGN_OR_RETURN(
        nsys::Statement st,
        db.Prepare(std::string("SELECT start, end, globalTid, correlationId FROM ") + nsys::kRuntimeTable +
                       " WHERE correlationId IS NOT NULL",
                   "reading CUDA API calls"));
    while (st.Step()) {
      // The process of an API call: its globalTid without the thread bits (as nsys joins them).
      int64_t gpid = st.Int(2) & static_cast<int64_t>(0xFFFFFFFFFF000000ull);
      auto it = spans.find(LaunchKey{gpid, st.Int(3)});
      if (it == spans.end()) continue;
      launches.push_back({st.Int(2), st.Int(0), st.Int(1), it->second.start, it->second.end, st.Int(3)});
    }
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  spans = {};

  std::vector<analysis::RangeProjection> proj = analysis::ProjectRanges(ranges, launches);

  struct Group {
    model::ChunkedVector<int64_t> proj;
    int64_t range_time = 0, launches = 0, children = 0, level_sum = 0, levels = 0;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto& p = proj[i];
    if (!p.projected) continue;
    Group& g = groups[keys[i]];
    g.proj.push_back(p.proj_end - p.proj_start);
    g.range_time += ranges[i].end - ranges[i].start;
    g.launches += p.launches;
    g.children += p.children;
    if (p.level >= 0) g.level_sum += p.level, ++g.levels;
  }

  struct Row {
    const std::pair<std::string, std::string>* key;
    analysis::Summary s;
    const Group* g;
  };
  std::vector<Row> rows;
  std::vector<int64_t> scratch;
  for (auto& [key, g] : groups) rows.push_back({&key, analysis::Summarize(g.proj, scratch), &g});
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.s.total != b.s.total ? a.s.total > b.s.total : *a.key < *b.key;
  });
  auto avg = [](int64_t sum, int64_t n) {
    return n ? render::PyRound1(static_cast<double>(sum) / static_cast<double>(n)) : std::string();
  };
  model::StatsTable t;
  t.columns = {{"Range", false},   {"Style", false},           {"Total Proj Time (ns)"}, {"Total Range Time (ns)"},
               {"Range Instances"}, {"Proj Avg (ns)"},         {"Proj Med (ns)"},        {"Proj Min (ns)"},
               {"Proj Max (ns)"},   {"Proj StdDev (ns)"},      {"Total GPU Ops"},        {"Avg GPU Ops"},
               {"Avg Range Lvl"},   {"Avg Num Child"}};
  for (const Row& r : rows) {
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
