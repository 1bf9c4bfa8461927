// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// `cpprof export --format chrome-trace`: the JSON read back and checked field by field against
// independent SQL over the same export (every GPU op once, at its exact time, with its name;
// every NVTX range on its thread; flows that pair up), on a fixture of hostile names and on every
// committed real export.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::json;

// The trace as its events: the writer puts one event per line, so a trace of 100 MB is checked
// without one DOM of it (the whole text is still validated by json::accept).
struct Trace {
  json other;
  std::vector<json> events;
};

Trace ParseTrace(const std::string& text) {
  Trace t;
  EXPECT_TRUE(json::accept(text)) << "the trace is not valid JSON";
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.substr(line.size() - std::string("\"traceEvents\":[").size()), "\"traceEvents\":[") << line;
  t.other = json::parse(line + "]}")["otherData"];
  while (std::getline(in, line)) {
    if (line == "]}") break;
    if (!line.empty() && line.back() == ',') line.pop_back();
    t.events.push_back(json::parse(line));
  }
  return t;
}

int64_t Ns(const json& us) { return std::llround(us.get<double>() * 1000.0); }

// Rows of a query, each column as a json int, string or null.
std::vector<std::vector<json>> Rows(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db) << "\n" << sql;
  std::vector<std::vector<json>> rows;
  while (st && sqlite3_step(st) == SQLITE_ROW) {
    std::vector<json> row;
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      switch (sqlite3_column_type(st, c)) {
        case SQLITE_INTEGER:
          row.emplace_back(sqlite3_column_int64(st, c));
          break;
        case SQLITE_NULL:
          row.emplace_back(nullptr);
          break;
        default:
          row.emplace_back(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, c)),
                                       static_cast<size_t>(sqlite3_column_bytes(st, c))));
      }
    }
    rows.push_back(std::move(row));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rows;
}

bool HasTable(const std::string& db, const std::string& table) {
  return !Rows(db, "SELECT 1 FROM sqlite_master WHERE name = '" + table + "'").empty();
}

// Invalid UTF-8 comes out as U+FFFD; apply the same to expected strings from SQL.
std::string AsJsonString(const std::string& s) {
  return json::parse(json(s).dump(-1, ' ', false, json::error_handler_t::replace)).get<std::string>();
}

Trace Export(const std::string& db, std::vector<std::string> extra = {}, std::string* err = nullptr) {
  std::vector<std::string> args{"export", "--format", "chrome-trace", db};
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = RunCli(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  if (err) *err = r.err;
  return ParseTrace(r.out);
}

// Common invariants: times, metadata for every track, flows that pair up.
void CheckInvariants(const Trace& t) {
  std::set<std::pair<int64_t, int64_t>> named_threads;
  std::set<int64_t> named_procs;
  for (const auto& e : t.events) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      named_threads.insert({e["pid"].get<int64_t>(), e["tid"].get<int64_t>()});
    if (e["ph"] == "M" && e["name"] == "process_name") named_procs.insert(e["pid"].get<int64_t>());
  }
  std::map<uint64_t, std::pair<int, int>> flows;  // id -> (starts, finishes)
  std::map<uint64_t, std::pair<double, double>> flow_ts;
  for (const auto& e : t.events) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid")) << e.dump();
    EXPECT_TRUE(named_procs.count(e["pid"].get<int64_t>())) << e.dump();
    if (e["ph"] == "X") {
      EXPECT_GE(e["ts"].get<double>(), 0.0) << e.dump();
      EXPECT_GE(e["dur"].get<double>(), 0.0) << e.dump();
      EXPECT_TRUE(named_threads.count({e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}))
          << "no thread_name for " << e.dump();
    } else if (e["ph"] == "s") {
      ++flows[e["id"]].first;
      flow_ts[e["id"]].first = e["ts"];
    } else if (e["ph"] == "f") {
      EXPECT_EQ(e["bp"], "e");
      ++flows[e["id"]].second;
      flow_ts[e["id"]].second = e["ts"];
    } else if (e["ph"] == "t") {
      EXPECT_EQ(e["cat"], "cp.collective") << "only the CP view's flows have steps";
    } else if (e["ph"] == "C") {
      EXPECT_EQ(e["name"], "GPU memory") << e.dump();
      EXPECT_TRUE(e["args"]["MiB"].is_number()) << e.dump();
    } else {
      EXPECT_EQ(e["ph"], "M") << e.dump();
    }
  }
  for (const auto& [id, n] : flows) {
    EXPECT_EQ(n, std::make_pair(1, 1)) << "flow " << id;
    EXPECT_LE(flow_ts[id].first, flow_ts[id].second) << "flow " << id << " goes back in time";
  }
}

