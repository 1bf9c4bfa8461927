// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/sqlite_db.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace cpprof::nsys {

Status SqliteError(int rc, const std::string& file, const std::string& what, const char* detail) {
  int primary = rc & 0xff;
  std::string d = detail ? detail : sqlite3_errstr(rc);
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB || primary == SQLITE_IOERR) {
    return Error(ExitCode::kBadInput,
                 fmt::format("'{}' is corrupt or truncated ({} while {}). Export it again from the "
                             "report: 'nsys export --type sqlite --force-overwrite true REPORT.nsys-rep'.",
                             file, d, what));
  }
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
    return Error(ExitCode::kBadInput, fmt::format("'{}' is locked by another process ({} while {}). Wait for the "
                                                  "process writing it (an 'nsys export' still running?) to finish, "
                                                  "or copy the file and read the copy.",
                                                  file, d, what));
  }
  if (primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN) {
    // A hot journal (FILE-journal, or WAL files) beside a read-only open: SQLite must roll it back first.
    return Error(ExitCode::kBadInput,
                 fmt::format("'{}' cannot be read as it is ({} while {}): a write to it was interrupted and left "
                             "'{}-journal' or '{}-wal' beside it. Export the report again, or let SQLite recover "
                             "it once: sqlite3 '{}' 'PRAGMA integrity_check' (needs write access).",
                             file, d, what, file, file, file));
  }
  if (d.rfind("no such column: ", 0) == 0 || d.rfind("no such table: ", 0) == 0) {
    return Error(ExitCode::kNotAnExport,
                 fmt::format("'{}' lacks what nsys exports hold ({} while {}): it was exported by an nsys version "
                             "cpprof does not know, or edited. Export it again with 'nsys export --type sqlite', "
                             "and check the versions with 'cpprof doctor'.",
                             file, d, what));
  }
  return Error(ExitCode::kBadInput, fmt::format("SQLite error while {} in '{}': {}. Export the report again with "
                                                "'nsys export --type sqlite REPORT.nsys-rep'; if that does not help, "
                                                "report it with the export.",
                                                what, file, d));
}

Statement::Statement(sqlite3_stmt* stmt, std::string file, std::string what, std::atomic<bool>* invalid_utf8)
    : stmt_(stmt), invalid_utf8_(invalid_utf8), file_(std::move(file)), what_(std::move(what)) {}

Statement::Statement(Statement&& o) noexcept
    : stmt_(o.stmt_),
      replaced_(std::move(o.replaced_)),
      invalid_utf8_(o.invalid_utf8_),
      file_(std::move(o.file_)),
      what_(std::move(o.what_)),
      status_(o.status_) {
  o.stmt_ = nullptr;
}

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(stmt_);
    stmt_ = o.stmt_;
    o.stmt_ = nullptr;
    replaced_ = std::move(o.replaced_);
    invalid_utf8_ = o.invalid_utf8_;
    file_ = std::move(o.file_);
    what_ = std::move(o.what_);
    status_ = o.status_;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

std::string_view Statement::Replaced(int col, std::string_view s) const {
  if (invalid_utf8_) *invalid_utf8_ = true;
  if (replaced_.size() <= static_cast<size_t>(col)) replaced_.resize(static_cast<size_t>(col) + 1);
  return replaced_[static_cast<size_t>(col)] = ToValidUtf8(s);
}

void Statement::SetError(int rc) { status_ = SqliteError(rc, file_, what_, sqlite3_errmsg(sqlite3_db_handle(stmt_))); }

Statement& Statement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, std::string_view value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  return *this;
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  status_ = Status();
}

namespace {

bool LooksLikeNsysRep(const std::string& path) {
  return path.size() > 9 && path.compare(path.size() - 9, 9, ".nsys-rep") == 0;
}

bool LooksLikeQdstrm(const std::string& path) {
  return path.size() > 7 && path.compare(path.size() - 7, 7, ".qdstrm") == 0;
}

Status NotSqlite(const std::string& path) {
  if (LooksLikeNsysRep(path)) {
    return Error(ExitCode::kBadInput,
                 fmt::format("'{}' is an nsys report, not its SQLite export. Export it first: "
                             "'nsys export --type sqlite {}' (or 'nsys profile ... --export sqlite').",
                             path, path));
  }
  if (LooksLikeQdstrm(path)) {
    return Error(ExitCode::kBadInput,
                 fmt::format("'{}' is a raw nsys stream that was never imported. Import it with "
                             "QdstrmImporter -i {} (cpprof doctor finds it and checks it can run), "
                             "then export the .nsys-rep to SQLite.",
                             path, path));
  }
  return Error(ExitCode::kBadInput, fmt::format("'{}' is not an SQLite database. cpprof reads nsys SQLite exports: "
                                                "'nsys export --type sqlite REPORT.nsys-rep' makes one.",
                                                path));
}

}  // namespace

StatusOr<Database> Database::Open(const std::string& path, const ExecContext& exec) {
  return Open(path, exec, std::make_shared<std::atomic<bool>>(false), nullptr);
}

StatusOr<Database> Database::Reopen() const { return Open(path_, exec_, invalid_utf8_, decompressed_); }

