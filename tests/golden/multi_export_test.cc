// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// One readout from several exports (one nsys per rank): real 2-rank H200 captures split into one
// export per process, as per-rank capture would have written them, with the second export's
// session started later and its host clock off by a known amount. The merged readout must equal
// the readout of the single export, and the alignment must find the clock error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::json;
constexpr int64_t kUs = 1000, kMs = 1000 * kUs;

json Report(std::vector<std::string> args) {
  args.insert(args.begin(), {"report", "--format", "json"});
  CliResult r = RunCli(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  return r.rc == 0 ? json::parse(r.out) : json();
}

std::string Dir(const std::string& name) { return TempDir() + "/multi/" + name; }

// The merged readout says the same as the single export's: ops per rank exactly, per-module
// busy time within 5 % (here: equal but for the alignment's error), waiting and transfer.
void ExpectSameReadout(const json& single, const json& merged) {
  ASSERT_EQ(single["per_rank"].size(), merged["per_rank"].size());
  for (size_t r = 0; r < single["per_rank"].size(); ++r) {
    const json& a = single["per_rank"][r];
    const json& b = merged["per_rank"][r];
    EXPECT_EQ(a["ops"], b["ops"]) << "rank " << r;
    EXPECT_EQ(a["device"], b["device"]) << "rank " << r;
    for (const char* k : {"busy_ns", "compute_ns", "comm_ns", "wait_ns", "transfer_ns"}) {
      double x = a[k], y = b[k];
      EXPECT_NEAR(x, y, 0.05 * std::max(x, 1e6)) << "rank " << r << " " << k;
    }
  }
  const json& ma = single["modules"]["rows"];
  const json& mb = merged["modules"]["rows"];
  ASSERT_EQ(ma.size(), mb.size());
  for (size_t i = 0; i < ma.size(); ++i) {
    EXPECT_EQ(ma[i]["name"], mb[i]["name"]);
    for (size_t r = 0; r < ma[i]["per_rank"].size(); ++r) {
      double x = ma[i]["per_rank"][r]["busy_ns"], y = mb[i]["per_rank"][r]["busy_ns"];
      EXPECT_NEAR(x, y, 0.05 * x + 1000) << ma[i]["name"] << " rank " << r;
      EXPECT_EQ(ma[i]["per_rank"][r]["ops"], mb[i]["per_rank"][r]["ops"]) << ma[i]["name"] << " rank " << r;
    }
  }
  EXPECT_EQ(single["imbalance"]["straggler_rank"], merged["imbalance"]["straggler_rank"]);
  EXPECT_EQ(single["window"]["kind"], merged["window"]["kind"]);
  EXPECT_NEAR(double(single["window"]["start_ns"]), double(merged["window"]["start_ns"]), 50 * kUs);
}

TEST(MultiExport, PerRankExportsGiveTheSingleExportsReadout) {
  const std::string real = RealExport("cpfold-ring-1x2");
  SplitOptions split;
  split.start_later_ns = {0, 3'217 * kUs};  // rank 1's nsys started 3.217 ms later
  split.utc_error_ns = {0, 1'700 * kUs};    // and its host clock is 1.7 ms fast
  std::vector<std::string> parts = SplitPerProcess(real, Dir("ring"), split);
  ASSERT_EQ(parts.size(), 2u);
  json single = Report({real});
  json merged = Report(parts);
  ExpectSameReadout(single, merged);
  // These captures carry no NCCL rank payloads (NCCL 2.28 under nsys 2025.3): device order in
  // the single export, host, export and device order across exports.
  EXPECT_EQ(single["ranks"]["method"], "device order (the export has no NCCL rank payloads)");
  EXPECT_EQ(merged["ranks"]["method"],
            "host name, export and device order (no NCCL rank payloads or launcher rank variables)");
  const json& ex = merged["run_exports"];
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[0]["name"], "rep.0.sqlite");
  EXPECT_EQ(ex[0]["ranks"], json::array({0}));
  EXPECT_EQ(ex[1]["ranks"], json::array({1}));
  EXPECT_EQ(ex[0]["offset_ns"], 0);
  // The refinement undoes the clock error, the offset the later start: within the residual.
  EXPECT_NEAR(double(ex[1]["refine_ns"]), -1'700.0 * kUs, 50 * kUs);
  EXPECT_NEAR(double(ex[1]["offset_ns"]), 3'217.0 * kUs, 50 * kUs);
  EXPECT_GE(ex[1]["residual_ns"], 0);
  EXPECT_LT(ex[1]["residual_ns"], 50 * kUs);
  EXPECT_GT(ex[1]["matched_ops"], 10);
}

TEST(MultiExport, StragglerAcrossExportsIsTheDelayedRank) {
  // Rank 1 was made 2 ms late before every ring shift: the straggler, and rank 0's waiting, must
  // survive reading the ranks from two exports with skewed clocks.
  const std::string real = RealExport("cpfold-ring-1x2-delay");
  SplitOptions split;
  split.start_later_ns = {0, 812 * kUs};
  split.utc_error_ns = {0, -2'900 * kUs};
  json single = Report({real});
  json merged = Report(SplitPerProcess(real, Dir("delay"), split));
  ExpectSameReadout(single, merged);
  EXPECT_EQ(merged["imbalance"]["straggler_rank"], 1);
  EXPECT_NEAR(double(merged["per_rank"][0]["wait_ns"]), double(single["per_rank"][0]["wait_ns"]),
              0.02 * double(single["per_rank"][0]["wait_ns"]));
  EXPECT_LT(merged["run_exports"][1]["residual_ns"], 50 * kUs);
}

TEST(MultiExport, RanksFromTheLaunchersEnvironmentWithoutNcclPayloads) {
  const std::string real = RealExport("cpfold-ring-1x2");
  SplitOptions split;
  split.drop_nccl_rank_payloads = true;
  split.env_rank = {1, 0};  // the process on device 0 was RANK 1
  json merged = Report(SplitPerProcess(real, Dir("env"), split));
  EXPECT_EQ(merged["ranks"]["method"], "the launcher's RANK (or SLURM_PROCID) recorded in each export");
  EXPECT_EQ(merged["run_exports"][0]["ranks"], json::array({1}));
  EXPECT_EQ(merged["run_exports"][1]["ranks"], json::array({0}));
  EXPECT_EQ(merged["per_rank"][0]["device"], 1);

  SplitOptions bare;
  bare.drop_nccl_rank_payloads = true;
  json by_order = Report(SplitPerProcess(real, Dir("bare"), bare));
  EXPECT_EQ(by_order["ranks"]["method"],
            "host name, export and device order (no NCCL rank payloads or launcher rank variables)");
  EXPECT_EQ(by_order["per_rank"][0]["device"], 0);
}

TEST(MultiExport, DirectoryAndGlobAreTheSameRun) {
  const std::string real = RealExport("cpfold-ring-1x2");
  std::vector<std::string> parts = SplitPerProcess(real, Dir("dir"), {});
  json files = Report(parts);
  json dir = Report({Dir("dir")});
  json glob = Report({Dir("dir") + "/rep.*.sqlite"});
  EXPECT_EQ(files, dir);
  EXPECT_EQ(files, glob);
  EXPECT_NEAR(double(files["run_exports"][1]["offset_ns"]), 0, 50 * kUs);

  CliResult twice = RunCli({"report", parts[0], Dir("dir")});
  EXPECT_EQ(twice.rc, 2);
  EXPECT_NE(twice.err.find("given twice"), std::string::npos) << twice.err;
  CliResult none = RunCli({"report", Dir("dir") + "/nothing.*.sqlite"});
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.err.find("matches no file"), std::string::npos) << none.err;
}

TEST(MultiExport, ExportsOfDifferentRunsAreRefusedUnlessForced) {
  std::vector<std::string> ring = SplitPerProcess(RealExport("cpfold-ring-1x2"), Dir("run-a"), {});
  std::vector<std::string> e2e = SplitPerProcess(RealExport("cpfold-e2e-1x2"), Dir("run-b"), {});
  CliResult r = RunCli({"report", ring[0], e2e[1]});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("not from one run"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  CliResult forced = RunCli({"report", "--force", ring[0], e2e[1]});
  EXPECT_EQ(forced.rc, 0) << forced.err;
}

TEST(MultiExport, TextAndMarkdownSayHowTheClocksWereAligned) {
  const std::string real = RealExport("cpfold-ring-1x2");
  SplitOptions split;
  split.utc_error_ns = {0, 500 * kUs};
  std::vector<std::string> parts = SplitPerProcess(real, Dir("text"), split);
  CliResult text = RunCli({"report", parts[0], parts[1]});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("One run from 2 exports, on the first export's session clock:"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("refined by"), std::string::npos);
  EXPECT_NE(text.out.find("residual"), std::string::npos);
  CliResult md = RunCli({"report", "--format", "md", parts[0], parts[1]});
  ASSERT_EQ(md.rc, 0) << md.err;
  EXPECT_NE(md.out.find("### One run from 2 exports"), std::string::npos);
}

TEST(MultiExport, DiffTakesARunPerSide) {
  const std::string real = RealExport("cpfold-ring-1x2");
  SplitPerProcess(real, Dir("side-a"), {});
  SplitOptions later;
  later.start_later_ns = {0, 1'000 * kUs};
  SplitPerProcess(real, Dir("side-b"), later);
  CliResult r = RunCli({"diff", "--sanity", Dir("side-a"), Dir("side-b")});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SAME GPU work"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on 2 ranks"), std::string::npos) << r.out;
  CliResult mixed = RunCli({"diff", "--sanity", real, Dir("side-b")});
  EXPECT_EQ(mixed.rc, 0) << mixed.out << mixed.err;
  EXPECT_NE(mixed.out.find("SAME GPU work"), std::string::npos) << mixed.out;
}

// The map and reduce steps: a partial per export, merged, give the direct readout but for each
// rank's window being its own iterations (the edges differ by the ranks' start spread).
TEST(MultiExportPartials, MergeOfPartialsGivesTheDirectReadout) {
  const std::string real = RealExport("cpfold-ring-1x2-delay");
  SplitOptions split;
  split.start_later_ns = {0, 2'400 * kUs};
  split.utc_error_ns = {0, 900 * kUs};
  std::vector<std::string> parts = SplitPerProcess(real, Dir("partials"), split);
  std::vector<std::string> partials;
  for (const auto& p : parts) {
    std::string out = p.substr(0, p.size() - std::string(".sqlite").size()) + ".partial.json";
    CliResult r = RunCli({"report", "--partial", p, "-o", out});
    ASSERT_EQ(r.rc, 0) << r.err;
    partials.push_back(out);
  }
  json direct = Report(parts);
  CliResult m = RunCli({"merge", "--format", "json", Dir("partials")});
  ASSERT_EQ(m.rc, 0) << m.err;
  json merged = json::parse(m.out);
  ASSERT_EQ(direct["per_rank"].size(), merged["per_rank"].size());
  for (size_t r = 0; r < direct["per_rank"].size(); ++r) {
    const json& a = direct["per_rank"][r];
    const json& b = merged["per_rank"][r];
    EXPECT_NEAR(double(a["ops"]), double(b["ops"]), 0.005 * double(a["ops"])) << "rank " << r;
    for (const char* k : {"busy_ns", "compute_ns", "wait_ns", "transfer_ns", "span_ns"}) {
      EXPECT_NEAR(double(a[k]), double(b[k]), 0.05 * std::max(double(a[k]), 1e6)) << "rank " << r << " " << k;
    }
  }
  EXPECT_EQ(merged["imbalance"]["straggler_rank"], 1);
  EXPECT_EQ(direct["modules"]["rows"].size(), merged["modules"]["rows"].size());
  for (size_t i = 0; i < direct["modules"]["rows"].size(); ++i) {
    const json& a = direct["modules"]["rows"][i];
    const json& b = merged["modules"]["rows"][i];
    EXPECT_EQ(a["name"], b["name"]);
    EXPECT_NEAR(double(a["mean_busy_ns"]), double(b["mean_busy_ns"]), 0.05 * double(a["mean_busy_ns"]) + 1000)
        << a["name"];
  }
  EXPECT_NEAR(double(merged["run_exports"][1]["refine_ns"]), -900.0 * kUs, 50 * kUs);
  EXPECT_LT(merged["run_exports"][1]["residual_ns"], 50 * kUs);
  EXPECT_NE(merged["window"]["description"].get<std::string>().find("merged from partials"), std::string::npos);

  // The same partial twice, a damaged one, and partials of different options are refused.
  CliResult twice = RunCli({"merge", partials[0], partials[0]});
  EXPECT_EQ(twice.rc, 2) << twice.err;
  EXPECT_NE(twice.err.find("is given twice"), std::string::npos) << twice.err;
  std::string damaged = Dir("partials") + "/damaged.partial.json";
  WriteFile(damaged, ReadFile(partials[0]).substr(0, 5000));
  CliResult bad = RunCli({"merge", partials[1], damaged});
  EXPECT_EQ(bad.rc, 4) << bad.err;
  EXPECT_NE(bad.err.find("is not a cpprof partial"), std::string::npos) << bad.err;
  std::string all_window = Dir("partials") + "/rep.1.all.partial.json";
  ASSERT_EQ(RunCli({"report", "--partial", "--window", "all", parts[1], "-o", all_window}).rc, 0);
  CliResult mixed = RunCli({"merge", partials[0], all_window});
  EXPECT_EQ(mixed.rc, 2);
  EXPECT_NE(mixed.err.find("different options"), std::string::npos) << mixed.err;
}

// The efficiency section (docs/cost-model.md) from the map and reduce steps is the direct one: the
// partials carry the sizes and each module's calls per rank. Per-rank exports of the ring, sizes by
// --dims (cpfold's `small` preset: its committed log predates the sizes).
TEST(MultiExportPartials, MergedEfficiencyIsTheDirectOne) {
  const std::string dims =
      "N=256,c_z=64,c_s=128,tri_mul_hidden=64,tri_att_heads=4,tri_att_head_dim=16,single_att_heads=8,transition_n=4,"
      "c_m=32,c_opm=16,msa_heads=4,msa_head_dim=8,msa_depth=32,blocks=8,msa_blocks=1,passes=1,grid=1x2,dtype=bf16";
  SplitOptions split;
  split.start_later_ns = {0, 1'300 * kUs};
  std::vector<std::string> parts = SplitPerProcess(RealExport("cpfold-ring-1x2"), Dir("efficiency"), split);
  for (const auto& p : parts) {
    std::string out = p.substr(0, p.size() - std::string(".sqlite").size()) + ".partial.json";
    CliResult r = RunCli({"report", "--partial", p, "--dims", dims, "-o", out});
    ASSERT_EQ(r.rc, 0) << r.err;
  }
  std::vector<std::string> args = parts;
  args.insert(args.end(), {"--dims", dims});
  json direct = Report(args)["efficiency"];
  CliResult m = RunCli({"merge", "--format", "json", Dir("efficiency")});
  ASSERT_EQ(m.rc, 0) << m.err;
  json merged = json::parse(m.out)["efficiency"];
  ASSERT_TRUE(direct["computed"].get<bool>()) << direct.dump(2);
  ASSERT_TRUE(merged["computed"].get<bool>()) << merged.dump(2);
  for (const char* k : {"dims_source", "dims", "dtype", "gpu", "device", "link_source", "iterations", "notes"}) {
    EXPECT_EQ(direct[k], merged[k]) << k;
  }
  ASSERT_EQ(direct["modules"].size(), merged["modules"].size());
  ASSERT_EQ(direct["modules"].size(), 14u);
  for (size_t i = 0; i < direct["modules"].size(); ++i) {
    const json& a = direct["modules"][i];
    const json& b = merged["modules"][i];
    for (const char* k : {"module", "path", "cost_key", "calls_per_iteration", "calls_source", "config_calls", "flops",
                          "matmul_flops", "bytes", "bound", "ridge", "peak_tflops"}) {
      EXPECT_EQ(a[k], b[k]) << a["path"] << " " << k;
    }
    EXPECT_EQ(b["calls_source"], "capture") << b["path"];
    // Times: each export's window is its own iterations (pipeline/partial_merge.h): the module's GPU
    // time per iteration is the same work, to the edges' clipping.
    EXPECT_NEAR(a["time_ns"].get<double>(), b["time_ns"].get<double>(), 0.01 * a["time_ns"].get<double>()) << a["path"];
  }
  ASSERT_EQ(direct["comm"].size(), merged["comm"].size());
  for (size_t i = 0; i < direct["comm"].size(); ++i) {
    EXPECT_EQ(direct["comm"][i]["bytes_per_shift"], merged["comm"][i]["bytes_per_shift"]);
    EXPECT_EQ(direct["comm"][i]["shifts_per_iteration"], merged["comm"][i]["shifts_per_iteration"]);
    EXPECT_NEAR(direct["comm"][i]["transfer_ns_per_shift"].get<double>(),
                merged["comm"][i]["transfer_ns_per_shift"].get<double>(),
                0.01 * direct["comm"][i]["transfer_ns_per_shift"].get<double>());
  }
  // The text section too, but for the times.
  CliResult text = RunCli({"merge", Dir("efficiency")});
  EXPECT_NE(text.out.find("Efficiency per module (H200 SXM bf16"), std::string::npos) << text.out;
  // A partial of the older format is refused with what to do.
  std::string old = Dir("efficiency") + "/old.partial.json";
  std::string body =
      ReadFile(Dir("efficiency") + "/" + std::filesystem::path(parts[0]).stem().string() + ".partial.json");
  const std::string schema = "\"schema\":\"cpprof.partial/2\"";
  ASSERT_NE(body.find(schema), std::string::npos);
  body.replace(body.find(schema), schema.size(), "\"schema\":\"cpprof.partial/1\"");
  WriteFile(old, body);
  CliResult refused = RunCli({"merge", old});
  EXPECT_EQ(refused.rc, 4);
  EXPECT_NE(refused.err.find("is a partial of another cpprof (cpprof.partial/1; this one reads cpprof.partial/2): "
                             "make it again"),
            std::string::npos)
      << refused.err;
}

TEST(MultiExportPartials, OnePartialMergedIsTheReport) {
  const std::string real = RealExport("cpfold-train-1x2");
  std::string out = Dir("one") + "/train.partial.json";
  std::filesystem::create_directories(Dir("one"));
  ASSERT_EQ(RunCli({"report", "--partial", real, "-o", out}).rc, 0);
  CliResult merged = RunCli({"merge", out, "--format", "json"});
  ASSERT_EQ(merged.rc, 0) << merged.err;
  // A partial carries no ops: merge gives the report without its replay and overlap tax.
  json plain = Report({real, "--no-replay"});
  plain.erase("overlap_tax");
  EXPECT_EQ(json::parse(merged.out), plain) << "the map and reduce steps of one export are the report";
  // With the sizes and a cost config (a module of its own name mapped to a formula): the same
  // efficiency section, byte for byte.
  const std::string cfg = Dir("one") + "/cost.json";
  WriteFile(cfg, R"({"modules": {"MSAModule/MSABlock/PairTransition": "SingleTransition"}, "calls": {"MSA": "3"}})");
  const std::string dims =
      "N=128,c_z=64,c_s=128,tri_mul_hidden=64,tri_att_head_dim=16,single_att_heads=8,c_m=32,"
      "c_opm=16,msa_heads=4,msa_depth=32,blocks=8,msa_blocks=1,grid=1x2";
  const std::string sized = Dir("one") + "/train.sized.partial.json";
  ASSERT_EQ(RunCli({"report", "--partial", real, "--dims", dims, "--model-config", cfg, "-o", sized}).rc, 0);
  CliResult m2 = RunCli({"merge", sized, "--format", "json"});
  ASSERT_EQ(m2.rc, 0) << m2.err;
  json direct = Report({real, "--dims", dims, "--model-config", cfg, "--no-replay"});
  direct.erase("overlap_tax");
  ASSERT_TRUE(direct["efficiency"]["computed"].get<bool>()) << direct["efficiency"].dump(2);
  EXPECT_EQ(json::parse(m2.out), direct);
  bool mapped = false;
  for (const json& x : direct["efficiency"]["modules"]) {
    mapped = mapped || (x["path"].get<std::string>().rfind("MSA/", 0) == 0 && x["cost_key"] == "SingleTransition");
  }
  EXPECT_TRUE(mapped) << "the config's module mapping travels with the partial";
}

}  // namespace
}  // namespace cpprof::testing

namespace cpprof::testing {
namespace {

// One Perfetto trace of a run captured per rank: the same events as the single export's trace,
// a process per rank, on the first export's clock (to the alignment's error).
TEST(MultiExportTrace, PerRankExportsGiveOneTrace) {
  const std::string real = RealExport("cpfold-ring-1x2");
  SplitOptions split;
  split.start_later_ns = {0, 5'000 * kUs};
  std::vector<std::string> parts = SplitPerProcess(real, TempDir() + "/multi/trace", split);
  CliResult one = RunCli({"export", real});
  CliResult run = RunCli({"export", TempDir() + "/multi/trace"});
  ASSERT_EQ(one.rc, 0) << one.err;
  ASSERT_EQ(run.rc, 0) << run.err;
  json a = json::parse(one.out), b = json::parse(run.out);
  EXPECT_EQ(b["otherData"]["exports"].size(), 2u);
  EXPECT_NEAR(double(b["otherData"]["exports"][1]["offset_ns"]), 5.0 * kMs, 50 * kUs);
  // Per rank (a's pid -> rank by its sort index; b's pid is the rank): events by name and time.
  std::map<int64_t, int64_t> rank_of_pid;
  for (const json& e : a["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_sort_index") rank_of_pid[e["pid"]] = e["args"]["sort_index"];
  }
  auto events = [](const json& doc, const std::function<int64_t(int64_t)>& rank) {
    std::map<std::pair<int64_t, std::string>, std::vector<double>> out;
    for (const json& e : doc["traceEvents"]) {
      if (e["ph"] == "X") out[{rank(e["pid"]), e["name"]}].push_back(e["ts"]);
    }
    return out;
  };
  auto ea = events(a, [&](int64_t pid) { return rank_of_pid.at(pid); });
  auto eb = events(b, [](int64_t pid) { return pid; });
  ASSERT_EQ(ea.size(), eb.size());
  for (const auto& [key, ts] : ea) {
    ASSERT_EQ(eb[key].size(), ts.size()) << key.second;
    for (size_t i = 0; i < ts.size(); ++i) EXPECT_NEAR(eb[key][i], ts[i], 1.0) << key.second;  // 1 us
  }
}

// Kineto traces of a run captured per rank: one per rank, as of the single export (same events by
// category and name, the same times to the alignment's error, the run's world size).
TEST(MultiExportTrace, PerRankExportsGiveKinetoTracesPerRank) {
  const std::string real = RealExport("cpfold-ring-1x2");
  SplitOptions split;
  split.start_later_ns = {0, 5'000 * kUs};
  SplitPerProcess(real, TempDir() + "/multi/kineto", split);
  const std::string one_dir = TempDir() + "/multi/kineto-one", run_dir = TempDir() + "/multi/kineto-run";
  std::filesystem::remove_all(one_dir);
  std::filesystem::remove_all(run_dir);
  CliResult one = RunCli({"export", "--format", "kineto", real, "-o", one_dir});
  CliResult run = RunCli({"export", "--format", "kineto", TempDir() + "/multi/kineto", "-o", run_dir});
  ASSERT_EQ(one.rc, 0) << one.err;
  ASSERT_EQ(run.rc, 0) << run.err;
  auto events = [](const json& doc) {
    std::map<std::pair<std::string, std::string>, std::vector<double>> out;
    for (const json& e : doc["traceEvents"]) {
      if (e["ph"] == "X") out[{e["cat"], e["name"]}].push_back(e["ts"]);
    }
    for (auto& [key, ts] : out) std::sort(ts.begin(), ts.end());
    return out;
  };
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const std::string file = "/rank" + std::to_string(rank) + ".json";
    json a = json::parse(ReadFile(one_dir + file)), b = json::parse(ReadFile(run_dir + file));
    EXPECT_EQ(a["distributedInfo"], b["distributedInfo"]);
    EXPECT_EQ(a["deviceProperties"], b["deviceProperties"]);
    auto ea = events(a), eb = events(b);
    ASSERT_EQ(ea.size(), eb.size());
    for (const auto& [key, ts] : ea) {
      ASSERT_EQ(eb[key].size(), ts.size()) << key.first << " " << key.second;
      for (size_t i = 0; i < ts.size(); ++i) EXPECT_NEAR(eb[key][i], ts[i], 1.0) << key.second;  // 1 us
    }
  }
  std::filesystem::remove_all(one_dir);
  std::filesystem::remove_all(run_dir);
}

// Exports of the same name in different folders (one nsys per node, each writing rep.sqlite)
// are told apart by their folders in the readout's table of exports.
TEST(MultiExport, SameNamedExportsAreToldApartByTheirFolders) {
  const std::string real = RealExport("cpfold-ring-1x2");
  std::vector<std::string> parts = SplitPerProcess(real, Dir("names"), {});
  for (int node = 0; node < 2; ++node) {
    std::filesystem::create_directories(Dir("names/node" + std::to_string(node)));
    std::filesystem::rename(parts[node], Dir("names/node" + std::to_string(node) + "/rep.sqlite"));
  }
  json merged = Report({Dir("names/node0/rep.sqlite"), Dir("names/node1/rep.sqlite")});
  ASSERT_EQ(merged["run_exports"].size(), 2u);
  EXPECT_EQ(merged["run_exports"][0]["name"], "node0/rep.sqlite");
  EXPECT_EQ(merged["run_exports"][1]["name"], "node1/rep.sqlite");
}

}  // namespace
}  // namespace cpprof::testing

namespace cpprof::testing {
namespace {

// `stats` on a run's exports: each export's reports in turn, as nsys does with several inputs.
TEST(MultiExportStats, EachExportsReportsInTurn) {
  std::vector<std::string> parts = SplitPerProcess(RealExport("cpfold-ring-1x2"), TempDir() + "/multi/stats", {});
  CliResult both = RunCli({"stats", "-r", "cuda_gpu_kern_sum", "--format", "csv", TempDir() + "/multi/stats"});
  ASSERT_EQ(both.rc, 0) << both.err;
  CliResult a = RunCli({"stats", "-r", "cuda_gpu_kern_sum", "--format", "csv", parts[0]});
  CliResult b = RunCli({"stats", "-r", "cuda_gpu_kern_sum", "--format", "csv", parts[1]});
  EXPECT_EQ(both.out, "==> " + parts[0] + " <==\n" + a.out + "\n==> " + parts[1] + " <==\n" + b.out);
  CliResult as_json = RunCli({"stats", "--format", "json", TempDir() + "/multi/stats"});
  EXPECT_EQ(as_json.rc, 2);
  EXPECT_NE(as_json.err.find("give -o PREFIX"), std::string::npos) << as_json.err;
  std::string prefix = TempDir() + "/multi/stats-out";
  CliResult files = RunCli({"stats", "-r", "nvtx_sum", TempDir() + "/multi/stats", "-o", prefix});
  ASSERT_EQ(files.rc, 0) << files.err;
  EXPECT_TRUE(std::filesystem::exists(prefix + "_rep.0_nvtx_sum.csv"));
  EXPECT_TRUE(std::filesystem::exists(prefix + "_rep.1_nvtx_sum.csv"));
}

}  // namespace
}  // namespace cpprof::testing
