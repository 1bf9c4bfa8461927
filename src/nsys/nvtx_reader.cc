#include "nsys/nvtx_reader.h"

#include <fmt/format.h>

#include <set>

#include "nsys/export_reader.h"

namespace cpprof::nsys {

namespace {
constexpr int64_t kPidMask = 0x0000FFFFFF000000;
}

StatusOr<NvtxDomains> NvtxDomains::Read(const Database& db) {
  NvtxDomains d;
  // The first create event (by start) of each (domainId, globalTid) names it.
  CPPROF_ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(fmt::format("SELECT ne.domainId, ne.globalTid, coalesce(sid.value, ne.text) FROM {} AS ne "
                             "LEFT JOIN StringIds AS sid ON ne.textId == sid.id WHERE ne.eventType == {} "
                             "ORDER BY ne.domainId, ne.globalTid, ne.start",
                             kNvtxTable, kNvtxDomainCreate),
                 "reading NVTX domains"));
  int64_t last_domain = -1, last_tid = -1;
  bool any = false;
  while (st.Step()) {
    int64_t domain = st.Int(0), tid = st.Int(1);
    if (any && domain == last_domain && tid == last_tid) continue;
    any = true;
    last_domain = domain, last_tid = tid;
    d.names_[{domain, tid & kPidMask}].emplace_back(st.Text(2));
  }
  CPPROF_RETURN_IF_ERROR(st.status());
  return d;
}

std::vector<std::string> NvtxDomains::AllNames() const {
  std::set<std::string> all;
  for (const auto& [key, names] : names_) all.insert(names.begin(), names.end());
  return {all.begin(), all.end()};
}

const std::vector<std::string>& NvtxDomains::NamesFor(int64_t domain_id, int64_t global_tid) const {
  auto it = names_.find({domain_id, global_tid & kPidMask});
  return it == names_.end() ? none_ : it->second;
}

Status ForEachNvtxRange(const Database& db, OpenEnd open_end, const std::function<void(const NvtxRangeRow&)>& fn) {
  std::string ranges_only = fmt::format("eventType IN ({}, {}, {}, {})", kNvtxPushPop, kNvtxStartEnd,
                                        kNvtxtPushPop, kNvtxtStartEnd);
  // Ranges still open when the capture ended get the last NVTX timestamp of the export.
  int64_t max_ts = 0;
  {
    CPPROF_ASSIGN_OR_RETURN(
        Statement st,
        db.Prepare(fmt::format("SELECT max(max(start), max(end)) FROM {}{}", kNvtxTable,
                               open_end == OpenEnd::kLastRange ? " WHERE " + ranges_only : ""),
                   "reading NVTX"));
    if (st.Step()) max_ts = st.Int(0);
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  CPPROF_ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(fmt::format("SELECT ne.start, coalesce(ne.end, {}), ne.eventType, ne.domainId, ne.globalTid, "
                             "coalesce(sid.value, ne.text, ''), {}, ne.end IS NULL FROM {} AS ne LEFT JOIN StringIds AS sid "
                             "ON ne.textId == sid.id WHERE ne.{}",
                             max_ts, db.HasColumn(kNvtxTable, "endGlobalTid") ? "ne.endGlobalTid IS NOT NULL" : "0",
                             kNvtxTable, ranges_only),
                 "reading NVTX ranges"));
  NvtxRangeRow r{};
  while (st.Step()) {
    r.start = st.Int(0);
    r.end = st.Int(1);
    r.event_type = static_cast<int>(st.Int(2));
    r.domain_id = st.Int(3);
    r.global_tid = st.Int(4);
    r.text = st.Text(5);
    r.ends_on_other_thread = st.Int(6) != 0;
    r.open = st.Int(7) != 0;
    fn(r);
  }
  return st.status();
}

}  // namespace cpprof::nsys
