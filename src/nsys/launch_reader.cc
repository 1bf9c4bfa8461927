#include "nsys/launch_reader.h"

#include "nsys/export_reader.h"

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

Status ForEachRuntimeCall(const Database& db, const std::function<void(int64_t, int64_t, int64_t)>& fn) {
  if (!db.HasTable(kRuntimeTable)) return OkStatus();
  CPPROF_ASSIGN_OR_RETURN(Statement st,
                          db.Prepare(std::string("SELECT start, globalTid, correlationId FROM ") + kRuntimeTable +
                                         " WHERE correlationId IS NOT NULL",
                                     "reading CUDA API calls"));
  while (st.Step()) fn(st.Int(0), st.Int(1), st.Int(2));
  return st.status();
}

}  // namespace cpprof::nsys