using testing::SqlFixture;

// An event's args; {} for events without (NVTX ranges, flows): operator[] on a const json with a
// missing key is undefined behaviour.
const json& Args(const json& e) {
  static const json kNone = json::object();
  auto it = e.find("args");
  return it == e.end() ? kNone : *it;
}

const json* Find(const Trace& t, const std::string& ph, const std::string& name) {
  for (const auto& e : t.events) {
    if (e["ph"] == ph && e["name"] == name) return &e;
  }
  return nullptr;
}

std::string ThreadName(const Trace& t, int64_t tid) {
  for (const auto& e : t.events) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["tid"] == tid) return e["args"]["name"];
  }
  return "<none>";
}

TEST(ChromeTraceFixture, HostileNamesComeOutAsValidJson) {
  Trace t = Export(SqlFixture("special_names"), {"--flows"});
  CheckInvariants(t);
  ASSERT_NE(Find(t, "X", "kernel<\"quoted\">(\\path\\to, \ttab)"), nullptr);
  ASSERT_NE(Find(t, "X", std::string("ctl\x01\x1f\nend")), nullptr);
  ASSERT_NE(Find(t, "X", ":step \"1\" \\ \x07"), nullptr);
  ASSERT_NE(Find(t, "X", "My\"Domain:registered \\ \"range\""), nullptr);
  ASSERT_NE(Find(t, "M", "process_name"), nullptr);
  EXPECT_EQ((*Find(t, "M", "process_name"))["args"]["name"], "rank 0 (pid 100, GPU 0) py\"thon");
  int replaced = 0;
  for (const auto& e : t.events) {
    if (e["ph"] != "X") continue;
    std::string n = e["name"];
    if (n.find("\xEF\xBF\xBD") != std::string::npos) ++replaced;  // U+FFFD
  }
  EXPECT_EQ(replaced, 2) << "the kernel and the NVTX range with invalid UTF-8";
}

TEST(ChromeTraceFixture, TimesTracksNvtxAndFlows) {
  Trace t = Export(SqlFixture("special_names"), {"--flows"});
  // A kernel that starts before time 0 is clamped, and says so.
  const json* early = nullptr;
  for (const auto& e : t.events) {
    if (e["ph"] == "X" && Args(e).contains("correlationId") && e["args"]["correlationId"] == 14) early = &e;
  }
  ASSERT_NE(early, nullptr);
  EXPECT_EQ((*early)["ts"], 0.0);
  EXPECT_EQ(Ns((*early)["dur"]), 700);
  EXPECT_EQ((*early)["args"]["clamped_start_ns"], -500);
  EXPECT_EQ((*early)["cat"], "SendRecv");
  EXPECT_EQ(ThreadName(t, (*early)["tid"]), "stream 20 (comm)");
  const json* k1 = Find(t, "X", "kernel<\"quoted\">(\\path\\to, \ttab)");
  EXPECT_EQ((*k1)["ts"], 1.0);
  EXPECT_EQ((*k1)["dur"], 1.0);
  EXPECT_EQ(ThreadName(t, (*k1)["tid"]), "stream 7");
  EXPECT_EQ((*k1)["args"]["stream"], 7);
  EXPECT_EQ((*k1)["args"]["device"], 0);

  // Compute streams sort before communication streams.
  std::map<std::string, int64_t> sort;
  for (const auto& e : t.events) {
    if (e["ph"] == "M" && e["name"] == "thread_sort_index") sort[ThreadName(t, e["tid"])] = e["args"]["sort_index"];
  }
  EXPECT_LT(sort.at("stream 7"), sort.at("stream 20 (comm)"));
  EXPECT_LT(sort.at("stream 20 (comm)"), sort.at("main \"thread\" \\ 1"));

  // The open range ends at the end of the capture (the last API call ends at 5100).
  const json* open = Find(t, "X", ":open");
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(Ns((*open)["ts"]), 5050);
  EXPECT_EQ(Ns((*open)["dur"]), 50);
  EXPECT_EQ((*open)["args"]["open_at_capture_end"], true);
  EXPECT_EQ(ThreadName(t, (*open)["tid"]), "main \"thread\" \\ 1");

  // Overlapping start/end ranges go to two lanes; the one ending on thread 102 says so.
  const json* a = Find(t, "X", ":a");
  const json* b = Find(t, "X", ":b");
  ASSERT_TRUE(a && b);
  EXPECT_NE((*a)["tid"], (*b)["tid"]);
  EXPECT_EQ(ThreadName(t, (*a)["tid"]), "main \"thread\" \\ 1 NVTX start/end");
  EXPECT_EQ(ThreadName(t, (*b)["tid"]), "main \"thread\" \\ 1 NVTX start/end 2");
  EXPECT_EQ((*b)["args"]["ended_on_tid"], 102);
  EXPECT_EQ((*b)["args"]["thread"], 101);
  EXPECT_FALSE((*a)["args"].contains("ended_on_tid"));
  const json* before0 = Find(t, "X", ":early");
  ASSERT_NE(before0, nullptr);
  EXPECT_EQ((*before0)["ts"], 0.0);
  EXPECT_EQ(Ns((*before0)["dur"]), 50);
  EXPECT_EQ(ThreadName(t, (*before0)["tid"]), "thread 102");

  // Flows: launches 11, 12, 13, 15 have kernels; 99 has none, kernel 14 no launch.
  std::set<int64_t> flow_ids;
  for (const auto& e : t.events) {
    if (e["ph"] == "s") flow_ids.insert(e["id"].get<int64_t>());
  }
  EXPECT_EQ(flow_ids, (std::set<int64_t>{11, 12, 13, 15}));
  const json* api = Find(t, "X", "cudaLaunchKernel_v7000");
  ASSERT_NE(api, nullptr);
  EXPECT_EQ((*api)["cat"], "cuda_api");
}

