// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// PrefetchedRows gives what a Statement gives, row for row and value for value (NULLs, integers
// stored as text, invalid UTF-8, blobs, more rows than a batch), on one thread or two; and
// ValidTimes agrees with ValidTimesSql.
#include "nsys/row_prefetch.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "nsys/export_reader.h"
#include "test_support.h"

namespace cpprof::nsys {
namespace {

using K = PrefetchedRows::Kind;

// 40,000 rows (batches are reused), every kind of value in every column now and then.
std::string Fixture() {
  std::string sql =
      "CREATE TABLE T (a, b, t, bl);"
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000) "
      "INSERT INTO T SELECT i, CASE i % 7 WHEN 0 THEN NULL WHEN 1 THEN 'x' || i WHEN 2 THEN '12' ELSE i * 3 END, "
      "CASE i % 5 WHEN 0 THEN NULL WHEN 1 THEN CAST(X'61FF62' AS TEXT) WHEN 2 THEN 42 ELSE printf('text %d', i) END, "
      "CASE i % 3 WHEN 0 THEN NULL ELSE randomblob(i % 40) END FROM n;";
  return sql;
}

std::vector<std::string> Lines(bool prefetched, const Database& db) {
  const std::string sql = "SELECT a, b, t, bl FROM T ORDER BY a";
  std::vector<std::string> out;
  auto line = [](const auto& r) {
    std::string s = std::to_string(r.Int(0)) + "|" + std::to_string(r.IsNull(1)) + std::to_string(r.IsInteger(1)) +
                    ":" + std::to_string(r.Int(1)) + "|" + std::to_string(r.IsNull(2)) + ":" + std::string(r.Text(2)) +
                    "|" + std::to_string(r.IsNull(3)) + ":" + std::string(r.Blob(3));
    return s;
  };
  if (prefetched) {
    auto rows = PrefetchedRows::Open(db, sql, "reading T", {K::kInt, K::kInt, K::kText, K::kBlob});
    EXPECT_TRUE(rows.ok()) << rows.status().message();
    while (rows->Step()) out.push_back(line(*rows));
    EXPECT_TRUE(rows->status().ok());
  } else {
    auto st = db.Prepare(sql, "reading T");
    EXPECT_TRUE(st.ok());
    while (st->Step()) out.push_back(line(*st));
  }
  return out;
}

ExecContext Threads(size_t n) {
  ExecContext exec;
  exec.threads = n;
  return exec;
}

TEST(PrefetchedRows, GivesWhatTheStatementGivesOnOneThreadOrTwo) {
  const std::string path = testing::MakeDatabase("prefetch_rows.sqlite", Fixture());
  auto one = Database::Open(path, Threads(1));
  ASSERT_TRUE(one.ok());
  const std::vector<std::string> want = Lines(false, *one);
  ASSERT_EQ(want.size(), 40000u);
  for (size_t threads : {1, 2, 4}) {
    auto db = Database::Open(path, Threads(threads));
    ASSERT_TRUE(db.ok());
    EXPECT_EQ(Lines(true, *db), want) << "threads " << threads;
  }
}

// The timing line of a prefetched read goes to the database's diagnostics, not to stderr.
TEST(PrefetchedRows, TimingGoesToTheContextsDiagnostics) {
  struct Lines : Diagnostics {
    std::vector<std::string> lines;
    void Line(std::string_view line) override { lines.emplace_back(line); }
  } sink;
  ExecContext exec = Threads(2);
  exec.timing = true;
  exec.diagnostics = &sink;
  auto db = Database::Open(testing::MakeDatabase("prefetch_timing.sqlite", Fixture()), exec);
  ASSERT_TRUE(db.ok());
  {
    auto rows = PrefetchedRows::Open(*db, "SELECT a FROM T", "reading T", {K::kInt});
    ASSERT_TRUE(rows.ok());
    while (rows->Step()) {
    }
  }
  ASSERT_EQ(sink.lines.size(), 1u);
  EXPECT_EQ(sink.lines[0].rfind("cpprof: timing: reading T: SQLite waited ", 0), 0u) << sink.lines[0];
}

// Text that is not UTF-8 comes back with U+FFFD, and the database that gave it (or the one it was
// reopened from, for a reading thread) says so; another connection to the file does not.
TEST(Database, InvalidUtf8IsTheDatabasesFactAndItsReopenedConnections) {
  const std::string path = testing::MakeDatabase(
      "invalid_utf8.sqlite", "CREATE TABLE S (v TEXT); INSERT INTO S VALUES ('ok'), (CAST(X'62FF' AS TEXT));");
  auto db = Database::Open(path, Threads(2));
  ASSERT_TRUE(db.ok());
  auto other = Database::Open(path);
  ASSERT_TRUE(other.ok());
  auto reopened = db->Reopen();
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(reopened->exec().threads, 2u) << "a reopened connection runs as the command does";
  auto st = reopened->Prepare("SELECT v FROM S ORDER BY rowid", "reading S");
  ASSERT_TRUE(st.ok());
  ASSERT_TRUE(st->Step());
  EXPECT_EQ(st->Text(0), "ok");
  EXPECT_FALSE(db->invalid_utf8_seen());
  ASSERT_TRUE(st->Step());
  EXPECT_EQ(st->Text(0), "b\xEF\xBF\xBD");
  EXPECT_TRUE(db->invalid_utf8_seen());
  EXPECT_TRUE(reopened->invalid_utf8_seen());
  EXPECT_FALSE(other->invalid_utf8_seen());
}

TEST(PrefetchedRows, StopsCleanlyWhenLeftEarlyAndSaysSqlErrors) {
  auto db = Database::Open(testing::MakeDatabase("prefetch_early.sqlite", Fixture()), Threads(2));
  ASSERT_TRUE(db.ok());
  {
    auto rows = PrefetchedRows::Open(*db, "SELECT a FROM T", "reading T", {K::kInt});
    ASSERT_TRUE(rows.ok());
    ASSERT_TRUE(rows->Step());
    EXPECT_EQ(rows->Int(0), 1);
  }  // the reading thread is stopped and joined here, with batches still queued
  // A query SQLite refuses is an error that names what was being read and why.
  auto bad = PrefetchedRows::Open(*db, "SELECT nope FROM T", "reading T", {K::kInt});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("reading T"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("nope"), std::string::npos) << bad.status().message();
}

// ValidTimes (C++) and ValidTimesSql (SQLite) keep and drop the same rows.
TEST(ValidTimes, AgreesWithTheSqlCondition) {
  const std::string max = std::to_string(kMaxTimestampNs), low = std::to_string(-kMaxTimestampNs / 2);
  const std::vector<std::string> values = {"0",
                                           "1",
                                           "5",
                                           "-1",
                                           max,
                                           max + "+1",
                                           low,
                                           low + "-1",
                                           "NULL",
                                           "'7'",
                                           "1.5",
                                           "X'01'",
                                           "9223372036854775807",
                                           "-9223372036854775808"};
  std::string sql = "BEGIN; CREATE TABLE R (id INTEGER PRIMARY KEY, start, end);";
  int id = 0;
  for (const auto& s : values) {
    for (const auto& e : values) sql += "INSERT INTO R VALUES (" + std::to_string(++id) + ", " + s + ", " + e + ");";
  }
  auto db = Database::Open(testing::MakeDatabase("valid_times.sqlite", sql + "COMMIT;"));
  ASSERT_TRUE(db.ok());
  for (bool null_end : {false, true}) {
    auto st = db->Prepare("SELECT start, end, " + ValidTimesSql(null_end) + " FROM R ORDER BY id", "reading R");
    ASSERT_TRUE(st.ok());
    int rows = 0, kept = 0;
    while (st->Step()) {
      ++rows;
      const bool want = st->Int(2) != 0;
      kept += want;
      EXPECT_EQ(ValidTimes(*st, 0, 1, null_end), want) << "row " << rows << " null_end " << null_end;
    }
    EXPECT_EQ(rows, static_cast<int>(values.size() * values.size()));
    EXPECT_GT(kept, 5);
  }
}

}  // namespace
}  // namespace cpprof::nsys
