// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/nvtx_reader.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "test_support.h"

namespace cpprof::nsys {
namespace {

// One line per (range, name) as a reader gives it, sorted: what ScanNvtx must agree on with
// the two-pass reading (NvtxDomains::Read, then ForEachNvtxRange).
std::string Line(const NvtxRangeRow& r, const std::vector<std::string>& names) {
  std::string all;
  for (const auto& n : names) all += n + ";";
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", all, r.start, r.end, r.event_type, r.domain_id, r.global_tid, r.text,
                     r.open, r.ends_on_other_thread);
}

std::vector<std::string> TwoPass(const Database& db, OpenEnd open_end) {
  auto domains = NvtxDomains::Read(db);
  EXPECT_TRUE(domains.ok()) << domains.status().message();
  std::vector<std::string> lines;
  Status s = ForEachNvtxRange(db, open_end, [&](const NvtxRangeRow& r) {
    lines.push_back(Line(r, domains->NamesFor(r.domain_id, r.global_tid)));
  });
  EXPECT_TRUE(s.ok()) << s.message();
  std::sort(lines.begin(), lines.end());
  return lines;
}

struct OnePassResult {
  std::vector<std::string> lines;
  NvtxScan scan;
  int restarts = 0;
  int64_t payload_bytes = 0;
};

OnePassResult OnePass(const Database& db, OpenEnd open_end) {
  OnePassResult out;
  NvtxScanCallbacks callbacks;
  callbacks.range = [&](const NvtxRangeRow& r, const std::vector<std::string>& names) {
    out.lines.push_back(Line(r, names));
  };
  callbacks.restart = [&] {
    out.lines.clear();
    ++out.restarts;
  };
  callbacks.payload = [&](const NvtxRangeRow& r) { out.payload_bytes += static_cast<int64_t>(r.payload.size()); };
  auto scan = ScanNvtx(db, open_end, callbacks);
  EXPECT_TRUE(scan.ok()) << scan.status().message();
  if (scan.ok()) out.scan = std::move(*scan);
  std::sort(out.lines.begin(), out.lines.end());
  return out;
}

std::map<std::pair<int64_t, int64_t>, int64_t> MarksBySql(const Database& db) {
  std::map<std::pair<int64_t, int64_t>, int64_t> marks;
  auto st = db.Prepare(
      "SELECT domainId, globalTid, count(*) FROM NVTX_EVENTS "
      "WHERE eventType NOT IN (59, 60, 70, 71, 75) GROUP BY 1, 2",
      "marks");
  EXPECT_TRUE(st.ok());
  while (st->Step()) marks[{st->Int(0), st->Int(1)}] = st->Int(2);
  return marks;
}

// Process 100: threads 1..3 (globalTid = pid << 24 | tid).
constexpr const char* kFixture = R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'registered'), (2, 'registered-domain');
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData BLOB);
INSERT INTO NVTX_EVENTS (start, end, eventType, domainId, globalTid, textId, text, endGlobalTid, binaryData) VALUES
  (100, 200, 59, 5, 1677721601, NULL, 'before its domain in the table', NULL, NULL),
  (50, NULL, 75, 5, 1677721601, NULL, 'late', NULL, NULL),
  (10, 20, 59, 0, 1677721601, 1, NULL, NULL, NULL),
  (30, NULL, 34, 5, 1677721601, NULL, 'a mark', NULL, x'0102'),
  (35, NULL, 34, 0, 1677721602, NULL, 'another mark', NULL, NULL),
  (300, NULL, 60, 0, 1677721602, NULL, 'still open', NULL, NULL),
  (400, 500, 59, 5, 1677721601, NULL, 'after', NULL, NULL),
  (40, NULL, 75, 5, 1677721601, NULL, 'late', NULL, NULL),
  (450, 700, 60, 0, 1677721601, NULL, 'ends elsewhere', 1677721602, NULL),
  (60, NULL, 75, 7, 1677721601, 2, NULL, NULL, NULL),
  (610, 620, 70, 7, 1677721602, NULL, 'registered domain', NULL, x'030405'),
  (900, NULL, 34, 0, 1677721601, NULL, 'last event', NULL, NULL);
)sql";