TEST(ChromeTraceFixture, WithoutFlagsNoApiNoFlows) {
  Trace t = Export(SqlFixture("special_names"), {"--no-nvtx", "--no-cp-view"});
  for (const auto& e : t.events) {
    EXPECT_NE(e["ph"], "s");
    EXPECT_NE(e["ph"], "f");
    if (e["ph"] == "X") {
      EXPECT_TRUE(Args(e).contains("stream")) << "only GPU ops: " << e.dump();
    }
  }
}

TEST(ChromeTraceFixture, TimeWindowKeepsOverlappingEvents) {
  Trace t = Export(SqlFixture("special_names"), {"--start-ns", "2600", "--end-ns", "3100", "--api"});
  std::set<std::string> names;
  for (const auto& e : t.events) {
    if (e["ph"] != "X") continue;
    names.insert(e["name"]);
    EXPECT_GE(Ns(e["ts"]) + Ns(e["dur"]), 2600) << e.dump();
    EXPECT_LE(Ns(e["ts"]), 3100) << e.dump();
  }
  EXPECT_TRUE(names.count(std::string("ctl\x01\x1f\nend")));
  EXPECT_TRUE(names.count(":a"));
  EXPECT_TRUE(names.count(":step \"1\" \\ \x07"));
  EXPECT_FALSE(names.count("kernel<\"quoted\">(\\path\\to, \ttab)"));
  EXPECT_FALSE(names.count(":open"));
}

class ChromeTraceReal : public ::testing::TestWithParam<std::string> {};

