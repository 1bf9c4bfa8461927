// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The rows of one query, stepped by SQLite on a thread (and a connection) of its own a few
// batches ahead of the reader. For a reader with work of its own per row: SQLite's stepping and
// decoding run on one core while the reader's work runs on another, so the read costs about
// the longer of the two instead of their sum.
//
// Same accessors as Statement, for the columns as declared: a column declared kInt is read with
// Int() (sqlite3_column_int64, as Statement::Int), kText with Text() (well-formed UTF-8, as
// Statement::Text), kBlob with Blob(); IsNull() and IsInteger() work for every column. Values are valid until
// the next Step(), as with Statement.
//
// With a thread budget of one (the database's ExecContext: one core, or CPPROF_THREADS=1) the query is stepped on the
// caller's thread: the same rows, the same values.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

class PrefetchedRows {
 public:
  enum class Kind : uint8_t { kInt, kText, kBlob };

  // `db` stays the caller's (its path is opened again for the reading thread). `own_thread`
  // false: stepped on the caller's thread (for callers that already run one per core).
  static StatusOr<PrefetchedRows> Open(const Database& db, const std::string& sql, std::string what,
                                       std::vector<Kind> columns, bool own_thread = true);
  PrefetchedRows(PrefetchedRows&&) noexcept;
  PrefetchedRows& operator=(PrefetchedRows&&) noexcept;
  ~PrefetchedRows();  // stops the reading thread when the rows were not all taken

  // Advances to the next row; false at the end or on an error (status()).
  bool Step();
  const Status& status() const;

  int64_t Int(int col) const;
  bool IsNull(int col) const;
  bool IsInteger(int col) const;  // stored as an integer (Statement::IsInteger)
  std::string_view Text(int col) const;
  std::string_view Blob(int col) const;

 private:
  struct Impl;
  explicit PrefetchedRows(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cpprof::nsys
