#include "nsys/export_reader.h"

#include <fmt/format.h>

#include <algorithm>

namespace cpprof::nsys {

std::string KernelWhere(const ExportSchema& schema, const KernelColumns& cols) {
  std::vector<std::string> terms;
  if (!cols.rows.whole()) {
    terms.push_back(fmt::format("rowid BETWEEN {} AND {}", cols.rows.first, cols.rows.last));
  }
  if (!cols.name_prefix.empty()) {
    std::string prefix;
    for (char c : cols.name_prefix) {
      if (c == '%' || c == '_' || c == '\\') prefix += '\\';
      prefix += c == '\'' ? std::string("''") : std::string(1, c);
    }
    // The names are few: their ids are looked up once, then each row is one lookup.
    terms.push_back(fmt::format("{} IN (SELECT id FROM StringIds WHERE value LIKE '{}%' ESCAPE '\\')",
                                schema.kernel_name_column, prefix));
  }
  std::string out;
  for (const auto& t : terms) out += (out.empty() ? " WHERE " : " AND ") + t;
  return out;
}

StatusOr<ExportSchema> ProbeExport(const Database& db) {
  const std::string& file = db.path();
  if (db.tables().empty()) {
    return Error(ExitCode::kNotAnExport,
                 fmt::format("'{}' is an SQLite database with no tables: not an nsys export, or an "
                             "export that did not finish. Export the report again with 'nsys export "
                             "--type sqlite --force-overwrite true REPORT.nsys-rep'.",
                             file));
  }
  // Every nsys export has these; a database without them was made by something else.
  bool nsys_like =
      db.HasTable("StringIds") &&
      (db.HasTable("META_DATA_EXPORT") || db.HasTable("TARGET_INFO_SESSION_START_TIME") || db.HasTable("ThreadNames"));
  if (!nsys_like) {
    std::string some;
    for (size_t i = 0; i < db.tables().size() && i < 4; ++i) {
      some += (i ? ", " : "") + db.tables()[i];
    }
    return Error(ExitCode::kNotAnExport,
                 fmt::format("'{}' is an SQLite database but not an nsys export (it has tables {}{} "
                             "and no StringIds/META_DATA_EXPORT). Give the .sqlite that 'nsys export "
                             "--type sqlite' or 'nsys profile --export sqlite' wrote.",
                             file, some, db.tables().size() > 4 ? ", ..." : ""));
  }

  ExportSchema schema;
  if (db.HasTable("META_DATA_EXPORT")) {
    CPPROF_ASSIGN_OR_RETURN(Statement st,
                            db.Prepare("SELECT name, value FROM META_DATA_EXPORT", "reading META_DATA_EXPORT"));
    while (st.Step()) {
      if (st.Text(0) == "EXPORT_SCHEMA_VERSION") schema.schema_version = std::string(st.Text(1));
      if (st.Text(0) == "EXPORT_PRODUCT_VERSION") schema.nsys_version = std::string(st.Text(1));
    }
    CPPROF_RETURN_IF_ERROR(st.status());
  }

  if (!db.HasTable(kKernelTable)) {
    return Error(ExitCode::kNotAnExport,
                 fmt::format("'{}' holds no table '{}': no CUDA kernel was captured. Profile with "
                             "'--trace cuda' (cpprof profile does), make sure the workload ran on the "
                             "GPU, and if the export is old or partial export it again with 'nsys "
                             "export --type sqlite --force-overwrite true REPORT.nsys-rep'. "
                             "'cpprof doctor' checks the nsys setup.",
                             file, kKernelTable));
  }
  auto cols = db.Columns(kKernelTable);
  auto has = [&](std::string_view c) { return std::find(cols.begin(), cols.end(), c) != cols.end(); };
  for (const char* c : {"start", "end", "globalPid", "deviceId", "streamId"}) {
    if (!has(c)) {
      return Error(
          ExitCode::kNotAnExport,
          fmt::format("'{}': table '{}' has no column '{}' (export schema {}). This export "
                      "format is not supported; export it with nsys 2023.1 or newer.",
                      file, kKernelTable, c, schema.schema_version.empty() ? "unknown" : schema.schema_version));
    }
  }
  schema.kernel_name_column = has("demangledName") ? "demangledName" : "shortName";

  for (const auto& t : kOptionalTables) {
    if (db.HasTable(t.table)) {
      schema.present.emplace_back(t.what);
    } else {
      schema.absent.push_back(fmt::format("{} (captured with {})", t.what, t.option));
    }
  }
  return schema;
}

StringTable::StringTable(const Database& db) {
  auto st = db.Prepare("SELECT value FROM StringIds WHERE id = ?", "reading StringIds");
  if (st.ok()) {
    stmt_ = std::move(st).value();
  } else {
    status_ = st.status();
  }
}

const std::string& StringTable::Get(int64_t id) {
  auto it = cache_.find(id);
  if (it != cache_.end()) return it->second;
  if (!status_.ok()) return empty_;
  stmt_.Reset();
  stmt_.Bind(1, id);
  std::string value;
  if (stmt_.Step()) value = std::string(stmt_.Text(0));
  if (!stmt_.status().ok()) status_ = stmt_.status();
  return cache_.emplace(id, std::move(value)).first->second;
}

std::string ValidTimesSql(bool end_may_be_null, std::string_view a) {
  const std::string max = std::to_string(kMaxTimestampNs);
  std::string end = fmt::format("(typeof({0}end) = 'integer' AND {0}end BETWEEN {0}start AND {1})", a, max);
  if (end_may_be_null) end = fmt::format("({0}end IS NULL OR {1})", a, end);
  return fmt::format("(typeof({0}start) = 'integer' AND {0}start BETWEEN {1} AND {2} AND {3})", a, -kMaxTimestampNs / 2,
                     max, end);
}

StatusOr<int64_t> RowsUpperBound(const Database& db, const char* table) {
  if (!db.HasTable(table)) return int64_t{0};
  CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare(fmt::format("SELECT max(rowid) FROM {}", table), "counting rows"));
  int64_t n = 0;
  if (st.Step() && !st.IsNull(0)) n = st.Int(0);
  CPPROF_RETURN_IF_ERROR(st.status());
  if (n >= 1 && n <= kPlausibleRowid) return n;
  CPPROF_ASSIGN_OR_RETURN(Statement count, db.Prepare(fmt::format("SELECT count(*) FROM {}", table), "counting rows"));
  n = 0;
  if (count.Step()) n = count.Int(0);
  CPPROF_RETURN_IF_ERROR(count.status());
  return n;
}