TEST_P(ChromeTraceReal, EveryOpRangeAndFlowAgainstSql) {
  std::string db = RealExport(GetParam());
  std::string out = TempDir() + "/" + GetParam() + ".trace.json";
  CliResult r = RunCli({"export", "--format", "chrome-trace", db, "-o", out, "--flows"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "") << "-o writes the file, not stdout";
  Trace t = ParseTrace(ReadFile(out));
  CheckInvariants(t);

  // One process per rank, in the report's rank order.
  CliResult rep = RunCli({"report", "--format", "json", db});
  ASSERT_EQ(rep.rc, 0);
  json report = json::parse(rep.out);
  std::map<int64_t, int64_t> rank_of_pid;
  for (const auto& e : t.events) {
    if (e["ph"] == "M" && e["name"] == "process_sort_index") rank_of_pid[e["pid"]] = e["args"]["sort_index"];
  }
  ASSERT_EQ(rank_of_pid.size(), report["per_rank"].size());
  for (size_t rk = 0; rk < report["per_rank"].size(); ++rk) {
    int64_t pid = report["per_rank"][rk]["pid"];
    EXPECT_EQ(rank_of_pid[pid], static_cast<int64_t>(rk)) << "pid " << pid;
  }

  // Every kernel, memcpy and memset exactly once, at its time, with its name.
  using Op =
      std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, std::string>;  // pid, dev, stream, start, dur, name
  std::vector<Op> want, got;
  auto add_rows = [&](const std::string& sql) {
    for (auto& row : Rows(db, sql)) {
      want.emplace_back(row[0], row[1], row[2], row[3], row[4], AsJsonString(row[5].get<std::string>()));
    }
  };
  const char* pid = "((globalPid >> 24) & 16777215)";
  add_rows(std::string("SELECT ") + pid +
           ", deviceId, streamId, start, end - start, s.value FROM "
           "CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON s.id = k.demangledName");
  if (HasTable(db, "CUPTI_ACTIVITY_KIND_MEMCPY")) {
    add_rows(std::string("SELECT ") + pid +
             ", deviceId, streamId, start, end - start, '[CUDA memcpy ' || e.label || ']' "
             "FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m JOIN ENUM_CUDA_MEMCPY_OPER AS e ON e.id = m.copyKind");
  }
  if (HasTable(db, "CUPTI_ACTIVITY_KIND_MEMSET")) {
    add_rows(std::string("SELECT ") + pid +
             ", deviceId, streamId, start, end - start, '[CUDA memset]' FROM "
             "CUPTI_ACTIVITY_KIND_MEMSET");
  }
  int64_t kernels_in_sql = Rows(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0];
  int64_t kernels_in_trace = 0;
  for (const auto& e : t.events) {
    if (e["ph"] != "X" || !Args(e).contains("stream")) continue;
    if (!Args(e).contains("bytes")) ++kernels_in_trace;
    got.emplace_back(e["pid"], e["args"]["device"], e["args"]["stream"], Ns(e["ts"]), Ns(e["dur"]), e["name"]);
  }
  EXPECT_EQ(kernels_in_trace, kernels_in_sql);
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got.size(), want.size());
  auto mismatch = std::mismatch(got.begin(), got.end(), want.begin());
  EXPECT_TRUE(mismatch.first == got.end())
      << "first difference: trace has " << std::get<5>(*mismatch.first) << " at " << std::get<3>(*mismatch.first)
      << ", SQL " << std::get<5>(*mismatch.second) << " at " << std::get<3>(*mismatch.second);

  // Every NVTX push/pop and start/end range of the ranks' processes, on its thread, named
  // "domain:text" with the domain from the domain-create event of the same process.
  using Range = std::tuple<int64_t, int64_t, int64_t, std::string, bool>;  // pid, tid, start, name, open
  std::vector<Range> want_nvtx, got_nvtx;
  if (HasTable(db, "NVTX_EVENTS")) {
    std::string pids;
    for (const auto& [p, rk] : rank_of_pid) pids += (pids.empty() ? "" : ", ") + std::to_string(p);
    // The domain's name: its first create event (by thread, then time) in the process.
    auto rows = Rows(
        db,
        "WITH dn AS (SELECT domainId, p, name FROM (SELECT d.domainId, (d.globalTid >> 24) & 16777215 AS p, "
        "  coalesce(s2.value, d.text) AS name, row_number() OVER (PARTITION BY d.domainId, "
        "  (d.globalTid >> 24) & 16777215 ORDER BY d.globalTid, d.start) AS rn "
        "  FROM NVTX_EVENTS AS d LEFT JOIN StringIds AS s2 ON s2.id = d.textId WHERE d.eventType = 75) WHERE rn = 1) "
        "SELECT (ne.globalTid >> 24) & 16777215, ne.globalTid & 16777215, ne.start, "
        "coalesce(dn.name, '') || ':' || coalesce(sid.value, ne.text, ''), ne.end IS NULL "
        "FROM NVTX_EVENTS AS ne LEFT JOIN StringIds AS sid ON sid.id = ne.textId "
        "LEFT JOIN dn ON dn.domainId = ne.domainId AND dn.p = (ne.globalTid >> 24) & 16777215 "
        "WHERE ne.eventType IN (59, 60, 70, 71) AND ((ne.globalTid >> 24) & 16777215) IN (" +
            pids + ")");
    for (auto& row : rows) {
      want_nvtx.emplace_back(row[0], row[1], row[2], AsJsonString(row[3].get<std::string>()), row[4] == 1);
    }
  }
  for (const auto& e : t.events) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "nvtx" || e["cat"] == "nvtx start/end") {
      const json& args = e.contains("args") ? e["args"] : json::object();
      int64_t tid = e["cat"] == "nvtx" ? e["tid"].get<int64_t>() : args["thread"].get<int64_t>();
      got_nvtx.emplace_back(e["pid"], tid, Ns(e["ts"]), e["name"], args.contains("open_at_capture_end"));
    }
  }
  std::sort(want_nvtx.begin(), want_nvtx.end());
  std::sort(got_nvtx.begin(), got_nvtx.end());
  EXPECT_EQ(got_nvtx.size(), want_nvtx.size());
  EXPECT_TRUE(got_nvtx == want_nvtx) << "NVTX ranges differ from NVTX_EVENTS";

  // Flows: the real exports launch every kernel through the runtime API.
  int64_t flows = 0;
  for (const auto& e : t.events) flows += e["ph"] == "s";
  EXPECT_GT(flows, 0);
  RecordProperty("trace_events", static_cast<int>(t.events.size()));
}

