// nvtx_kern_sum on hand-written exports: each kernel counted in every range of its launching
// thread that holds its launch call, nested ranges of one name each counting it; kernels whose
// launch no range holds, or that have no launch in the export, in rows of their own. (Byte for
// byte against nsys on the real exports: tests/golden/stats_golden_test.cc.)
#include "pipeline/nvtx_kern_sum.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_support.h"

namespace cpprof::pipeline {
namespace {

// Thread 1677721607 (pid 100, tid 7) launches kernel 1 ([200, 300]) at [20, 25], kernel 2
// ([400, 420]) at [70, 75] and kernel 3 ([500, 510]) at [120, 130]; kernel 4 ([600, 605]) has no
// launch in the export.
std::vector<std::string> Rows(const std::string& name, const std::string& nvtx_values) {
  std::string sql = testing::ReadFile(testing::DataPath("sql/_schema.sql"));
  sql += R"sql(
INSERT INTO StringIds VALUES (1, 'k');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,
  globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid, demangledName,
  shortName) VALUES (200, 300, 0, 7, 1, 1677721600, 1, 1), (400, 420, 0, 7, 2, 1677721600, 1, 1),
  (500, 510, 0, 7, 3, 1677721600, 1, 1), (600, 605, 0, 7, 9, 1677721600, 1, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (20, 25, 1677721607, 1, 1), (70, 75, 1677721607, 2, 1),
  (120, 130, 1677721607, 3, 1);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES )sql";
  sql += nvtx_values + ";\n";
  auto db = nsys::Database::Open(testing::MakeDatabase(name, sql));
  EXPECT_TRUE(db.ok());
  if (!db.ok()) return {};
  auto t = NvtxKernSum(std::span<const nsys::Database>(&*db, 1));
  EXPECT_TRUE(t.ok()) << t.status().message();
  std::vector<std::string> out;
  if (!t.ok()) return out;
  t->ForEachRow([&](const std::vector<std::string>& row) {
    std::string line;
    for (const auto& cell : row) line += cell + ",";
    out.push_back(line);
  });
  return out;
}

TEST(NvtxKernSum, KernelsPerRangeThatHoldsTheirLaunch) {
  // ':outer' [0, 100] holds launches 1 and 2, ':inner' [10, 50] launch 1, the start/end range
  // ':open' (60, never ended: ends at the last range timestamp, 100) launch 2.
  const std::vector<std::string> want = {
      ",,,,0,1,5,5.0,5.0,5,5,0.0,k,",           // no launch: no process, thread or range
      ",,100,7,0,1,10,10.0,10.0,10,10,0.0,k,",  // launched outside every range
      ":inner,PushPop,100,7,1,1,100,100.0,100.0,100,100,0.0,k,",
      ":open,StartEnd,100,7,1,1,20,20.0,20.0,20,20,0.0,k,",
      ":outer,PushPop,100,7,1,2,120,60.0,60.0,20,100,56.6,k,",
  };
  EXPECT_EQ(Rows("kern_sum.sqlite",
                 "(0, 100, 59, 'outer', 1677721607), (10, 50, 59, 'inner', 1677721607), "
                 "(60, NULL, 60, 'open', 1677721607)"),
            want);
}

TEST(NvtxKernSum, NestedRangesOfOneNameCountAKernelOncePerRange) {
  // Two ':outer' ranges, one inside the other, both hold launches 1 and 2: two range instances,
  // two kernels, each duration taken twice. A range of another thread holds nothing.
  const std::vector<std::string> want = {
      ",,,,0,1,5,5.0,5.0,5,5,0.0,k,",
      ",,100,7,0,1,10,10.0,10.0,10,10,0.0,k,",
      ":outer,PushPop,100,7,2,2,240,60.0,60.0,20,100,46.2,k,",
  };
  EXPECT_EQ(Rows("kern_sum_nested.sqlite",
                 "(0, 100, 59, 'outer', 1677721607), (5, 90, 59, 'outer', 1677721607), "
                 "(0, 1000, 59, 'other thread', 1677721608)"),
            want);
}

}  // namespace
}  // namespace cpprof::pipeline
