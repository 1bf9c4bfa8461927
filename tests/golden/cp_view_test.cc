// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// `cpprof export --format chrome-trace`'s CP view: per rank a module track, a communication track
// of waiting and transfer slices, flows linking the ops of one matched collective or ring shift
// across ranks, a GPU memory counter. No trace processor can be installed here (Perfetto's
// trace_processor and UI are not), so the traces are checked by a checker written from the Trace
// Event Format spec (the rules viewers rely on), and the view's numbers against the JSON readout
// of the same window.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::json;

int64_t Ns(const json& us) { return std::llround(us.get<double>() * 1000.0); }

// The Trace Event Format (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKoB-l3D4),
// JSON Object Format: what a viewer needs of every event. Returns the problems, at most 20.
// Complete events must nest on the threads named with `nest_prefix` ("": every thread). (The
// raw CUDA stream tracks need not: in cpfold-train-1x2 two kernels of one stream overlap by
// about 0.1 us, as CUPTI recorded them.)
std::vector<std::string> CheckTraceEventFormat(const json& doc, const std::string& nest_prefix = "") {
  std::vector<std::string> bad;
  auto fail = [&](const std::string& what, const json& e) {
    if (bad.size() < 20) bad.push_back(what + ": " + e.dump().substr(0, 300));
  };
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    bad.push_back("not the JSON Object Format: an object with a traceEvents array");
    return bad;
  }
  static const std::set<std::string> kPhases = {"B", "E", "X", "i", "I", "C", "b", "n", "e", "s", "t",
                                                "f", "P", "O", "N", "D", "M", "R", "c", "(", ")"};
  static const std::map<std::string, std::string> kMetadata = {{"process_name", "name"},
                                                               {"process_labels", "labels"},
                                                               {"process_sort_index", "sort_index"},
                                                               {"thread_name", "name"},
                                                               {"thread_sort_index", "sort_index"}};
  using Thread = std::pair<int64_t, int64_t>;
  std::map<Thread, std::vector<std::pair<int64_t, int64_t>>> slices;  // complete events by thread
  struct FlowPoint {
    std::string ph;
    Thread thread;
    int64_t ts;
  };
  std::map<std::pair<std::string, std::string>, std::vector<FlowPoint>> flows;  // (cat, id) in file order
  for (const json& e : doc["traceEvents"]) {
    if (!e.is_object()) {
      fail("an event that is not an object", e);
      continue;
    }
    if (!e.contains("ph") || !e["ph"].is_string() || !kPhases.count(e["ph"].get<std::string>())) {
      fail("no known ph", e);
      continue;
    }
    const std::string ph = e["ph"];
    if (!e.contains("name") || !e["name"].is_string()) fail("no name", e);
    if (!e.contains("pid") || !e["pid"].is_number_integer()) fail("no integer pid", e);
    const bool process_level = ph == "C" || (ph == "M" && std::string(e.value("name", "")).rfind("process_", 0) == 0);
    if (!process_level && (!e.contains("tid") || !e["tid"].is_number_integer())) fail("no integer tid", e);
    if (ph != "M" && (!e.contains("ts") || !e["ts"].is_number() || e["ts"].get<double>() < 0)) fail("no ts >= 0", e);
    if (ph == "M") {
      auto m = kMetadata.find(e.value("name", ""));
      if (m == kMetadata.end()) {
        fail("unknown metadata event", e);
      } else if (!e.contains("args") || !e["args"].contains(m->second)) {
        fail("metadata without args." + m->second, e);
      }
    } else if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) fail("X without dur >= 0", e);
      if (e.contains("tid") && e.contains("ts") && e.contains("dur"))
        slices[{e["pid"], e["tid"]}].push_back({Ns(e["ts"]), Ns(e["ts"]) + Ns(e["dur"])});
    } else if (ph == "C") {
      if (!e.contains("args") || !e["args"].is_object() || e["args"].empty()) fail("counter without args", e);
      const json args = e.value("args", json::object());
      for (const auto& [k, v] : args.items()) {
        if (!v.is_number()) fail("counter value '" + k + "' not a number", e);
      }
    } else if (ph == "s" || ph == "t" || ph == "f") {
      if (!e.contains("id") || !e.contains("cat")) {
        fail("flow event without id or cat", e);
        continue;
      }
      flows[{e["cat"].dump(), e["id"].dump()}].push_back({ph, {e["pid"], e["tid"]}, Ns(e["ts"])});
    }
  }
  // Complete events on one thread must nest (a viewer draws them as a stack).
  std::set<Thread> named;
  for (const json& e : doc["traceEvents"]) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name" && e.contains("args") &&
        e["args"].value("name", "").rfind(nest_prefix, 0) == 0)
      named.insert(Thread(e["pid"].get<int64_t>(), e["tid"].get<int64_t>()));
  }
  for (auto& [thread, v] : slices) {
    if (!nest_prefix.empty() && !named.count(thread)) continue;
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<int64_t> open;
    for (const auto& [s, e] : v) {
      while (!open.empty() && open.back() <= s) open.pop_back();
      if (!open.empty() && e > open.back()) {
        fail("slices overlap without nesting on pid " + std::to_string(thread.first) + " tid " +
                 std::to_string(thread.second),
             json::array({s, e, open.back()}));
        break;
      }
      open.push_back(e);
    }
  }
  // Flows: one start, then steps, one finish, forward in time; each point inside a slice of its
  // thread (the slice it binds to, "bp":"e": the enclosing slice).
  for (const auto& [key, points] : flows) {
    int starts = 0, finishes = 0;
    for (size_t i = 0; i < points.size(); ++i) {
      starts += points[i].ph == "s";
      finishes += points[i].ph == "f";
      if (i && points[i].ts < points[i - 1].ts) fail("flow goes back in time", json(key.second));
      const auto& on = slices[points[i].thread];
      bool bound = std::any_of(on.begin(), on.end(),
                               [&](const auto& sl) { return sl.first <= points[i].ts && points[i].ts <= sl.second; });
      if (!bound) fail("flow point outside every slice of its thread", json(key.second));
    }
    if (starts != 1 || finishes != 1 || points.front().ph != "s" || points.back().ph != "f")
      fail("flow without one start first and one finish last", json(key.second));
  }
  return bad;
}