TEST(ChromeTraceDeterminism, SameExportSameBytes) {
  for (const char* name : {"inline-main", "cpwork-trace"}) {
    std::string db = RealExport(name);
    CliResult a = RunCli({"export", db, "--flows"});
    CliResult b = RunCli({"export", db, "--flows"});
    ASSERT_EQ(a.rc, 0) << a.err;
    EXPECT_GT(a.out.size(), 100000u) << name;
    EXPECT_TRUE(a.out == b.out) << "two exports of " << name << " differ";
  }
}

// NVTX ranges are formatted in batches on all cores (blocks per thread), then appended in
// order: the same bytes on one thread, three or sixteen (NVTX then read in parts by several
// readers), over several batches.
TEST(ChromeTraceDeterminism, SameBytesOnAnyNumberOfThreads) {
  // 38896 kernels (more than two batches of GPU ops) and over 65536 events in all (more than two
  // of NVTX ranges); with --flows each launch's flow end goes out with its first op.
  const std::string db = RealExport("cpfold-trunk-2x2");
  for (const char* flows : {"", "--flows"}) {
    std::vector<std::string> args = {"export", db};
    if (*flows) args.push_back(flows);
    ::setenv("CPPROF_THREADS", "1", 1);
    CliResult one = RunCli(args);
    ::setenv("CPPROF_THREADS", "3", 1);
    CliResult three = RunCli(args);
    ::setenv("CPPROF_THREADS", "16", 1);  // NVTX read by 4 readers in parts, for the trace and the CP view
    CliResult sixteen = RunCli(args);
    ::setenv("CPPROF_NVTX_PART_ROWS", "97", 1);  // 173 parts: every part boundary case meets one
    CliResult small_parts = RunCli(args);
    ::unsetenv("CPPROF_NVTX_PART_ROWS");
    ::unsetenv("CPPROF_THREADS");
    ASSERT_EQ(one.rc, 0) << one.err;
    ASSERT_EQ(three.rc, 0) << three.err;
    ASSERT_EQ(sixteen.rc, 0) << sixteen.err;
    ASSERT_EQ(small_parts.rc, 0) << small_parts.err;
    EXPECT_TRUE(one.out == small_parts.out) << "the trace depends on where the NVTX parts begin " << flows;
    EXPECT_GT(std::count(one.out.begin(), one.out.end(), '\n'), 65536);
    EXPECT_TRUE(one.out == three.out) << "the trace depends on the number of threads " << flows;
    EXPECT_TRUE(one.out == sixteen.out) << "the trace depends on the number of NVTX readers " << flows;
    EXPECT_NO_THROW({ [[maybe_unused]] auto parsed = nlohmann::ordered_json::parse(three.out); });
  }
}

INSTANTIATE_TEST_SUITE_P(Exports, ChromeTraceReal, ::testing::ValuesIn(RealExportNames()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(ChromeTraceReal, RanksFilterKeepsOneProcess) {
  std::string db = RealExport("cpwork-trace");
  Trace t = Export(db, {"--ranks", "1", "--no-nvtx"});
  CheckInvariants(t);
  std::set<int64_t> pids;
  for (const auto& e : t.events) pids.insert(e["pid"].get<int64_t>());
  ASSERT_EQ(pids.size(), 1u);
  const json* p = Find(t, "M", "process_sort_index");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ((*p)["args"]["sort_index"], 1);
}

}  // namespace
}  // namespace cpprof::testing
