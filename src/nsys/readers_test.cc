// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The per-table readers' schema fallbacks (missing columns and tables), orders and the one
// globalTid -> globalPid rule, on small hand-written databases and the real exports.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/global_id.h"
#include "nsys/export_reader.h"
#include "nsys/gpu_work_loader.h"
#include "nsys/launch_reader.h"
#include "nsys/nvtx_reader.h"
#include "test_support.h"

namespace cpprof::nsys {
namespace {

// Process 100 on hardware id 1 (as real exports carry it: bit 48), thread 7.
constexpr int64_t kPid = (int64_t{1} << 48) | (int64_t{100} << 24);
constexpr int64_t kTid = kPid | 7;

Database Open(const std::string& name, const std::string& sql) {
  auto db = Database::Open(testing::MakeDatabase(name, sql));
  EXPECT_TRUE(db.ok()) << db.status().message();
  return std::move(db).value();
}

TEST(GlobalId, ThreadToProcessKeepsTheHardwareBits) {
  EXPECT_EQ(model::GlobalPidOf(kTid), kPid);
  EXPECT_EQ(model::PidOf(kTid), 100);
  EXPECT_EQ(model::PidOf(kPid), 100);
  EXPECT_EQ(model::TidOf(kTid), 7);
  // Two hosts with the same pid stay two processes.
  EXPECT_NE(model::GlobalPidOf(kTid), model::GlobalPidOf((int64_t{2} << 48) | (int64_t{100} << 24) | 7));
}

// In nsys's real exports every launch's globalTid maps onto the globalPid of the ops it launched,
// and PROCESSES' pid is the pid bits of globalPid.
TEST(GlobalId, RealExportsJoinThreadsToProcesses) {
  for (const auto& name : testing::RealExportNames()) {
    SCOPED_TRACE(name);
    auto db = Database::Open(testing::RealExport(name));
    ASSERT_TRUE(db.ok());
    auto st = db->Prepare(
        "SELECT r.globalTid, k.globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN "
        "CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId LIMIT 20000",
        "join");
    ASSERT_TRUE(st.ok());
    int64_t joined = 0, same_process = 0;
    while (st->Step()) {
      ++joined;
      // Correlation ids repeat across processes: count the pairs whose pid bits agree.
      if (model::PidOf(st->Int(0)) != model::PidOf(st->Int(1))) continue;
      ++same_process;
      EXPECT_EQ(model::GlobalPidOf(st->Int(0)), st->Int(1));
    }
    EXPECT_GT(same_process, 0) << joined;
    auto procs = ReadProcesses(*db);
    ASSERT_TRUE(procs.ok());
    for (const auto& [gpid, p] : *procs) EXPECT_EQ(model::PidOf(gpid), p.pid);
  }
}

const std::string kNoCorrelation = R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'k1'), (2, 'cudaLaunchKernel'), (3, 'main'), (4, 'worker');
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 20, 0, 7, 281476654432256, 1, 1), (30, 45, 1, 7, 281476654432256, 1, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, globalPid INTEGER, bytes INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (50, 55, 0, 7, 281476654432256, 64);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER,
  nameId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (5, 8, 281476654432263, 2);
CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);
INSERT INTO ThreadNames VALUES (3, 0, 281476654432263), (4, 0, 281476654432263), (3, 0, 281476654432264);
)sql";

