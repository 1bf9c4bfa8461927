// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/launch_reader.h"

#include <fmt/format.h>

#include "nsys/export_reader.h"
#include "nsys/row_prefetch.h"

namespace cpprof::nsys {

StatusOr<std::set<int64_t>> ReadAutogradThreads(const Database& db) {
  std::set<int64_t> out;
  if (!db.HasTable("ThreadNames") || !db.HasTable("StringIds")) return out;
  CPPROF_ASSIGN_OR_RETURN(Statement st,
                          db.Prepare("SELECT t.globalTid FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId "
                                     "WHERE s.value LIKE 'pt_autograd%' AND t.globalTid IS NOT NULL",
                                     "reading thread names"));
  while (st.Step()) out.insert(st.Int(0));
  CPPROF_RETURN_IF_ERROR(st.status());
  return out;
}

StatusOr<ApiCallCursor> ApiCallCursor::Open(const Database& db, bool by_start, bool launches_only) {
  ApiCallCursor c;
  if (!db.HasTable(kRuntimeTable)) return c;
  const bool corr = db.HasColumn(kRuntimeTable, "correlationId");
  if (launches_only && !corr) return c;
  using K = PrefetchedRows::Kind;
  // nsys's CUDA backtrace rows: eventClass TRACE_PROCESS_EVENT_CUDABACKTRACE (67 in 2025.3).
  const std::string backtrace =
      db.HasTable("ENUM_NSYS_EVENT_CLASS") && db.HasColumn(kRuntimeTable, "eventClass")
          ? "eventClass IS (SELECT id FROM ENUM_NSYS_EVENT_CLASS WHERE name = 'TRACE_PROCESS_EVENT_CUDABACKTRACE')"
          : "0";
  CPPROF_ASSIGN_OR_RETURN(
      PrefetchedRows st,
      PrefetchedRows::Open(db,
                           std::string("SELECT start, end, globalTid, ") + (corr ? "correlationId" : "NULL") +
                               ", nameId, " + backtrace + " FROM " + kRuntimeTable +
                               (launches_only ? " WHERE correlationId IS NOT NULL" : "") +
                               (by_start ? " ORDER BY start, rowid" : ""),
                           "reading CUDA API calls", {K::kInt, K::kInt, K::kInt, K::kInt, K::kInt, K::kInt}));
  c.st_.emplace(std::move(st));
  return c;
}

StatusOr<int64_t> LastApiCallEnd(const Database& db) {
  if (!db.HasTable(kRuntimeTable)) return int64_t{0};
  CPPROF_ASSIGN_OR_RETURN(
      Statement st, db.Prepare(std::string("SELECT max(end) FROM ") + kRuntimeTable + " WHERE " + ValidTimesSql(false),
                               "finding the end of the capture"));
  int64_t end = 0;
  if (st.Step()) end = st.Int(0);
  CPPROF_RETURN_IF_ERROR(st.status());
  return end;
}

StatusOr<std::map<int64_t, std::string>> ReadThreadNames(const Database& db) {
  std::map<int64_t, std::string> names;
  if (!db.HasTable("ThreadNames") || !db.HasTable("StringIds")) return names;
  CPPROF_ASSIGN_OR_RETURN(Statement st,
                          db.Prepare("SELECT tn.globalTid, sid.value FROM ThreadNames AS tn JOIN StringIds AS sid "
                                     "ON tn.nameId == sid.id ORDER BY tn.rowid",
                                     "reading ThreadNames"));
  while (st.Step()) names[st.Int(0)] = std::string(st.Text(1));
  CPPROF_RETURN_IF_ERROR(st.status());
  return names;
}

StatusOr<int64_t> ForEachRuntimeCall(const Database& db, const std::function<void(const RuntimeCall&)>& fn) {
  if (!db.HasTable(kRuntimeTable)) return int64_t{0};
  // SQLite steps on another core while this one runs fn (the report tags each call with its module).
  using K = PrefetchedRows::Kind;
  CPPROF_ASSIGN_OR_RETURN(
      PrefetchedRows st,
      PrefetchedRows::Open(db,
                           fmt::format("SELECT start, end, globalTid, correlationId, nameId FROM {} WHERE "
                                       "correlationId IS NOT NULL",
                                       kRuntimeTable),
                           "reading CUDA API calls", {K::kInt, K::kInt, K::kInt, K::kInt, K::kInt}));
  int64_t damaged = 0;
  while (st.Step()) {
    if (!ValidTimes(st, 0, 1, false)) {
      ++damaged;
      continue;
    }
    fn({st.Int(0), st.Int(1), st.Int(2), st.Int(3), st.Int(4)});
  }
  CPPROF_RETURN_IF_ERROR(st.status());
  return damaged;
}

}  // namespace cpprof::nsys