json Export(const std::string& db, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"export", "--format", "chrome-trace", db};
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = RunCli(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  return json::parse(r.out);
}

json Report(const std::string& db, const std::string& window) {
  CliResult r = RunCli({"report", "--format", "json", "--window", window, db});
  EXPECT_EQ(r.rc, 0) << r.err;
  return json::parse(r.out);
}

// The CP view's numbers per trace pid, and its flows.
struct CpNumbers {
  std::map<int64_t, std::map<std::string, int64_t>> ns;  // pid -> cat -> summed durations
  std::map<int64_t, std::set<std::string>> tracks;       // pid -> CP thread names
  std::map<int64_t, double> peak_mib;
  std::map<int64_t, int64_t> module_slices;
  std::set<std::string> module_names;
  int64_t flow_chains = 0;
  int64_t first_ts = INT64_MAX, last_end = INT64_MIN;  // over the CP view's slices
};

CpNumbers Numbers(const json& trace) {
  CpNumbers n;
  for (const json& e : trace["traceEvents"]) {
    const std::string ph = e["ph"];
    const std::string cat = e.value("cat", "");
    if (ph == "M" && e["name"] == "thread_name" && std::string(e["args"]["name"]).rfind("CP ", 0) == 0) {
      n.tracks[e["pid"]].insert(e["args"]["name"]);
    } else if (ph == "X" && cat.rfind("cp.", 0) == 0) {
      n.ns[e["pid"]][cat] += Ns(e["dur"]);
      n.first_ts = std::min(n.first_ts, Ns(e["ts"]));
      n.last_end = std::max(n.last_end, Ns(e["ts"]) + Ns(e["dur"]));
      if (cat == "cp.module") ++n.module_slices[e["pid"]], n.module_names.insert(e["name"]);
    } else if (ph == "C") {
      n.peak_mib[e["pid"]] = std::max(n.peak_mib[e["pid"]], e["args"]["MiB"].get<double>());
    } else if (ph == "s" && cat == "cp.collective") {
      ++n.flow_chains;
    }
  }
  return n;
}

