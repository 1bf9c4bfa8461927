// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/memory_reader.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>

#include "test_support.h"

namespace cpprof::nsys {
namespace {

using testing::DataPath;
using testing::MakeDatabase;
using testing::ReadFile;
using testing::RealExport;

using testing::SqlFixture;

model::MemoryUsage Read(const std::string& path, MemoryOptions options = {}) {
  auto db = Database::Open(path);
  EXPECT_TRUE(db.ok()) << db.status().message();
  auto usage = ReadMemoryUsage(*db, options);
  EXPECT_TRUE(usage.ok()) << usage.status().message();
  return *usage;
}

TEST(MemoryReader, PeakThreadsCanBeLeftUnresolved) {
  MemoryOptions o;
  o.peak_threads = false;
  model::MemoryUsage u = Read(SqlFixture("capture_memory"), o);
  ASSERT_EQ(u.series.size(), 3u);
  EXPECT_EQ(u.series[0].peak_correlation_id, 3);  // still known: the caller resolves it
  EXPECT_EQ(u.series[0].peak_global_tid, 0);
}

TEST(MemoryReader, FixtureByHand) {
  model::MemoryUsage u = Read(SqlFixture("capture_memory"));
  ASSERT_TRUE(u.captured);
  EXPECT_EQ(u.ignored_events, 2);  // pinned and managed
  ASSERT_EQ(u.series.size(), 3u);
  const auto& a = u.series[0];
  EXPECT_EQ(a.pid, 100);
  EXPECT_EQ(a.device, 0);
  EXPECT_EQ(a.peak_bytes, 250);  // 100 + 50 - 100 + 200: a free before the peak
  EXPECT_EQ(a.peak_ns, 40);
  EXPECT_EQ(a.peak_correlation_id, 3);
  EXPECT_EQ(a.peak_global_tid, 1677721611);
  EXPECT_EQ(a.final_bytes, 55);
  EXPECT_EQ(a.events, 6);
  EXPECT_EQ(a.unmatched_frees, 0);
  std::vector<std::pair<int64_t, int64_t>> timeline;
  for (const auto& p : a.timeline) timeline.emplace_back(p.time_ns, p.bytes);
  EXPECT_EQ(timeline,
            (std::vector<std::pair<int64_t, int64_t>>{{10, 100}, {20, 150}, {30, 50}, {40, 250}, {50, 50}, {60, 55}}));
  const auto& b0 = u.series[1];
  EXPECT_EQ(b0.pid, 200);
  EXPECT_EQ(b0.device, 0);
  EXPECT_EQ(b0.peak_bytes, 7);
  EXPECT_EQ(b0.peak_correlation_id, 0);  // device static only: no runtime call
  EXPECT_EQ(b0.peak_global_tid, 0);
  const auto& b1 = u.series[2];
  EXPECT_EQ(b1.device, 1);
  EXPECT_EQ(b1.peak_bytes, 304);
  EXPECT_EQ(b1.peak_ns, 16);
  EXPECT_EQ(b1.peak_correlation_id, 1) << "static memory has no call: the latest call up to the peak";
  EXPECT_EQ(b1.peak_global_tid, 3355443222) << "correlation ids are per process: B's call, not A's";
  EXPECT_EQ(b1.final_bytes, 124);
  EXPECT_EQ(b1.events, 4);

  auto per_process = PeakSeriesPerProcess(u);
  ASSERT_EQ(per_process.size(), 2u);
  EXPECT_EQ(per_process[0].pid, 100);
  EXPECT_EQ(per_process[0].peak_bytes, 250);
  EXPECT_EQ(per_process[1].pid, 200);
  EXPECT_EQ(per_process[1].device, 1);
  EXPECT_EQ(per_process[1].peak_bytes, 304);
}

TEST(MemoryReader, NotCapturedSaysHow) {
  model::MemoryUsage u = Read(SqlFixture("overlapping_streams"));
  EXPECT_FALSE(u.captured);
  EXPECT_TRUE(u.series.empty());
  EXPECT_NE(u.note.find("--cuda-memory-usage true"), std::string::npos) << u.note;
}

TEST(MemoryReader, KindsCounted) {
  EXPECT_FALSE(IsGpuMemoryKind(0));
  EXPECT_FALSE(IsGpuMemoryKind(1));
  EXPECT_TRUE(IsGpuMemoryKind(2));
  EXPECT_TRUE(IsGpuMemoryKind(3));
  EXPECT_FALSE(IsGpuMemoryKind(4));
  EXPECT_TRUE(IsGpuMemoryKind(5));
  EXPECT_FALSE(IsGpuMemoryKind(6));
  EXPECT_FALSE(IsGpuMemoryKind(7));
}

TEST(Downsample, KeepsPeakEndsAndBound) {
  std::vector<model::MemoryPoint> pts;
  for (int i = 0; i < 10000; ++i) pts.push_back({i * 10, i % 20});
  size_t peak = 4321;
  pts[peak].bytes = 5000;
  for (int max_points : {3, 4, 10, 512}) {
    auto out = Downsample(pts, peak, max_points);
    EXPECT_LE(out.size(), static_cast<size_t>(max_points));
    EXPECT_EQ(out.front().time_ns, 0);
    EXPECT_EQ(out.back().time_ns, 99990);
    bool has_peak = false;
    for (size_t i = 0; i < out.size(); ++i) {
      has_peak |= out[i].time_ns == pts[peak].time_ns && out[i].bytes == 5000;
      if (i) {
        EXPECT_LT(out[i - 1].time_ns, out[i].time_ns);
      }
    }
    EXPECT_TRUE(has_peak) << max_points;
  }
  // Each bin (about 20 points) keeps its maximum, 19, not its first point.
  auto out = Downsample(pts, peak, 512);
  EXPECT_GT(out.size(), 400u);
  int maxima = 0;
  for (const auto& p : out) maxima += p.bytes == 19;
  EXPECT_GT(maxima, 400);
  // Fewer points than the bound: unchanged.
  std::vector<model::MemoryPoint> few = {{1, 1}, {2, 5}, {3, 2}};
  auto same = Downsample(few, 1, 512);
  ASSERT_EQ(same.size(), 3u);
  EXPECT_EQ(same[1].bytes, 5);
}

// The peak per (globalPid, deviceId) straight from SQL: a window sum over ordered events.
std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> SqlPeaks(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  const char* sql =
      "WITH r AS (SELECT globalPid, deviceId, SUM(CASE memoryOperationType WHEN 0 THEN bytes ELSE -bytes END) "
      " OVER (PARTITION BY globalPid, deviceId ORDER BY start, rowid ROWS UNBOUNDED PRECEDING) AS inuse "
      " FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memKind IN (2, 3, 5)) "
      "SELECT globalPid, deviceId, max(inuse), count(*) FROM r GROUP BY 1, 2";
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    out[{sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1)}] = {sqlite3_column_int64(st, 2),
                                                                       sqlite3_column_int64(st, 3)};
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

TEST(MemoryReader, FixtureMatchesSql) {
  std::string path = SqlFixture("capture_memory");
  auto sql = SqlPeaks(path);
  model::MemoryUsage u = Read(path);
  ASSERT_EQ(u.series.size(), sql.size());
  for (const auto& s : u.series) EXPECT_EQ(s.peak_bytes, sql.at({s.global_pid, s.device}).first);
}

TEST(MemoryReaderReal, PeaksMatchSqlOnEveryExport) {
  int captured = 0;
  for (const auto& name : testing::RealExportNames()) {
    std::string path = RealExport(name);
    model::MemoryUsage u = Read(path, {64});
    if (!u.captured) continue;
    ++captured;
    auto sql = SqlPeaks(path);
    ASSERT_EQ(u.series.size(), sql.size()) << name;
    for (const auto& s : u.series) {
      auto [peak, events] = sql.at({s.global_pid, s.device});
      EXPECT_EQ(s.peak_bytes, peak) << name << " pid " << s.pid << " device " << s.device;
      EXPECT_EQ(s.events, events) << name;
      EXPECT_LE(s.timeline.size(), 64u);
      bool has_peak = false;
      for (const auto& p : s.timeline) {
        EXPECT_LE(p.bytes, s.peak_bytes);
        has_peak |= p.time_ns == s.peak_ns && p.bytes == s.peak_bytes;
      }
      EXPECT_TRUE(has_peak) << name;
      EXPECT_EQ(s.unmatched_frees, 0) << name;
    }
    // One series per rank holds its device memory: a peak of at least a few MiB, reached by a
    // runtime call of the rank's own process.
    auto per_process = PeakSeriesPerProcess(u);
    EXPECT_GE(per_process.size(), 2u) << name;
    for (const auto& s : per_process) {
      EXPECT_GT(s.peak_bytes, 4 << 20) << name;
      EXPECT_NE(s.peak_correlation_id, 0) << name;
      EXPECT_EQ(s.peak_global_tid >> 24, s.global_pid >> 24) << name;
    }
  }
  EXPECT_GE(captured, 4) << "cpwork-full, cpwork-train and both cpfold exports have memory events";
}

}  // namespace
}  // namespace cpprof::nsys
