#include "pipeline/nvtx_reports.h"

#include <map>

#include "nsys/export_reader.h"
#include "nsys/nvtx_reader.h"
#include "pipeline/summary_table.h"

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
  CPPROF_RETURN_IF_ERROR(nsys::ForEachNvtxRange(db, [&](const nsys::NvtxRangeRow& r) {
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