StatusOr<Database> Database::Open(const std::string& path, const ExecContext& exec,
                                  std::shared_ptr<std::atomic<bool>> invalid_utf8,
                                  std::shared_ptr<const DecompressedFile> decompressed) {
  if (decompressed) return OpenSqlite(path, decompressed, exec, std::move(invalid_utf8));
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    return Error(ExitCode::kBadInput, fmt::format("cannot open '{}': {}. Check the path; an nsys report is exported to "
                                                  "SQLite with 'nsys export --type sqlite REPORT.nsys-rep'.",
                                                  path, std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) {
    return Error(ExitCode::kBadInput, fmt::format("'{}' is a directory; give the .sqlite file inside it.", path));
  }
  // Checked before anything is read: a FIFO would block forever, /dev/zero never ends.
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    return Error(ExitCode::kBadInput,
                 fmt::format("'{}' is {}, not a file: SQLite reads an export from a regular file. Save it to a file "
                             "first (e.g. 'cat {} > run.sqlite') and give that.",
                             path, kind, path));
  }
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return Error(ExitCode::kBadInput,
                   fmt::format("cannot read '{}': {}. Check its permissions.", path, std::strerror(errno)));
    }
    char magic[16] = {};
    in.read(magic, sizeof magic);
    if (st.st_size == 0) {
      return Error(ExitCode::kNotAnExport, fmt::format("'{}' is empty (0 bytes): the export did not finish. Export the "
                                                       "report again with 'nsys export --type sqlite REPORT.nsys-rep'.",
                                                       path));
    }
    const Compression compression = SniffCompression(std::string_view(magic, static_cast<size_t>(in.gcount())));
    if (compression != Compression::kNone) {
      CPPROF_ASSIGN_OR_RETURN(decompressed, Decompress(path, compression, exec));
      return OpenSqlite(path, decompressed, exec, std::move(invalid_utf8));
    }
    if (in.gcount() < 16 || std::memcmp(magic, "SQLite format 3", 16) != 0) return NotSqlite(path);
  }
  return OpenSqlite(path, nullptr, exec, std::move(invalid_utf8));
}

StatusOr<std::shared_ptr<const DecompressedFile>> Database::Decompress(const std::string& path, Compression compression,
                                                                       const ExecContext& exec) {
  bool made = true;
  StatusOr<std::shared_ptr<const DecompressedFile>> file =
      exec.decompressed ? exec.decompressed->Get(path, compression, exec.temp_dir, &made)
                        : DecompressedFile::Make(path, compression, exec.temp_dir);
  if (file.ok() && made) {
    exec.Note(
        fmt::format("cpprof: note: '{}' is {}-compressed: decompressed it ({:.1f} MB) into a private temporary "
                    "file in {} in {:.2f} s (removed when done)",
                    path, CompressionName(compression), static_cast<double>((*file)->bytes()) / 1e6, exec.temp_dir,
                    (*file)->seconds()));
  }
  if (file.ok()) {
    char magic[16] = {};
    std::ifstream in((*file)->path(), std::ios::binary);
    in.read(magic, sizeof magic);
    if (in.gcount() < 16 || std::memcmp(magic, "SQLite format 3", 16) != 0) {
      return Error(ExitCode::kBadInput,
                   fmt::format("'{}' decompressed ({}) is not an SQLite database. cpprof reads nsys SQLite exports "
                               "(compressed or not): 'nsys export --type sqlite REPORT.nsys-rep' makes one.",
                               path, CompressionName(compression)));
    }
  }
  return file;
}

StatusOr<Database> Database::OpenSqlite(const std::string& path, std::shared_ptr<const DecompressedFile> decompressed,
                                        const ExecContext& exec, std::shared_ptr<std::atomic<bool>> invalid_utf8) {
  const std::string& file = decompressed ? decompressed->path() : path;

  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<sqlite3, Closer> db(raw);
  if (rc != SQLITE_OK) return SqliteError(rc, path, "opening it", raw ? sqlite3_errmsg(raw) : nullptr);

  // Reading is one sequential pass: a small page cache is enough, and no memory map (mapped
  // pages would count as resident memory, and exports are often larger than RAM budgets).
  sqlite3_exec(raw, "PRAGMA mmap_size=0; PRAGMA cache_size=-2048; PRAGMA query_only=1;", nullptr, nullptr, nullptr);

  std::vector<std::string> tables;
  sqlite3_stmt* stmt = nullptr;
  rc = sqlite3_prepare_v2(raw, "SELECT name FROM sqlite_master WHERE type IN ('table','view')", -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(rc, path, "listing its tables", sqlite3_errmsg(raw));
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const char* name = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    tables.push_back(ToValidUtf8(name ? name : ""));
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) return SqliteError(rc, path, "listing its tables", sqlite3_errmsg(raw));
  std::sort(tables.begin(), tables.end());
  return Database(std::move(db), path, std::move(tables), exec, std::move(invalid_utf8), std::move(decompressed));
}

bool Database::HasTable(std::string_view name) const {
  return std::binary_search(tables_.begin(), tables_.end(), name);
}

std::vector<std::string> Database::Columns(std::string_view table) const {
  std::vector<std::string> cols;
  if (!HasTable(table)) return cols;
  sqlite3_stmt* stmt = nullptr;
  std::string sql = fmt::format("PRAGMA table_info(\"{}\")", table);
  if (sqlite3_prepare_v2(db_.get(), sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) return cols;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    cols.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)));
  }
  sqlite3_finalize(stmt);
  return cols;
}

bool Database::HasColumn(std::string_view table, std::string_view column) const {
  auto cols = Columns(table);
  return std::find(cols.begin(), cols.end(), column) != cols.end();
}

StatusOr<Statement> Database::Prepare(const std::string& sql, std::string what) const {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_.get(), sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(rc, path_, what, sqlite3_errmsg(db_.get()));
  return Statement(stmt, path_, std::move(what), invalid_utf8_.get());
}

}  // namespace cpprof::nsys