void ExpectViewMatchesReadout(const json& trace, const json& report) {
  CpNumbers n = Numbers(trace);
  for (const json& r : report["per_rank"]) {
    const int64_t pid = r["pid"];
    SCOPED_TRACE("rank " + std::to_string(int(r["rank"])));
    EXPECT_TRUE(n.tracks[pid].count("CP modules"));
    if (int64_t(r["comm_ns"]) > 0) {
      EXPECT_TRUE(n.tracks[pid].count("CP communication"));
    }
    EXPECT_EQ(n.ns[pid]["cp.wait"], int64_t(r["wait_ns"]));
    EXPECT_EQ(n.ns[pid]["cp.transfer"], int64_t(r["transfer_ns"]));
    EXPECT_EQ(n.ns[pid]["cp.unmatched"], int64_t(r["unmatched_ns"]));
    if (!r["peak_mem_bytes"].is_null()) {
      EXPECT_NEAR(n.peak_mib[pid], double(int64_t(r["peak_mem_bytes"])) / 1048576.0, 0.001);
    }
    if (report["modules"]["rows"].size() > 1) {
      EXPECT_GT(n.module_slices[pid], 0);
    }
  }
  // A flow per matched instance, but an instance the window's edges cut may have one op inside.
  int64_t edge = 0;
  for (const json& c : report["imbalance"]["collectives"]) edge += int64_t(c["edge_instances"]);
  EXPECT_LE(n.flow_chains, int64_t(report["imbalance"]["instances"])) << "a flow per matched instance";
  EXPECT_GE(n.flow_chains, int64_t(report["imbalance"]["instances"]) - edge) << "a flow per matched instance";
  std::set<std::string> rows;
  for (const json& m : report["modules"]["rows"]) rows.insert(m["name"]);
  for (const auto& name : n.module_names) EXPECT_TRUE(rows.count(name)) << name;
}

class CpViewReal : public ::testing::TestWithParam<std::string> {};

TEST_P(CpViewReal, FollowsTheTraceEventFormatAndTheReadout) {
  const std::string db = RealExport(GetParam());
  json trace = Export(db);
  for (const auto& problem : CheckTraceEventFormat(trace, "CP ")) ADD_FAILURE() << problem;
  ExpectViewMatchesReadout(trace, Report(db, "all"));
}

// The critical path track: on each rank, the time the steady readout's replay puts the path
// there (its segments of that rank, every replayed iteration's); a flow at each hop between
// ranks; a summary line that counts the iterations.
TEST_P(CpViewReal, CriticalPathTrackIsTheReadoutsReplay) {
  const std::string db = RealExport(GetParam());
  CliResult r = RunCli({"export", "--format", "chrome-trace", db});
  ASSERT_EQ(r.rc, 0) << r.err;
  const json trace = json::parse(r.out);
  const json report = Report(db, "steady");  // the whole capture's steady iterations are replayed
  std::map<int64_t, int64_t> want;           // pid -> ns
  std::map<int64_t, int64_t> pid_of_rank;
  for (const json& rank : report["per_rank"]) pid_of_rank[rank["rank"]] = rank["pid"];
  int64_t iterations = 0, hops_at_least = 0;
  for (const json& it : report["replay"].value("iterations", json::array())) {
    ++iterations;
    std::set<int64_t> ranks;
    for (const json& s : it["critical_path"]) {
      want[pid_of_rank.at(s["rank"])] += int64_t(s["ns"]);
      ranks.insert(int64_t(s["rank"]));
    }
    hops_at_least += static_cast<int64_t>(ranks.size()) - 1;  // each rank entered at least once
  }
  std::map<int64_t, int64_t> got;
  int64_t starts = 0, finishes = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e.value("cat", "") != "cp.critical_path") continue;
    if (e["ph"] == "X") got[e["pid"]] += Ns(e["dur"]);
    starts += e["ph"] == "s", finishes += e["ph"] == "f";
  }
  for (const auto& [pid, ns] : want) {
    SCOPED_TRACE("pid " + std::to_string(pid));
    // Microsecond rounding of each slice's ts and dur: at most 1 ns per slice.
    EXPECT_NEAR(got[pid], ns, 1 + ns / 1'000'000) << "the track holds the replay's time on this rank";
  }
  EXPECT_EQ(got.size(), want.size()) << "a track on the ranks the path visits, no other";
  EXPECT_EQ(starts, finishes);
  EXPECT_GE(starts, hops_at_least);
  const std::string line = iterations ? fmt::format("the critical path of {} iterations", iterations)
                                      : "no critical path (no steady iteration replayed)";
  EXPECT_NE(r.err.find(line), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Exports, CpViewReal, ::testing::ValuesIn(RealExportNames()), [](const auto& param) {
  std::string n = param.param;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
});

// --window: the trace keeps what overlaps the window and the view is that window's readout.
TEST(CpView, WindowApplies) {
  const std::string db = RealExport("cpwork-train");
  for (const std::string window : {"iter:1", "steady"}) {
    SCOPED_TRACE(window);
    json trace = Export(db, {"--window", window});
    for (const auto& problem : CheckTraceEventFormat(trace, "CP ")) ADD_FAILURE() << problem;
    json report = Report(db, window);
    ExpectViewMatchesReadout(trace, report);
    const int64_t start = report["window"]["start_ns"], end = report["window"]["end_ns"];
    CpNumbers n = Numbers(trace);
    EXPECT_GE(n.first_ts, start);
    EXPECT_LE(n.last_end, end);
    for (const json& e : trace["traceEvents"]) {
      if (e["ph"] != "X") continue;
      EXPECT_GE(Ns(e["ts"]) + Ns(e["dur"]), start) << e.dump();
      EXPECT_LE(Ns(e["ts"]), end) << e.dump();
    }
  }
}