TEST(ScanNvtx, OnePassGivesWhatTwoPassesGive) {
  auto db = Database::Open(testing::MakeDatabase("scan_nvtx.sqlite", kFixture));
  ASSERT_TRUE(db.ok());
  for (OpenEnd open_end : {OpenEnd::kLastRange, OpenEnd::kLastNvtxEvent}) {
    OnePassResult one = OnePass(*db, open_end);
    EXPECT_EQ(one.lines, TwoPass(*db, open_end));
    EXPECT_EQ(one.restarts, 0);
    EXPECT_FALSE(one.scan.two_pass);
    EXPECT_EQ(one.scan.marks, MarksBySql(*db));
    EXPECT_EQ(one.payload_bytes, 5);
    EXPECT_EQ(one.scan.domains.AllNames(), (std::vector<std::string>{"late", "registered-domain"}));
  }
  // The range before its domain's create event (in table order) is still named by it; the open
  // range ends at the last range timestamp (700) or the last event (900).
  OnePassResult by_range = OnePass(*db, OpenEnd::kLastRange);
  EXPECT_NE(std::find(by_range.lines.begin(), by_range.lines.end(),
                      "late;|100|200|59|5|1677721601|before its domain in the table|false|false"),
            by_range.lines.end());
  EXPECT_NE(std::find(by_range.lines.begin(), by_range.lines.end(), ";|300|700|60|0|1677721602|still open|true|false"),
            by_range.lines.end());
  OnePassResult by_event = OnePass(*db, OpenEnd::kLastNvtxEvent);
  EXPECT_NE(std::find(by_event.lines.begin(), by_event.lines.end(), ";|300|900|60|0|1677721602|still open|true|false"),
            by_event.lines.end());
}

TEST(ScanNvtx, DomainCreatedOnASecondThreadLaterReadsAgain) {
  // Domain 5 gets a second creating thread (3) after ranges of it were given: both names apply
  // to every range of the domain in the process, as in nsys's join.
  std::string sql = std::string(kFixture) +
                    "INSERT INTO NVTX_EVENTS (start, end, eventType, domainId, globalTid, text) VALUES "
                    "(800, NULL, 75, 5, 1677721603, 'late-too'), (810, 820, 59, 5, 1677721603, 'third');";
  auto db = Database::Open(testing::MakeDatabase("scan_nvtx_restart.sqlite", sql));
  ASSERT_TRUE(db.ok());
  OnePassResult one = OnePass(*db, OpenEnd::kLastRange);
  EXPECT_EQ(one.restarts, 1);
  EXPECT_TRUE(one.scan.two_pass);
  EXPECT_EQ(one.lines, TwoPass(*db, OpenEnd::kLastRange));
  EXPECT_NE(std::find(one.lines.begin(), one.lines.end(), "late;late-too;|400|500|59|5|1677721601|after|false|false"),
            one.lines.end());
  EXPECT_EQ(one.scan.marks, MarksBySql(*db));
}

TEST(ScanNvtx, RealExportsOnePassEqualsTwoPasses) {
  for (const auto& name : testing::RealExportNames()) {
    SCOPED_TRACE(name);
    auto db = Database::Open(testing::RealExport(name));
    ASSERT_TRUE(db.ok());
    OnePassResult one = OnePass(*db, OpenEnd::kLastRange);
    EXPECT_FALSE(one.scan.two_pass);
    EXPECT_GT(one.lines.size(), 0u);
    EXPECT_EQ(one.lines, TwoPass(*db, OpenEnd::kLastRange));
    EXPECT_EQ(one.scan.marks, MarksBySql(*db));
  }
}

