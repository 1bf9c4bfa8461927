// nvtx_gpu_proj_sum on hand-written exports: the streaming sweep's answer does not depend on the
// table order (NVTX out of time order is read again sorted, API calls a little out of order are
// reordered in a small buffer), and ranges still open at the end
// of the capture end at the last range timestamp (read again with it). nvtx_sum: the same rows
// on any number of threads (the table read in parts), and from the one-pass reading.
#include "pipeline/nvtx_reports.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "pipeline/nvtx_group_totals.h"
#include "test_support.h"

namespace cpprof::pipeline {
namespace {

// Thread 1677721607 (pid 100, tid 7): ':outer' [0, 100] holds ':inner' [10, 50] and the open
// start/end range ':open' from 60 (ends at 100, the last range timestamp). Launch 1 (API call
// [20, 25]) ran a kernel over [200, 300]; launch 2 ([70, 75]) a kernel [400, 420] and a memset
// [430, 450]; launch 3 ([120, 130]) is outside every range.
std::string Export(const std::vector<std::string>& nvtx_rows, bool calls_reversed) {
  std::string sql = testing::ReadFile(testing::DataPath("sql/_schema.sql"));
  sql += R"sql(
INSERT INTO StringIds VALUES (1, 'k');
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,
  globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid, demangledName,
  shortName) VALUES (200, 300, 0, 7, 1, 1677721600, 1, 1), (400, 420, 0, 7, 2, 1677721600, 1, 1),
  (500, 510, 0, 7, 3, 1677721600, 1, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (430, 450, 0, 7, 2, 1677721600, 8);
)sql";
  sql += calls_reversed ? "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (120, 130, 1677721607, 3, 1), "
                          "(70, 75, 1677721607, 2, 1), (20, 25, 1677721607, 1, 1);\n"
                        : "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (20, 25, 1677721607, 1, 1), "
                          "(70, 75, 1677721607, 2, 1), (120, 130, 1677721607, 3, 1);\n";
  for (const auto& row : nvtx_rows) {
    sql += "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES " + row + ";\n";
  }
  return sql;
}

// Each row of `t` as its cells joined, each followed by ','.
std::vector<std::string> Lines(const model::StatsTable& t) {
  std::vector<std::string> out;
  t.ForEachRow([&](const std::vector<std::string>& row) {
    std::string line;
    for (const auto& cell : row) line += cell + ",";
    out.push_back(line);
  });
  return out;
}

std::vector<std::string> Rows(const std::string& name, const std::vector<std::string>& nvtx_rows,
                              bool calls_reversed = false) {
  auto db = nsys::Database::Open(testing::MakeDatabase(name, Export(nvtx_rows, calls_reversed)));
  EXPECT_TRUE(db.ok());
  auto t = NvtxGpuProjSum(*db);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return Lines(*t);
}

// nvtx_sum's rows of `db`'s export, read with a thread budget of `threads` (ExecContext::threads),
// in parts of `min_rows` or more.
std::vector<std::string> SumLines(const nsys::Database& db, size_t threads, int64_t min_rows = kMinNvtxRowsPerThread) {
  ExecContext exec;
  exec.threads = threads;
  auto own = nsys::Database::Open(db.path(), exec);
  EXPECT_TRUE(own.ok());
  if (!own.ok()) return {};
  auto t = NvtxSum(*own, min_rows);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? Lines(*t) : std::vector<std::string>{};
}

TEST(NvtxGpuProjSum, SameAnswerInAnyTableOrder) {
  const std::string outer = "(0, 100, 59, 'outer', 1677721607)", inner = "(10, 50, 59, 'inner', 1677721607)",
                    open = "(60, NULL, 60, 'open', 1677721607)";
  std::vector<std::string> want = {
      ":outer,PushPop,250,100,1,250.0,250.0,250,250,0.0,2,2.0,0.0,2.0,",
      ":inner,PushPop,100,40,1,100.0,100.0,100,100,0.0,1,1.0,1.0,0.0,",
      ":open,StartEnd,50,40,1,50.0,50.0,50,50,0.0,1,1.0,1.0,0.0,",
  };
  EXPECT_EQ(Rows("proj_sorted.sqlite", {outer, inner, open}), want);
  EXPECT_EQ(Rows("proj_shuffled.sqlite", {open, inner, outer}), want);
  // API calls a little out of time order go through the reorder buffer.
  EXPECT_EQ(Rows("proj_calls_reversed.sqlite", {outer, inner, open}, true), want);
}

// A domain created in two processes names ranges of both the same: one row, its instances
// gathered from both (the sweep keys them apart, the naming merges them).
TEST(NvtxGpuProjSum, OneRowForADomainOfSeveralProcesses) {
  std::string sql = testing::ReadFile(testing::DataPath("sql/_schema.sql"));
  sql += R"sql(
INSERT INTO StringIds VALUES (1, 'k');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,
  globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid, demangledName,
  shortName) VALUES (200, 300, 0, 7, 1, 1677721600, 1, 1), (200, 260, 1, 7, 1, 1694498816, 1, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (20, 25, 1677721607, 1, 1), (20, 25, 1694498823, 1, 1);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES
  (0, NULL, 75, 'cpfold', 1677721607, 1), (0, NULL, 75, 'cpfold', 1694498823, 1),
  (10, 50, 59, 'blk', 1677721607, 1), (10, 50, 59, 'blk', 1694498823, 1), (12, 14, 59, 'aten::mm', 1694498823, 0);
)sql";
  auto db = nsys::Database::Open(testing::MakeDatabase("proj_two_processes.sqlite", sql));
  ASSERT_TRUE(db.ok()) << db.status().message();
  auto t = NvtxGpuProjSum(*db);
  ASSERT_TRUE(t.ok()) << t.status().message();
  std::vector<std::string> out = Lines(*t);
  // (100 + 60) ns projected over 2 instances; stdev sqrt(((100-80)^2 + (60-80)^2) / 1) = 28.3.
  EXPECT_EQ(out, std::vector<std::string>{"cpfold:blk,PushPop,160,80,2,80.0,80.0,60,100,28.3,2,1.0,0.0,0.0,"});
}

