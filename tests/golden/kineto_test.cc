// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// `cpprof export --format kineto`: one Kineto-style trace per rank with the fields Holistic Trace
// Analysis reads (docs/kineto.md), checked on the real exports: top-level schemaVersion and
// distributedInfo, every event's keys and types, Kineto's categories, GPU ops on pid = device and
// tid = stream with args stream/device/correlation, launches linked by correlation, ProfilerStep#N
// over the iterations, and as many GPU ops per rank as the Chrome trace of that rank.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "test_support.h"

namespace cpprof::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class KinetoFormat : public ::testing::TestWithParam<const char*> {};

TEST_P(KinetoFormat, HasWhatHtaReads) {
  const std::string name = GetParam();
  std::string dir = TempDir() + "/kineto-" + name;
  fs::remove_all(dir);
  CliResult r = RunCli({"export", RealExport(name), "--format", "kineto", "-o", dir});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.insert(e.path().filename().string());
  ASSERT_FALSE(files.empty());
  const int world = static_cast<int>(files.size());
  const std::set<std::string> kCats = {"kernel",       "gpu_memcpy",      "gpu_memset",
                                       "cuda_runtime", "user_annotation", "gpu_user_annotation"};
  for (int rank = 0; rank < world; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    ASSERT_TRUE(files.count("rank" + std::to_string(rank) + ".json"));
    Json t = Json::parse(ReadFile(dir + "/rank" + std::to_string(rank) + ".json"));
    EXPECT_EQ(t.at("schemaVersion"), 1);
    EXPECT_EQ(t.at("distributedInfo").at("rank"), rank);
    EXPECT_EQ(t.at("distributedInfo").at("world_size"), world);
    EXPECT_EQ(t.at("distributedInfo").at("backend"), "nccl");
    ASSERT_TRUE(t.at("traceEvents").is_array());
    std::map<std::string, int> per_cat;
    std::set<int64_t> launch_corr;
    std::vector<int64_t> gpu_corr;
    std::set<std::string> steps;
    for (const Json& e : t["traceEvents"]) {
      ASSERT_TRUE(e.at("ph").is_string());
      if (e["ph"] == "M") continue;
      ASSERT_EQ(e["ph"], "X") << e.dump();
      ASSERT_TRUE(e.at("name").is_string() && e.at("pid").is_number_integer() && e.at("tid").is_number_integer());
      ASSERT_TRUE(e.at("ts").is_number() && e.at("dur").is_number()) << e.dump();
      ASSERT_GE(e["ts"].get<double>(), 0);
      ASSERT_GE(e["dur"].get<double>(), 0);
      const std::string cat = e.at("cat");
      ASSERT_TRUE(kCats.count(cat)) << e.dump();
      ++per_cat[cat];
      if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
        const Json& a = e.at("args");
        ASSERT_TRUE(a.at("stream").is_number_integer() && a.at("device").is_number_integer()) << e.dump();
        EXPECT_EQ(e["pid"], a["device"]) << e.dump();
        EXPECT_EQ(e["tid"], a["stream"]) << e.dump();
        if (a.contains("correlation")) gpu_corr.push_back(a["correlation"]);
      } else if (cat == "cuda_runtime") {
        const std::string n = e["name"];
        EXPECT_EQ(n.find("_v"), std::string::npos) << n;  // nsys's ABI suffix dropped, as Kineto names them
        if (e.contains("args") && e["args"].contains("correlation"))
          launch_corr.insert(e["args"]["correlation"].get<int64_t>());
      } else if (e["name"].get<std::string>().rfind("ProfilerStep#", 0) == 0) {
        steps.insert(e["name"]);
      }
    }
    EXPECT_GT(per_cat["kernel"], 0);
    EXPECT_GT(per_cat["cuda_runtime"], 0);
    size_t linked = 0;
    for (int64_t c : gpu_corr) linked += launch_corr.count(c);
    EXPECT_EQ(linked, gpu_corr.size()) << "every GPU op's launch is in the trace";
    // The same GPU ops as the Chrome trace of this rank over the same (steady) window.
    CliResult chrome =
        RunCli({"export", RealExport(name), "--ranks", std::to_string(rank), "--window", "steady", "--no-cp-view"});
    ASSERT_EQ(chrome.rc, 0) << chrome.err;
    Json c = Json::parse(chrome.out);
    int gpu_ops = 0;
    for (const Json& e : c["traceEvents"]) {
      if (e.contains("args") && e["args"].contains("stream")) ++gpu_ops;
    }
    EXPECT_EQ(per_cat["kernel"] + per_cat["gpu_memcpy"] + per_cat["gpu_memset"], gpu_ops);
    if (name == std::string("cpwork-train")) {
      EXPECT_EQ(steps, (std::set<std::string>{"ProfilerStep#1", "ProfilerStep#2"}));  // the steady window
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Real, KinetoFormat, ::testing::Values("cpwork-train", "cpfold-trunk-2x2"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           std::string n = p.param;
                           for (char& c : n) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

// What Holistic Trace Analysis 0.5 depends on (docs/kineto.md), on every real export: the rank
// where its regex finds it (`"rank":\s+(\d+)`, first match line by line), ProfilerStep#N of the
// readout's iterations in its window, one runtime event per correlation, memory ops named and
// typed as Kineto names them with bytes and bandwidth, module ranges as gpu_user_annotation on
// GPU streams, and times that HTA's rounding (ceil ts, floor ts + dur) leaves non-negative.
class KinetoHta : public ::testing::TestWithParam<std::string> {};

TEST_P(KinetoHta, WhatHtaDependsOn) {
  const std::string name = GetParam();
  const std::string db = RealExport(name);
  const std::string dir = TempDir() + "/kineto-hta-" + name;
  fs::remove_all(dir);
  CliResult r = RunCli({"export", db, "--format", "kineto", "-o", dir});
  ASSERT_EQ(r.rc, 0) << r.err;
  CliResult report = RunCli({"report", db, "--format", "json"});
  ASSERT_EQ(report.rc, 0) << report.err;
  std::set<int64_t> window_steps;  // the readout's iterations in its (steady) window, by number
  const Json iterations = Json::parse(report.out)["window"]["iterations"];
  for (size_t i = 0; i < iterations.size(); ++i) {
    if (iterations[i]["in_window"].get<bool>()) window_steps.insert(static_cast<int64_t>(i));
  }
  const bool whole = Json::parse(report.out)["window"]["whole_capture"].get<bool>();
  const RE2 rank_re(R"re("rank":\s+(\d+))re");
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string text = ReadFile(entry.path().string());
    const int rank = std::stoi(entry.path().stem().string().substr(4));
    SCOPED_TRACE(entry.path().filename().string());
    std::istringstream lines(text);
    std::string line;
    int found = -1;
    while (std::getline(lines, line) && !RE2::PartialMatch(line, rank_re, &found)) {
    }
    ASSERT_NE(found, -1) << "HTA's rank regex finds no rank";
    EXPECT_EQ(found, rank);
    Json t = Json::parse(text);
    std::map<int64_t, int> runtime_per_corr;
    std::set<int64_t> steps;
    int memops = 0, gpu_annotations = 0;
    for (const Json& e : t["traceEvents"]) {
      if (e["ph"] != "X") continue;
      const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
      ASSERT_LE(std::ceil(ts), std::floor(ts + dur)) << "negative under HTA's rounding: " << e.dump();
      const std::string cat = e["cat"], n = e["name"];
      if (cat == "cuda_runtime" && e.contains("args") && e["args"].contains("correlation")) {
        ++runtime_per_corr[e["args"]["correlation"].get<int64_t>()];
      } else if (cat == "gpu_memcpy" || cat == "gpu_memset") {
        ++memops;
        EXPECT_EQ(n.rfind(cat == "gpu_memcpy" ? "Memcpy " : "Memset (", 0), 0u) << n;
        EXPECT_TRUE(e["args"].contains("bytes") && e["args"].contains("memory bandwidth (GB/s)")) << e.dump();
      } else if (cat == "gpu_user_annotation") {
        ++gpu_annotations;
        EXPECT_FALSE(e.contains("args") && e["args"].contains("stream")) << "not a kernel for HTA: " << e.dump();
      } else if (cat == "user_annotation" && n.rfind("ProfilerStep#", 0) == 0) {
        steps.insert(std::stoll(n.substr(13)));
      }
    }
    for (const auto& [corr, n] : runtime_per_corr) ASSERT_EQ(n, 1) << "correlation " << corr;
    if (!whole) {
      EXPECT_EQ(steps, window_steps);
    }
    if (name.rfind("cpfold-", 0) == 0) {
      EXPECT_GT(gpu_annotations, 0) << "cpfold's module ranges";
    }
    (void)memops;
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Real, KinetoHta, ::testing::ValuesIn(RealExportNames()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& c : n) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

// The ProfilerStep#N of every rank's file, by file name.
std::map<std::string, std::set<std::string>> StepsPerFile(const std::string& dir) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    Json t = Json::parse(ReadFile(entry.path().string()));
    auto& steps = out[entry.path().filename().string()];
    for (const Json& e : t["traceEvents"]) {
      if (e.contains("name") && e["name"].get<std::string>().rfind("ProfilerStep#", 0) == 0) steps.insert(e["name"]);
    }
  }
  return out;
}

// Without iteration markers the steps are the readout's iterations all the same: the repeats of
// the outermost module range (the marked fixture's ranges renamed to a module's forward), the
// first taken as warm-up and left out of the default (steady) window, in it with --window all.
TEST(KinetoExport, StepsOfModuleRepeatsAsTheReadoutFindsThem) {
  std::string sql = ReadFile(DataPath("sql/_schema.sql")) + ReadFile(DataPath("sql/ring_straggler.sql"));
  for (const char* marker : {"ring:warmup0", "ring:iter1", "ring:iter2"}) {
    for (size_t at; (at = sql.find(marker)) != std::string::npos;)
      sql.replace(at, std::string(marker).size(), "Fold.forward");
  }
  const std::string db = MakeDatabase("kineto_no_markers.sqlite", sql);
  const std::string dir = TempDir() + "/kineto-repeats";
  fs::remove_all(dir);
  CliResult steady = RunCli({"export", db, "--format", "kineto", "-o", dir});
  ASSERT_EQ(steady.rc, 0) << steady.err;
  const std::set<std::string> kSteady = {"ProfilerStep#1", "ProfilerStep#2"};
  const auto files = StepsPerFile(dir);
  ASSERT_EQ(files.size(), 2u);
  for (const auto& [file, steps] : files) EXPECT_EQ(steps, kSteady) << file;
  CliResult all = RunCli({"export", db, "--format", "kineto", "-o", dir, "--force", "--window", "all"});
  ASSERT_EQ(all.rc, 0) << all.err;
  for (const auto& [file, steps] : StepsPerFile(dir)) {
    EXPECT_EQ(steps, (std::set<std::string>{"ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"})) << file;
  }
  CliResult one = RunCli({"export", db, "--format", "kineto", "-o", dir, "--force", "--window", "iter:1"});
  ASSERT_EQ(one.rc, 0) << one.err;
  for (const auto& [file, steps] : StepsPerFile(dir)) EXPECT_EQ(steps, std::set<std::string>{"ProfilerStep#1"}) << file;
  fs::remove_all(dir);
}

TEST(KinetoExport, NeedsAFolderAndKeepsExistingFiles) {
  std::string db = RealExport("cpwork-train");
  CliResult none = RunCli({"export", db, "--format", "kineto"});
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.err.find("--format kineto writes one trace per rank into a folder: give -o DIR"), std::string::npos)
      << none.err;
  std::string dir = TempDir() + "/kineto-keep";
  fs::remove_all(dir);
  fs::create_directories(dir);
  WriteFile(dir + "/rank1.json", "mine");
  CliResult kept = RunCli({"export", db, "--format", "kineto", "-o", dir});
  EXPECT_EQ(kept.rc, 2);
  EXPECT_NE(kept.err.find("rank1.json' exists; give --force"), std::string::npos) << kept.err;
  EXPECT_FALSE(fs::exists(dir + "/rank0.json")) << "checked before any file is written";
  EXPECT_EQ(ReadFile(dir + "/rank1.json"), "mine");
  CliResult forced = RunCli({"export", db, "--format", "kineto", "-o", dir, "--force", "--ranks", "1"});
  ASSERT_EQ(forced.rc, 0) << forced.err;
  EXPECT_NE(ReadFile(dir + "/rank1.json"), "mine");
  EXPECT_FALSE(fs::exists(dir + "/rank0.json"));
}

}  // namespace
}  // namespace cpprof::testing