// Options::all_events with payloads gives every row of the table SQLite keeps with valid times
// (ValidTimesSql), in table order, with its type, text (registered or its own), end (its start
// when it has none) and binaryData, and counts the rest as damaged: plain, prefetched, and read by
// three readers in parts (40,000 rows: several parts of kPartRows rowids).
TEST(NvtxRangeCursor, AllEventsWithPayloadsAreTheTableAsSqlReadsIt) {
  std::string sql =
      std::string(kFixture) +
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000) "
      "INSERT INTO NVTX_EVENTS (start, end, eventType, domainId, globalTid, textId, text, endGlobalTid, "
      "binaryData) SELECT 1000 + i, CASE i % 11 WHEN 0 THEN NULL WHEN 1 THEN -5 ELSE 1000 + i + i % 7 END, "
      "CASE i % 5 WHEN 0 THEN 34 WHEN 1 THEN 60 WHEN 2 THEN 75 ELSE 59 END, i % 3, 1677721601 + i % 2, "
      "CASE i % 13 WHEN 0 THEN 1 ELSE NULL END, 'text ' || i, CASE i % 17 WHEN 0 THEN 1677721602 END, "
      "CASE i % 4 WHEN 0 THEN randomblob(i % 9) WHEN 1 THEN x'' END FROM n;";
  auto db = Database::Open(testing::MakeDatabase("cursor_all_events.sqlite", sql));
  ASSERT_TRUE(db.ok());
  auto line = [](int64_t start, int64_t end, int64_t type, int64_t domain, int64_t tid, std::string_view text,
                 bool ends_elsewhere, bool has_payload, std::string_view payload) {
    std::string hex;
    for (unsigned char c : payload) hex += fmt::format("{:02x}", c);
    return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}:{}", start, end, type, domain, tid, text, ends_elsewhere, has_payload,
                       hex);
  };
  std::vector<std::string> want;
  auto st = db->Prepare(
      "SELECT ne.start, coalesce(ne.end, ne.start), ne.eventType, ne.domainId, ne.globalTid, "
      "coalesce(sid.value, ne.text, ''), ne.endGlobalTid IS NOT NULL, ne.binaryData IS NOT NULL, "
      "ne.binaryData FROM NVTX_EVENTS AS ne LEFT JOIN StringIds AS sid ON ne.textId = sid.id WHERE " +
          ValidTimesSql(true, "ne.") + " ORDER BY ne.rowid",
      "reading the reference");
  ASSERT_TRUE(st.ok());
  while (st->Step()) {
    want.push_back(line(st->Int(0), st->Int(1), st->Int(2), st->Int(3), st->Int(4), st->Text(5), st->Int(6) != 0,
                        st->Int(7) != 0, st->Blob(8)));
  }
  auto count = db->Prepare("SELECT count(*) FROM NVTX_EVENTS", "counting");
  ASSERT_TRUE(count.ok() && count->Step());
  const int64_t damaged = count->Int(0) - static_cast<int64_t>(want.size());
  ASSERT_GT(damaged, 3000);
  ASSERT_GT(want.size(), 30'000u);
  for (int mode = 0; mode < 3; ++mode) {
    NvtxRangeCursor::Options options;
    options.all_events = options.payloads = true;
    options.prefetch = mode > 0;
    options.readers = mode == 2 ? 3 : 1;
    auto cursor = NvtxRangeCursor::Open(*db, options);
    ASSERT_TRUE(cursor.ok()) << cursor.status().message();
    std::vector<std::string> got;
    while (cursor->Next()) {
      const NvtxRangeRow& r = cursor->row();
      got.push_back(line(r.start, r.end, r.event_type, r.domain_id, r.global_tid, r.text, r.ends_on_other_thread,
                         r.has_payload, r.payload));
    }
    EXPECT_TRUE(cursor->status().ok()) << cursor->status().message();
    EXPECT_EQ(got, want) << "mode " << mode;
    EXPECT_EQ(cursor->damaged_rows(), damaged) << "mode " << mode;
  }
}

// The rows of a cursor in order, with its rowids; then its domains and whether it met an open range.
std::vector<std::string> CursorLines(const Database& db, NvtxRangeCursor::Options options,
                                     size_t stop_after = SIZE_MAX) {
  auto cursor = NvtxRangeCursor::Open(db, options);
  EXPECT_TRUE(cursor.ok()) << cursor.status().message();
  std::vector<std::string> lines;
  while (lines.size() < stop_after && cursor->Next()) {
    lines.push_back(Line(cursor->row(), {}) + fmt::format("|{}|{}", cursor->row().rowid, cursor->row().annotation));
  }
  if (lines.size() == stop_after) return lines;  // left before the end: the prefetch thread is stopped
  EXPECT_TRUE(cursor->status().ok()) << cursor->status().message();
  for (const auto& name : cursor->domains().AllNames()) lines.push_back("domain " + name);
  lines.push_back(fmt::format("saw_open {}", cursor->saw_open()));
  return lines;
}

