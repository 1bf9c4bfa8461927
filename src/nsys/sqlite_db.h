// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A thin RAII layer over the SQLite C API for reading nsys exports: read-only, memory-mapped,
// errors as Status values whose messages name the file and say what to do.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/compressed_file.h"
#include "base/exec_context.h"
#include "base/status.h"
#include "base/utf8.h"

namespace cpprof::nsys {

class Statement {
 public:
  Statement() = default;
  // `invalid_utf8`: set when Text() replaces a byte (the database's flag; may be null).
  Statement(sqlite3_stmt* stmt, std::string file, std::string what, std::atomic<bool>* invalid_utf8 = nullptr);
  Statement(Statement&&) noexcept;
  Statement& operator=(Statement&&) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Advances to the next row. Returns false at the end or on error; after the loop, status()
  // tells which. Never present rows read before an error as a complete result.
  bool Step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) SetError(rc);
    return false;
  }
  const Status& status() const { return status_; }

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, std::string_view value);
  void Reset();

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int Type(int col) const { return sqlite3_column_type(stmt_, col); }  // SQLITE_INTEGER, SQLITE_NULL, ...
  // Stored as an integer (not text, a BLOB, a REAL or NULL, which Int() would quietly turn into 0 or clamp).
  bool IsInteger(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_INTEGER; }
  // Text as well-formed UTF-8: a byte that is not (names are data) comes back as U+FFFD, and
  // Database::invalid_utf8_seen() says so. Valid until the next Step() or the next Text() of `col`.
  std::string_view Text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    if (!p) return std::string_view();
    std::string_view s(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
    return IsValidUtf8(s) ? s : Replaced(col, s);
  }
  std::string_view Blob(int col) const {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    return p ? std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))) : std::string_view();
  }

 private:
  void SetError(int rc);
  std::string_view Replaced(int col, std::string_view s) const;

  sqlite3_stmt* stmt_ = nullptr;
  mutable std::vector<std::string> replaced_;  // per column, for Text()
  std::atomic<bool>* invalid_utf8_ = nullptr;
  std::string file_;
  std::string what_;
  Status status_;
};

class Database {
 public:
  // Opens `path` read-only. Fails with kBadInput when the file is missing, unreadable, or not
  // an SQLite database (an .nsys-rep given by mistake gets a hint to export it). An export
  // compressed with xz, gzip or zstd (by its first bytes) is decompressed into a private temporary
  // file (base/compressed_file.h; once per command with exec.decompressed) and a note says so;
  // path() stays `path`. `exec`: how the command runs (its thread budget, timing, where notes go),
  // for the readers given this database.
  static StatusOr<Database> Open(const std::string& path, const ExecContext& exec = {});
  // A second connection to the same file, for a reading thread: the same ExecContext, and text
  // it reads counts in this database's invalid_utf8_seen().
  StatusOr<Database> Reopen() const;

  Database(Database&&) noexcept = default;
  Database& operator=(Database&&) noexcept = default;

  const std::string& path() const { return path_; }
  bool HasTable(std::string_view name) const;
  const std::vector<std::string>& tables() const { return tables_; }
  // Column names of `table`, in declaration order; empty if the table does not exist.
  std::vector<std::string> Columns(std::string_view table) const;
  bool HasColumn(std::string_view table, std::string_view column) const;

  // `what` names the query in error messages ("reading kernels").
  StatusOr<Statement> Prepare(const std::string& sql, std::string what) const;

  sqlite3* handle() const { return db_.get(); }
  const ExecContext& exec() const { return exec_; }
  // Whether any text read from this file (through this connection or one Reopen() made) held
  // bytes that are not UTF-8; they were replaced by U+FFFD. The command says so once.
  bool invalid_utf8_seen() const { return invalid_utf8_ && *invalid_utf8_; }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  Database(std::unique_ptr<sqlite3, Closer> db, std::string path, std::vector<std::string> tables, ExecContext exec,
           std::shared_ptr<std::atomic<bool>> invalid_utf8, std::shared_ptr<const DecompressedFile> decompressed)
      : db_(std::move(db)),
        path_(std::move(path)),
        tables_(std::move(tables)),
        exec_(std::move(exec)),
        invalid_utf8_(std::move(invalid_utf8)),
        decompressed_(std::move(decompressed)) {}
  static StatusOr<Database> Open(const std::string& path, const ExecContext& exec,
                                 std::shared_ptr<std::atomic<bool>> invalid_utf8,
                                 std::shared_ptr<const DecompressedFile> decompressed);
  static StatusOr<std::shared_ptr<const DecompressedFile>> Decompress(const std::string& path, Compression compression,
                                                                      const ExecContext& exec);
  static StatusOr<Database> OpenSqlite(const std::string& path, std::shared_ptr<const DecompressedFile> decompressed,
                                       const ExecContext& exec, std::shared_ptr<std::atomic<bool>> invalid_utf8);

  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
  std::vector<std::string> tables_;  // sorted
  ExecContext exec_;
  std::shared_ptr<std::atomic<bool>> invalid_utf8_;       // shared with the connections Reopen() makes
  std::shared_ptr<const DecompressedFile> decompressed_;  // what SQLite reads when `path_` is compressed
};

// How the command that opened `dbs` runs (the first's ExecContext; the default for none).
inline ExecContext ExecOf(std::span<const Database> dbs) { return dbs.empty() ? ExecContext{} : dbs.front().exec(); }

// Whether text read from any of `dbs` was not UTF-8.
inline bool AnyInvalidUtf8(std::span<const Database> dbs) {
  for (const Database& db : dbs) {
    if (db.invalid_utf8_seen()) return true;
  }
  return false;
}

// The message for an SQLite error code met while reading `file`, with what to do about it.
Status SqliteError(int rc, const std::string& file, const std::string& what, const char* detail);

}  // namespace cpprof::nsys