// nvtx_sum streams the table once; ranges given late (open at the end of the capture) make it
// read them again in table order, with the open one ending at the last NVTX timestamp.
TEST(NvtxSum, OpenRangesEndAtTheLastNvtxTimestamp) {
  std::string sql = testing::ReadFile(testing::DataPath("sql/_schema.sql"));
  sql += R"sql(
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,
  globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES
  (0, 10, 59, 'op, seq = 1', 7, 0), (20, NULL, 60, 'op, seq = 1', 7, 0), (30, 34, 59, 'op, seq = 1', 7, 0),
  (40, 41, 59, 'op, seq = 2', 7, 0), (50, NULL, 34, 'a mark', 7, 0);
)sql";
  auto db = nsys::Database::Open(testing::MakeDatabase("nvtx_sum_open.sqlite", sql));
  ASSERT_TRUE(db.ok()) << db.status().message();
  // The open start/end range ends at 50 (the mark, the last NVTX timestamp): 30 of 45 ns.
  const std::vector<std::string> want = {
      "66.7,30,1,30.0,30.0,30,30,0.0,StartEnd,:op, seq = 1,",
      "31.1,14,2,7.0,7.0,4,10,4.2,PushPop,:op, seq = 1,",
      "2.2,1,1,1.0,1.0,1,1,0.0,PushPop,:op, seq = 2,",
  };
  EXPECT_EQ(SumLines(*db, 1), want);
  EXPECT_EQ(SumLines(*db, 4, 1), want);  // a part per row: the open range in the second
}

// A domain id that names ranges differently in two processes (1 is 'a' in pid 100, 'b' in pid
// 101): the parts cannot key by domain id alone, so nvtx_sum reads the table in one pass; the
// same answer either way.
TEST(NvtxSum, DomainIdNamedDifferentlyPerProcess) {
  std::string sql = testing::ReadFile(testing::DataPath("sql/_schema.sql"));
  sql += R"sql(
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,
  globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES
  (0, NULL, 75, 'a', 1677721607, 1), (0, NULL, 75, 'b', 1694498823, 1),
  (10, 14, 59, 'blk', 1677721607, 1), (10, 20, 59, 'blk', 1694498823, 1), (30, 33, 59, 'blk', 1677721607, 1),
  (40, 41, 59, 'blk', 1677721607, 0), (50, 52, 59, 'blk', 1694498823, 0);
)sql";
  auto db = nsys::Database::Open(testing::MakeDatabase("nvtx_sum_domains.sqlite", sql));
  ASSERT_TRUE(db.ok()) << db.status().message();
  const std::vector<std::string> want = {
      "50.0,10,1,10.0,10.0,10,10,0.0,PushPop,b:blk,",
      "35.0,7,2,3.5,3.5,3,4,0.7,PushPop,a:blk,",
      "15.0,3,2,1.5,1.5,1,2,0.7,PushPop,:blk,",
  };
  EXPECT_EQ(SumLines(*db, 1), want);
  EXPECT_EQ(SumLines(*db, 4, 1), want);
}