// A cursor whose SQLite steps run on a thread of their own gives the same rows, annotations,
// domains and open-range flag as a plain one, whole or in rowid ranges, and can be left half read.
TEST(NvtxRangeCursor, PrefetchGivesWhatThePlainCursorGives) {
  auto db = Database::Open(testing::RealExport("cpfold-train-1x2"));
  ASSERT_TRUE(db.ok());
  NvtxRangeCursor::Options plain, prefetch;
  prefetch.prefetch = true;
  prefetch.readers = 1;  // SQLite on a thread of its own, the whole table in one part
  // annotate runs per range (on the reading thread with prefetch): here, the text's length.
  plain.annotate = prefetch.annotate = [](const NvtxRangeRow& r, std::string_view prepared) {
    EXPECT_TRUE(prepared.empty());
    return r.text.size() + 1 + static_cast<uint64_t>(r.rowid % 7) * 1'000'000;
  };
  const std::vector<std::string> want = CursorLines(*db, plain);
  ASSERT_NE(want[0].find("|record_param_comms, op_id = 1|false|false|4|4000030"), std::string::npos) << want[0];
  ASSERT_GT(want.size(), 100'000u);  // many batches
  EXPECT_EQ(CursorLines(*db, prefetch), want);
  const std::vector<std::string> head = CursorLines(*db, prefetch, 10);
  EXPECT_EQ(head, std::vector<std::string>(want.begin(), want.begin() + 10));

  // With prepare (annotate then on a fourth thread with prefetch): the same annotations, made
  // from what prepare left for each row; left half read mid-batch, every stage stops.
  NvtxRangeCursor::Options prepared_plain, prepared_prefetch;
  prepared_prefetch.prefetch = true;
  prepared_prefetch.readers = 1;
  prepared_plain.prepare = prepared_prefetch.prepare = [](const NvtxRangeRow& r, std::string& out) {
    out += fmt::format("{}", r.rowid % 7);
  };
  prepared_plain.annotate = prepared_prefetch.annotate = [](const NvtxRangeRow& r, std::string_view prepared) {
    return r.text.size() + 1 + std::stoull(std::string(prepared)) * 1'000'000;
  };
  EXPECT_EQ(CursorLines(*db, prepared_plain), want);
  EXPECT_EQ(CursorLines(*db, prepared_prefetch), want);
  EXPECT_EQ(CursorLines(*db, prepared_prefetch, 5000), std::vector<std::string>(want.begin(), want.begin() + 5000));

  // Read by three readers in parts (kPartRows rowids each), with and without prepare: the same
  // rows in table order, the same annotations (annotate then runs in order on its own thread).
  NvtxRangeCursor::Options readers = prefetch, prepared_readers = prepared_prefetch;
  readers.readers = prepared_readers.readers = 3;
  EXPECT_EQ(CursorLines(*db, readers), want);
  EXPECT_EQ(CursorLines(*db, prepared_readers), want);
  EXPECT_EQ(CursorLines(*db, prepared_readers, 40'000), std::vector<std::string>(want.begin(), want.begin() + 40'000));
  readers.annotate = nullptr;
  plain.annotate = nullptr;
  EXPECT_EQ(CursorLines(*db, readers), CursorLines(*db, plain));
  plain.annotate = prefetch.annotate;

  plain.rows = prefetch.rows = prepared_prefetch.rows = {1000, 50'000};
  EXPECT_EQ(CursorLines(*db, prefetch), CursorLines(*db, plain));
  EXPECT_EQ(CursorLines(*db, prepared_prefetch), CursorLines(*db, plain));

  auto fixture = Database::Open(testing::MakeDatabase("cursor_prefetch.sqlite", kFixture));
  ASSERT_TRUE(fixture.ok());
  NvtxRangeCursor::Options small_plain, small_prefetch;
  small_prefetch.prefetch = true;
  small_prefetch.readers = 1;
  EXPECT_EQ(CursorLines(*fixture, small_prefetch), CursorLines(*fixture, small_plain));
  small_prefetch.readers = 4;  // one part: one reader
  EXPECT_EQ(CursorLines(*fixture, small_prefetch), CursorLines(*fixture, small_plain));
}

}  // namespace
}  // namespace cpprof::nsys
