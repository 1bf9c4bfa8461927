// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/nvtx_facts.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "nsys/export_reader.h"
#include "nsys/nvtx_reader.h"

namespace cpprof::nsys {

namespace {

StatusOr<int64_t> CountRows(const Database& db, const char* table) {
  if (!db.HasTable(table)) return int64_t{-1};
  CPPROF_ASSIGN_OR_RETURN(Statement st,
                          db.Prepare(fmt::format("SELECT count(*) FROM {}", table), fmt::format("counting {}", table)));
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

// Whether the NCCL or Python backtrace events carry their payloads (model::NvtxFacts::
// nvtx_payloads): from the pass that read them (`tally`) where it counted them, else one row is
// enough, so the scan stops at the first (a whole scan of the table when none has one).
Status FindPayloads(const Database& db, const NvtxRangeTally* tally, model::NvtxFacts& facts) {
  const auto* nccl = facts.Domain("NCCL");
  if (facts.python_backtrace_marks <= 0 && !(nccl && nccl->ranges + nccl->marks > 0)) return OkStatus();
  if (tally && tally->payload_events >= 0) {
    facts.nvtx_payloads = tally->payload_events > 0 ? 1 : 0;
    return OkStatus();
  }
  std::vector<std::string> held;
  for (const char* column : {"jsonText", "binaryData"}) {
    if (db.HasColumn(kNvtxTable, column)) held.push_back(fmt::format("{} IS NOT NULL", column));
  }
  facts.nvtx_payloads = 0;
  if (held.empty()) return OkStatus();
  CPPROF_ASSIGN_OR_RETURN(Statement st,
                          db.Prepare(fmt::format("SELECT 1 FROM {} WHERE eventType <> 75 AND ({}) LIMIT 1", kNvtxTable,
                                                 fmt::join(held, " OR ")),
                                     "looking for NVTX payloads"));
  facts.nvtx_payloads = st.Step() ? 1 : 0;
  return st.status();
}

}  // namespace

void NvtxRangeTally::Add(const std::vector<std::string>& names, const NvtxRangeRow& r) {
  auto add = [&](const std::string& n) {
    Counts& c = ranges[n];
    ++c.ranges;
    c.open += r.open;
    c.cross_thread += r.ends_on_other_thread;
    if (!n.empty()) {
      // One buffer, so that the millions of ranges of a big export allocate only for new names.
      static thread_local std::string key;
      key.assign(n).append(":").append(r.text);
      if (!named.count(key)) named.insert(key);
    } else if (r.text.substr(0, 6) == "aten::") {
      ++autograd_op_ranges;
      if (r.text.find("sizes = [") != std::string_view::npos) ++autograd_shape_ranges;
    }
  };
  if (names.size() == 1) {
    add(names.front());
    return;
  }
  std::vector<std::string> distinct = names;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  for (const auto& n : distinct) add(n);
}

StatusOr<model::NvtxFacts> ReadNvtxFacts(const Database& db, const NvtxDomains* given_domains,
                                         const NvtxRangeTally* given_tally) {
  model::NvtxFacts facts;
  std::map<std::string, model::NvtxDomainFacts> by_name;
  if (db.HasTable(kNvtxTable)) {
    facts.has_nvtx = true;
    // Without a pass made before, one pass of our own (ScanNvtx) gives the domains and the tally.
    NvtxDomains read_domains;
    NvtxRangeTally read_tally;
    if (!given_domains || !given_tally) {
      NvtxScanCallbacks callbacks;
      callbacks.range = [&](const NvtxRangeRow& r, const std::vector<std::string>& names) { read_tally.Add(names, r); };
      callbacks.restart = [&] { read_tally = {}; };
      CPPROF_ASSIGN_OR_RETURN(NvtxScan scan, ScanNvtx(db, OpenEnd::kLastRange, callbacks));
      read_tally.marks = std::move(scan.marks);
      read_tally.damaged_rows = scan.damaged_rows;
      read_domains = std::move(scan.domains);
    }
    const bool given = given_domains && given_tally;
    const NvtxDomains& domains = given ? *given_domains : read_domains;
    // Every domain created counts, even one that recorded nothing: that is what the checks need.
    for (const auto& n : domains.AllNames()) by_name[n].name = n;
    const NvtxRangeTally& tally = given ? *given_tally : read_tally;
    for (const auto& [n, c] : tally.ranges) {
      auto& d = by_name[n];
      d.name = n;
      d.ranges += c.ranges;
      d.open_ranges += c.open;
      d.cross_thread_ranges += c.cross_thread;
    }
    std::set<std::string> named(tally.named.begin(), tally.named.end());
    facts.autograd_op_ranges = tally.autograd_op_ranges;
    facts.damaged_nvtx_rows = tally.damaged_rows;
    facts.autograd_shape_ranges = tally.autograd_shape_ranges;
    facts.named_ranges.assign(named.begin(), named.end());
    // The other events (marks), per domain; ranges, open and cross-thread ones were tallied above.
    const auto& marks = tally.marks;
    for (const auto& [key, count] : marks) {
      for (const auto& name : DistinctNames(domains, key.first, key.second)) {
        auto& d = by_name[name];
        d.name = name;
        d.marks += count;
      }
    }
  }
  for (auto& [name, d] : by_name) facts.domains.push_back(std::move(d));
  if (const auto* pb = facts.Domain("Python Backtrace on CUDA")) facts.python_backtrace_marks = pb->marks;
  CPPROF_RETURN_IF_ERROR(FindPayloads(db, given_domains && given_tally ? given_tally : nullptr, facts));

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