TEST(Readers, MissingCorrelationIdReadsAsNone) {
  Database db = Open("no_corr.sqlite", kNoCorrelation);
  auto schema = ProbeExport(db);
  ASSERT_TRUE(schema.ok()) << schema.status().message();
  std::vector<KernelRow> kernels;
  KernelColumns cols;
  cols.launch_config = true;  // no grid/block columns either
  ASSERT_TRUE(ForEachKernel(
                  db, *schema, [&](const KernelRow& r) { kernels.push_back(r); }, cols)
                  .ok());
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_FALSE(kernels[0].has_correlation);
  EXPECT_FALSE(kernels[0].has_launch_config);
  EXPECT_EQ(kernels[1].end, 45);

  int memops = 0;
  ASSERT_TRUE(ForEachMemOp(db, [&](const MemOpRow& r) {
                ++memops;
                EXPECT_FALSE(r.has_correlation);
                EXPECT_EQ(r.copy_kind, -1);
              }).ok());
  EXPECT_EQ(memops, 1);

  int launches = 0;
  ASSERT_TRUE(ForEachOpLaunch(db, [&](int64_t, int64_t, int64_t, int64_t) { ++launches; }).ok());
  EXPECT_EQ(launches, 0);  // no op names its launch

  auto all = ApiCallCursor::Open(db, false, false);
  ASSERT_TRUE(all.ok());
  ASSERT_TRUE(all->Next());
  EXPECT_FALSE(all->row().has_correlation);
  EXPECT_EQ(all->row().name_id, 2);
  EXPECT_EQ(model::GlobalPidOf(all->row().global_tid), kPid);
  EXPECT_FALSE(all->Next());
  EXPECT_TRUE(all->status().ok());
  auto only_launches = ApiCallCursor::Open(db, false, true);
  ASSERT_TRUE(only_launches.ok());
  EXPECT_FALSE(only_launches->Next());

  auto names = ReadThreadNames(db);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->at(kTid), "worker");  // named twice: the later name
  EXPECT_EQ(names->size(), 2u);

  auto procs = ReadGpuProcesses(db);
  ASSERT_TRUE(procs.ok());
  ASSERT_EQ(procs->size(), 1u);
  EXPECT_EQ((*procs)[0].pid, 100);
  EXPECT_EQ((*procs)[0].ops_per_device.at(0), 2);  // a kernel and a memset
  EXPECT_EQ((*procs)[0].MainDevice(), 0);

  auto end = LastApiCallEnd(db);
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, 8);
}

TEST(Readers, MissingOptionalTablesAreEmpty) {
  Database db = Open("bare.sqlite", "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);");
  auto calls = ApiCallCursor::Open(db, true, true);
  ASSERT_TRUE(calls.ok());
  EXPECT_FALSE(calls->Next());
  EXPECT_TRUE(calls->status().ok());
  auto names = ReadThreadNames(db);
  ASSERT_TRUE(names.ok());
  EXPECT_TRUE(names->empty());
  auto procs = ReadGpuProcesses(db);
  ASSERT_TRUE(procs.ok());
  EXPECT_TRUE(procs->empty());
  auto rows = RowsUpperBound(db, kKernelTable);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, 0);
}

// Thread 1677721601 (pid 100, tid 1); a domain created after its first range in the table.
constexpr const char* kNvtx = R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'registered');
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,
  globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO NVTX_EVENTS (start, end, eventType, domainId, globalTid, textId, text, endGlobalTid) VALUES
  (100, 200, 59, 5, 1677721601, NULL, 'b', NULL),
  (50, NULL, 75, 5, 1677721601, NULL, 'dom', NULL),
  (10, 20, 59, 0, 1677721601, 1, NULL, NULL),
  (100, 300, 60, 0, 1677721601, NULL, 'longer', 1677721602),
  (150, NULL, 60, 0, 1677721601, NULL, 'open', NULL),
  (30, NULL, 34, 0, 1677721601, NULL, 'a mark', NULL);
)sql";

TEST(NvtxRangeCursor, TableOrderSortedOrderAndOpenRanges) {
  Database db = Open("nvtx_cursor.sqlite", kNvtx);
  auto read = [&](NvtxRangeCursor::Options o, bool* saw_open) {
    std::vector<std::string> out;
    auto c = NvtxRangeCursor::Open(db, o);
    EXPECT_TRUE(c.ok());
    while (c->Next()) {
      const NvtxRangeRow& r = c->row();
      out.push_back(std::string(r.text) + "@" + std::to_string(r.start) + "-" + std::to_string(r.end) +
                    (r.ends_on_other_thread ? "/" + std::to_string(TidOf(r.end_global_tid)) : ""));
    }
    EXPECT_TRUE(c->status().ok());
    EXPECT_EQ(c->domains().NamesFor(5, 1677721601).front(), "dom");
    *saw_open = c->saw_open();
    return out;
  };
  bool saw_open = false;
  EXPECT_EQ(read({}, &saw_open),
            (std::vector<std::string>{"b@100-200", "registered@10-20", "longer@100-300/2", "open@150-150"}));
  EXPECT_TRUE(saw_open);  // and its end is unknown: ask again with one
  NvtxRangeCursor::Options sorted;
  sorted.by_start = true;
  sorted.longest_first = true;
  auto last = LastNvtxTimestamp(db, OpenEnd::kLastRange);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, 300);
  sorted.open_end = *last;
  EXPECT_EQ(read(sorted, &saw_open),
            (std::vector<std::string>{"registered@10-20", "longer@100-300/2", "b@100-200", "open@150-300"}));
  EXPECT_FALSE(saw_open);
}

}  // namespace
}  // namespace cpprof::nsys
