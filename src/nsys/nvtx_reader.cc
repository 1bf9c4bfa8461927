#include "nsys/nvtx_reader.h"

#include <fmt/format.h>

#include <optional>
#include <set>
#include <unordered_map>

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
  // Registered strings are resolved here, once per id, rather than joined with StringIds per row
  // (exports hold millions of ranges over a few hundred names). Same rule as the join:
  // coalesce(StringIds.value, text, '').
  CPPROF_ASSIGN_OR_RETURN(Statement lookup, db.Prepare("SELECT value FROM StringIds WHERE id = ?", "reading StringIds"));
  std::unordered_map<int64_t, std::optional<std::string>> registered;
  auto resolve = [&](int64_t id) -> const std::optional<std::string>& {
    auto it = registered.find(id);
    if (it != registered.end()) return it->second;
    lookup.Reset();
    lookup.Bind(1, id);
    std::optional<std::string> v;
    if (lookup.Step() && !lookup.IsNull(0)) v = std::string(lookup.Text(0));
    return registered.emplace(id, std::move(v)).first->second;
  };
  CPPROF_ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(fmt::format("SELECT ne.start, coalesce(ne.end, {}), ne.eventType, ne.domainId, ne.globalTid, "
                             "ne.textId, ne.text, {}, ne.end IS NULL FROM {} AS ne WHERE ne.{}",
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
    const std::optional<std::string>* text = st.IsNull(5) ? nullptr : &resolve(st.Int(5));
    if (text && *text) {
      r.text = **text;
    } else {
      r.text = st.IsNull(6) ? std::string_view() : st.Text(6);
    }
    r.ends_on_other_thread = st.Int(7) != 0;
    r.open = st.Int(8) != 0;
    fn(r);
  }
  CPPROF_RETURN_IF_ERROR(lookup.status());
  return st.status();
}

}  // namespace cpprof::nsys
