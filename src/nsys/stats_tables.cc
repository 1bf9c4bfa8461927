#include "nsys/stats_tables.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <unordered_map>

#include "nsys/export_reader.h"

namespace cpprof::nsys {

namespace {

void AddTo(int64_t* damaged, int64_t n) {
  if (damaged) *damaged += n;
}

}  // namespace

StatusOr<std::vector<Group>> KernelDurationsByName(const Database& db, int64_t* damaged) {
  GroupedValues g;
  CPPROF_RETURN_IF_ERROR(
      g.AddIntKeyed(db,
                    fmt::format("SELECT {}, end - start, {} FROM {}",
                                // as report: shortName where the export has no demangled names
                                db.HasColumn(kKernelTable, "demangledName") ? "demangledName" : "shortName",
                                ValidTimesSql(false), kKernelTable),
                    "reading kernels", true));
  AddTo(damaged, g.damaged());
  return g.Finish(db);
}

StatusOr<std::vector<Group>> CallDurationsByNameId(const Database& db, const char* table, const char* where,
                                                   int64_t* damaged) {
  GroupedValues g;
  CPPROF_RETURN_IF_ERROR(g.AddIntKeyed(db,
                                       fmt::format("SELECT nameId, end - start, {} FROM {}{}{}", ValidTimesSql(false),
                                                   table, *where ? " WHERE " : "", where),
                                       fmt::format("reading {}", table), true));
  AddTo(damaged, g.damaged());
  return g.FinishByKey(db);
}

namespace {

// The memsets' values (those of valid rows: `valid`, SQL) into `g`, in table order.
Status ReadMemsets(const Database& db, const char* value_expr, const std::string& valid, Group& g, int64_t* damaged) {
  CPPROF_ASSIGN_OR_RETURN(
      Statement st,
      db.Prepare(fmt::format("SELECT {}, {} FROM {}", value_expr, valid, kMemsetTable), "reading memsets"));
  while (st.Step()) {
    if (st.Int(1) == 0) {
      AddTo(damaged, 1);
      continue;
    }
    g.values.push_back(st.Int(0));
  }
  return st.status();
}

}  // namespace

StatusOr<std::vector<Group>> MemOpValuesByOperation(const Database& db, MemOpValue value, std::string* skipped,
                                                    int64_t* damaged) {
  const char* value_expr = value == MemOpValue::kBytes ? "bytes" : "end - start";
  // Sizes too: a negative one, or one past 2^50 bytes (a PiB in one copy), is damaged.
  const std::string valid = value == MemOpValue::kBytes
                                ? fmt::format("({} AND typeof(bytes) = 'integer' AND bytes BETWEEN 0 AND {})",
                                              ValidTimesSql(false), int64_t{1} << 50)
                                : ValidTimesSql(false);
  // Grouped by name as nsys's SQL groups '[CUDA memcpy ' || label || ']' from the memcpy table
  // INNER JOIN ENUM_CUDA_MEMCPY_OPER: the few labels are read first and each row is keyed by its
  // copyKind, so the scan reads two integers a row (a kind without a label is left out, as the
  // join leaves it out; a NULL label names the group "").
  std::vector<Group> groups;
  std::map<std::string, size_t> by_name;
  auto group_of = [&](const std::string& name) {
    auto [it, inserted] = by_name.try_emplace(name, groups.size());
    if (inserted) groups.push_back({name, {}});
    return it->second;
  };
  bool any = false;
  if (db.HasTable(kMemcpyTable)) {
    if (!db.HasTable("ENUM_CUDA_MEMCPY_OPER")) {
      *skipped = db.path() + " does not contain ENUM_CUDA_MEMCPY_OPER table.";
      return std::vector<Group>{};
    }
    std::unordered_map<int64_t, size_t> kind_group;
    {
      CPPROF_ASSIGN_OR_RETURN(
          Statement st,
          db.Prepare("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER WHERE id IS NOT NULL", "reading memcpy kinds"));
      while (st.Step()) {
        std::string name = st.IsNull(1) ? std::string() : "[CUDA memcpy " + std::string(st.Text(1)) + "]";
        kind_group.try_emplace(st.Int(0), group_of(name));
      }
      CPPROF_RETURN_IF_ERROR(st.status());
    }
    CPPROF_ASSIGN_OR_RETURN(
        Statement st,
        db.Prepare(fmt::format("SELECT copyKind, {}, {} FROM {}", value_expr, valid, kMemcpyTable), "reading memcpys"));
    int64_t last_kind = 0;
    size_t last_group = SIZE_MAX;
    while (st.Step()) {
      if (st.Int(2) == 0) {
        AddTo(damaged, 1);
        continue;
      }
      if (st.IsNull(0)) continue;
      const int64_t kind = st.Int(0);
      if (last_group == SIZE_MAX || kind != last_kind) {
        auto it = kind_group.find(kind);
        if (it == kind_group.end()) continue;
        last_kind = kind;
        last_group = it->second;
      }
      groups[last_group].values.push_back(st.Int(1));
    }
    CPPROF_RETURN_IF_ERROR(st.status());
    any = true;
  }
  if (db.HasTable(kMemsetTable)) {
    const size_t g = group_of("[CUDA memset]");
    CPPROF_RETURN_IF_ERROR(ReadMemsets(db, value_expr, valid, groups[g], damaged));
    any = true;
  }
  if (!any) {
    *skipped = db.path() + " does not contain GPU memory data.";
    return std::vector<Group>{};
  }
  // Groups that got no rows print nothing (nsys's GROUP BY has no row for them).
  std::erase_if(groups, [](const Group& g) { return g.values.empty(); });
  return groups;
}

}  // namespace cpprof::nsys