// A run read from per-rank exports: the view is on the run's clock, a process per rank (pid =
// rank), and its numbers are the run's readout's.
TEST(CpView, RunOfPerRankExports) {
  SplitOptions split;
  split.start_later_ns = {0, 3'217'000};  // rank 1's nsys started 3.217 ms later
  std::vector<std::string> parts = SplitPerProcess(RealExport("cpfold-ring-1x2"), TempDir() + "/cp-view-run", split);
  ASSERT_EQ(parts.size(), 2u);
  std::vector<std::string> args{"export", "--format", "chrome-trace"};
  args.insert(args.end(), parts.begin(), parts.end());
  CliResult r = RunCli(args);
  ASSERT_EQ(r.rc, 0) << r.err;
  json trace = json::parse(r.out);
  for (const auto& problem : CheckTraceEventFormat(trace, "CP ")) ADD_FAILURE() << problem;
  std::vector<std::string> rep{"report", "--format", "json", "--window", "all"};
  rep.insert(rep.end(), parts.begin(), parts.end());
  CliResult j = RunCli(rep);
  ASSERT_EQ(j.rc, 0) << j.err;
  json report = json::parse(j.out);
  for (json& rank : report["per_rank"]) rank["pid"] = rank["rank"];  // a trace of several exports: pid = rank
  ExpectViewMatchesReadout(trace, report);
  EXPECT_GT(Numbers(trace).flow_chains, 0);
}

TEST(CpView, CanBeLeftOutAndWindowIsAUsageErrorWithStartNs) {
  json trace = Export(RealExport("cpwork-train"), {"--no-cp-view"});
  for (const json& e : trace["traceEvents"]) {
    EXPECT_EQ(std::string(e.value("cat", "")).rfind("cp.", 0), std::string::npos) << e.dump();
    EXPECT_NE(e["ph"], "C");
  }
  CliResult r = RunCli({"export", RealExport("cpwork-train"), "--window", "steady", "--start-ns", "0"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--window and --start-ns/--end-ns both choose the time range"), std::string::npos) << r.err;
}

// The checker catches what it is for.
TEST(TraceEventFormatChecker, FindsBrokenTraces) {
  EXPECT_FALSE(CheckTraceEventFormat(json::array()).empty());
  json overlap = {{"traceEvents",
                   {{{"ph", "X"}, {"name", "a"}, {"pid", 1}, {"tid", 1}, {"ts", 0}, {"dur", 10}},
                    {{"ph", "X"}, {"name", "b"}, {"pid", 1}, {"tid", 1}, {"ts", 5}, {"dur", 10}}}}};
  EXPECT_FALSE(CheckTraceEventFormat(overlap).empty());
  json flow = {{"traceEvents",
                {{{"ph", "X"}, {"name", "a"}, {"pid", 1}, {"tid", 1}, {"ts", 0}, {"dur", 10}},
                 {{"ph", "f"}, {"name", "x"}, {"cat", "c"}, {"id", 1}, {"pid", 1}, {"tid", 1}, {"ts", 5}}}}};
  EXPECT_FALSE(CheckTraceEventFormat(flow).empty()) << "a finish without a start";
  json good = {{"traceEvents",
                {{{"ph", "X"}, {"name", "a"}, {"pid", 1}, {"tid", 1}, {"ts", 0}, {"dur", 10}},
                 {{"ph", "X"}, {"name", "b"}, {"pid", 1}, {"tid", 2}, {"ts", 5}, {"dur", 10}},
                 {{"ph", "s"}, {"name", "x"}, {"cat", "c"}, {"id", 1}, {"pid", 1}, {"tid", 1}, {"ts", 2}},
                 {{"ph", "f"}, {"name", "x"}, {"cat", "c"}, {"id", 1}, {"pid", 1}, {"tid", 2}, {"ts", 6}, {"bp", "e"}},
                 {{"ph", "C"}, {"name", "m"}, {"pid", 1}, {"ts", 1}, {"args", {{"MiB", 1.5}}}},
                 {{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", "t"}}}}}}};
  EXPECT_TRUE(CheckTraceEventFormat(good).empty()) << CheckTraceEventFormat(good)[0];
}

}  // namespace
}  // namespace cpprof::testing