StatusOr<std::vector<RowidRange>> SplitRowids(const Database& db, const char* table, size_t parts,
                                              int64_t min_rows_per_part) {
  std::vector<RowidRange> out(1);
  if (parts <= 1 || !db.HasTable(table)) return out;
  // Two subqueries: SQLite reads min or max of the rowid from the b-tree's ends only when the
  // query has one of them; both in one SELECT scan the whole table.
  CPPROF_ASSIGN_OR_RETURN(
      Statement st, db.Prepare(fmt::format("SELECT (SELECT min(rowid) FROM {0}), (SELECT max(rowid) FROM {0})", table),
                               "counting rows"));
  int64_t first = 0, last = -1;
  if (st.Step() && !st.IsNull(0)) first = st.Int(0), last = st.Int(1);
  CPPROF_RETURN_IF_ERROR(st.status());
  const __int128 rows = static_cast<__int128>(last) - first + 1;
  if (rows <= 1 || rows > INT64_MAX / 2) return out;
  const int64_t most = static_cast<int64_t>(rows) / std::max<int64_t>(1, min_rows_per_part);
  const auto n = static_cast<int64_t>(std::min<size_t>(parts, static_cast<size_t>(std::max<int64_t>(1, most))));
  const int64_t step = (static_cast<int64_t>(rows) + n - 1) / n;
  out.assign(static_cast<size_t>(n), RowidRange{});
  for (int64_t k = 0; k < n; ++k) {
    out[static_cast<size_t>(k)] = {k == 0 ? INT64_MIN : first + k * step,
                                   k + 1 == n ? INT64_MAX : first + (k + 1) * step - 1};
  }
  return out;
}

StatusOr<std::unordered_map<int64_t, ProcessInfo>> ReadProcesses(const Database& db) {
  std::unordered_map<int64_t, ProcessInfo> out;
  if (!db.HasTable("PROCESSES")) return out;
  CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT globalPid, pid, name FROM PROCESSES", "reading PROCESSES"));
  while (st.Step()) {
    ProcessInfo p;
    p.global_pid = st.Int(0);
    p.pid = static_cast<int>(st.Int(1));
    p.name = std::string(st.Text(2));
    out[p.global_pid] = std::move(p);
  }
  CPPROF_RETURN_IF_ERROR(st.status());
  return out;
}

}  // namespace cpprof::nsys