// nvtx_sum reads the table in rowid ranges on all threads and merges them in table order: the
// same rows, byte for byte, on one thread and on several, however small the parts (a real
// export: 250 k ranges in three domains of two processes, a million rows of CSV).
TEST(NvtxSum, SameRowsOnOneThreadAndInManyParts) {
  auto db = nsys::Database::Open(testing::RealExport("cpfold-train-1x2"));
  ASSERT_TRUE(db.ok()) << db.status().message();
  const std::vector<std::string> one = SumLines(*db, 1);
  ASSERT_GT(one.size(), 1000u);
  EXPECT_EQ(SumLines(*db, 3, 1000), one);
  EXPECT_EQ(SumLines(*db, 8, 20'000), one);
}

}  // namespace
}  // namespace cpprof::pipeline

namespace cpprof::pipeline {
namespace {

// A group's counts are 32-bit until one would pass 2^32 - 1; then the group moves whole to the
// side table and its sums go on exactly (others stay narrow).
TEST(GroupTotalsList, CountsPast32BitsMoveTheGroupAndStayExact) {
  GroupTotalsList totals;
  const uint32_t a = totals.New(), b = totals.New();
  totals.Add(a, {10, 3'000'000'000, 5, 1, 1});
  totals.Add(b, {7, 1, 2, 3, 1});
  totals.Add(a, {20, 3'000'000'000, 6, 2, 1});  // launches pass 2^32
  totals.Add(a, {INT64_MAX, 1, 1, 1, 1});
  const GroupTotals got = totals.Get(a);
  EXPECT_EQ(got.range_time, INT64_MAX);  // saturated
  EXPECT_EQ(got.launches, 6'000'000'001);
  EXPECT_EQ(got.level_sum, 12);
  EXPECT_EQ(got.children, 4);
  EXPECT_EQ(got.levels, 3);
  const GroupTotals other = totals.Get(b);
  EXPECT_EQ(other.range_time, 7);
  EXPECT_EQ(other.launches, 1);
  EXPECT_EQ(other.levels, 1);
  EXPECT_EQ(totals.size(), 2u);
}

}  // namespace
}  // namespace cpprof::pipeline

namespace cpprof::pipeline {
namespace {

// A rowid far past the rows (2^32: a damaged or edited export) sizes nothing: the reports read
// the same rows as without it, in the same memory (they sized buffers by the largest rowid and
// ran out of memory, or split the table into 43,000 empty parts).
TEST(NvtxReports, ARowidFarPastTheRowsSizesNothing) {
  const std::vector<std::string> ranges = {"(0, 100, 59, 'outer', 1677721607)", "(10, 50, 59, 'inner', 1677721607)"};
  auto table = [&](const std::string& name, const std::string& damage, bool proj) {
    auto db = nsys::Database::Open(testing::MakeDatabase(name, Export(ranges, false) + damage));
    EXPECT_TRUE(db.ok());
    auto t = proj ? NvtxGpuProjSum(*db) : NvtxSum(*db, 1);
    EXPECT_TRUE(t.ok()) << t.status().message();
    return t.ok() ? Lines(*t) : std::vector<std::string>{};
  };
  const std::string damage =
      "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = 4294967296 WHERE rowid = 3;\n"
      "UPDATE NVTX_EVENTS SET rowid = 4294967296 WHERE rowid = 2;\n";
  for (bool proj : {true, false}) {
    const std::vector<std::string> want = table(proj ? "rowid_plain_p.sqlite" : "rowid_plain_s.sqlite", "", proj);
    EXPECT_FALSE(want.empty());
    EXPECT_EQ(table(proj ? "rowid_far_p.sqlite" : "rowid_far_s.sqlite", damage, proj), want) << proj;
  }
}

}  // namespace
}  // namespace cpprof::pipeline
