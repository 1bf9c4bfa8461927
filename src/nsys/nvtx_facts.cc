#include "nsys/nvtx_facts.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "nsys/export_reader.h"
#include "nsys/nvtx_reader.h"

namespace cpprof::nsys {

namespace {

bool IsRange(int64_t event_type) {
  return event_type == kNvtxPushPop || event_type == kNvtxStartEnd || event_type == kNvtxtPushPop ||
         event_type == kNvtxtStartEnd;
}

StatusOr<int64_t> CountRows(const Database& db, const char* table) {
  if (!db.HasTable(table)) return int64_t{-1};
  CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare(fmt::format("SELECT count(*) FROM {}", table),
                                                   fmt::format("counting {}", table)));
  int64_t n = st.Step() ? st.Int(0) : 0;
  CPPROF_RETURN_IF_ERROR(st.status());
  return n;
}

// The distinct names a domain id takes on a thread (a domain created on two threads of one
// process gets two entries from NvtxDomains; a fact counts once per name).
std::vector<std::string> DistinctNames(const NvtxDomains& domains, int64_t domain_id, int64_t global_tid) {
  std::vector<std::string> names = domains.NamesFor(domain_id, global_tid);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace

StatusOr<model::NvtxFacts> ReadNvtxFacts(const Database& db) {
  model::NvtxFacts facts;
  std::map<std::string, model::NvtxDomainFacts> by_name;
  if (db.HasTable(kNvtxTable)) {
    facts.has_nvtx = true;
    CPPROF_ASSIGN_OR_RETURN(NvtxDomains domains, NvtxDomains::Read(db));
    // Every domain created counts, even one that recorded nothing: that is what the checks need.
    {
      CPPROF_ASSIGN_OR_RETURN(
          Statement st, db.Prepare(fmt::format("SELECT DISTINCT domainId, globalTid FROM {} WHERE eventType == {}",
                                               kNvtxTable, kNvtxDomainCreate),
                                   "reading NVTX domains"));
      while (st.Step()) {
        for (const auto& n : DistinctNames(domains, st.Int(0), st.Int(1))) by_name[n].name = n;
      }
      CPPROF_RETURN_IF_ERROR(st.status());
    }
    std::set<std::string> named;
    CPPROF_RETURN_IF_ERROR(ForEachNvtxRange(db, OpenEnd::kLastRange, [&](const NvtxRangeRow& r) {
      for (const auto& n : DistinctNames(domains, r.domain_id, r.global_tid)) {
        auto& d = by_name[n];
        d.name = n;
        ++d.ranges;
        if (!n.empty()) {
          named.insert(n + ":" + std::string(r.text));
        } else if (r.text.substr(0, 6) == "aten::") {
          ++facts.autograd_op_ranges;
          if (r.text.find("sizes = [") != std::string_view::npos) ++facts.autograd_shape_ranges;
        }
      }
    }));
    facts.named_ranges.assign(named.begin(), named.end());
    // Open and cross-thread ranges, and the other events (marks), per domain.
    bool has_end_tid = db.HasColumn(kNvtxTable, "endGlobalTid");
    CPPROF_ASSIGN_OR_RETURN(
        Statement st,
        db.Prepare(fmt::format("SELECT domainId, globalTid, eventType, end IS NULL, {}, count(*) FROM {} "
                               "WHERE eventType != {} GROUP BY 1, 2, 3, 4, 5",
                               has_end_tid ? "endGlobalTid IS NOT NULL AND endGlobalTid != globalTid" : "0",
                               kNvtxTable, kNvtxDomainCreate),
                   "reading NVTX events"));
    while (st.Step()) {
      int64_t type = st.Int(2), n = st.Int(5);
      bool open = st.Int(3) != 0, cross = st.Int(4) != 0;
      for (const auto& name : DistinctNames(domains, st.Int(0), st.Int(1))) {
        auto& d = by_name[name];
        d.name = name;
        if (!IsRange(type)) {
          d.marks += n;
          continue;
        }
        if (open) d.open_ranges += n;
        if (cross) d.cross_thread_ranges += n;
      }
    }
    CPPROF_RETURN_IF_ERROR(st.status());
  }
  for (auto& [name, d] : by_name) facts.domains.push_back(std::move(d));
  if (const auto* pb = facts.Domain("Python Backtrace on CUDA")) facts.python_backtrace_marks = pb->marks;

  if (db.HasTable(kRuntimeTable)) {
    std::string ids;
    {
      CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT id FROM StringIds WHERE value LIKE 'cudaGraphLaunch%'",
                                                       "reading CUDA API names"));
      while (st.Step()) ids += (ids.empty() ? "" : ",") + std::to_string(st.Int(0));
      CPPROF_RETURN_IF_ERROR(st.status());
    }
    if (!ids.empty()) {
      CPPROF_ASSIGN_OR_RETURN(
          Statement st, db.Prepare(fmt::format("SELECT count(*) FROM {} WHERE nameId IN ({})", kRuntimeTable, ids),
                                   "counting cudaGraphLaunch calls"));
      if (st.Step()) facts.cuda_graph_launches = st.Int(0);
      CPPROF_RETURN_IF_ERROR(st.status());
    }
  }
  CPPROF_ASSIGN_OR_RETURN(facts.cpu_samples, CountRows(db, "COMPOSITE_EVENTS"));
  CPPROF_ASSIGN_OR_RETURN(facts.cuda_backtraces, CountRows(db, "CUDA_CALLCHAINS"));
  CPPROF_ASSIGN_OR_RETURN(facts.osrt_backtraces, CountRows(db, "OSRT_CALLCHAINS"));
  return facts;
}

}  // namespace cpprof::nsys
