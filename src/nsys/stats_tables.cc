#include "nsys/stats_tables.h"

#include <fmt/format.h>

#include "nsys/export_reader.h"

namespace cpprof::nsys {

StatusOr<std::vector<Group>> KernelDurationsByName(const Database& db) {
  GroupedValues g;
  CPPROF_RETURN_IF_ERROR(g.AddIntKeyed(
      db,
      fmt::format("SELECT {}, end - start FROM {}",
                  // as report: shortName where the export has no demangled names
                  db.HasColumn(kKernelTable, "demangledName") ? "demangledName" : "shortName", kKernelTable),
      "reading kernels"));
  return g.Finish(db);
}

StatusOr<std::vector<Group>> MemOpValuesByOperation(const Database& db, MemOpValue value, std::string* skipped) {
  const char* value_expr = value == MemOpValue::kBytes ? "bytes" : "end - start";
  GroupedValues g;
  bool any = false;
  if (db.HasTable(kMemcpyTable)) {
    if (!db.HasTable("ENUM_CUDA_MEMCPY_OPER")) {
      *skipped = db.path() + " does not contain ENUM_CUDA_MEMCPY_OPER table.";
      return std::vector<Group>{};
    }
    CPPROF_RETURN_IF_ERROR(
        g.AddTextKeyed(db,
                       fmt::format("SELECT '[CUDA memcpy ' || mos.label || ']', {} FROM {} AS m INNER JOIN "
                                   "ENUM_CUDA_MEMCPY_OPER AS mos ON mos.id == m.copyKind",
                                   value_expr, kMemcpyTable),
                       "reading memcpys"));
    any = true;
  }
  if (db.HasTable(kMemsetTable)) {
    CPPROF_RETURN_IF_ERROR(g.AddTextKeyed(
        db, fmt::format("SELECT '[CUDA memset]', {} FROM {}", value_expr, kMemsetTable), "reading memsets"));
    any = true;
  }
  if (!any) {
    *skipped = db.path() + " does not contain GPU memory data.";
    return std::vector<Group>{};
  }
  return g.Finish(db);
}

}  // namespace cpprof::nsys
