// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "profile/probe.h"

#include <gtest/gtest.h>

namespace cpprof::profile {
namespace {

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

const int64_t kGiB = int64_t{1} << 30;

// Lines as cpfold.run prints them (python/cpfold/run.py), with torchrun's rank prefix on one and
// other output around them.
const char* kCpfoldOut =
    "cpfold-config: {\"mode\": \"e2e\", \"n_token\": 512}\n"
    "cpprof-iter: {\"rank\": 0, \"iter\": 0, \"warmup\": true, \"wall_s\": 9.0, \"peak_mem_bytes\": 1000}\n"
    "[rank1]:cpprof-iter: {\"rank\": 1, \"iter\": 0, \"warmup\": true, \"wall_s\": 8.0, \"peak_mem_bytes\": 3000}\n"
    "cpprof-iter: {\"rank\": 0, \"iter\": 1, \"warmup\": false, \"wall_s\": 2.0, \"peak_mem_bytes\": 2000}\n"
    "cpprof-iter: {\"rank\": 1, \"iter\": 1, \"warmup\": false, \"wall_s\": 3.0, \"peak_mem_bytes\": 2500}\n"
    "cpprof-iter: {\"rank\": 0, \"iter\": 2, \"warmup\": false, \"wall_s\": 4.0, \"peak_mem_bytes\": 2000}\n"
    "cpprof-iter: {\"rank\": 1, \"iter\": 2, \"warmup\": false, \"wall_s\": 3.0}\n"
    "cpprof-iter: {not json}\n"
    "cpfold: {\"mode\": \"e2e\", \"peak_mem_kind\": \"cuda_max_allocated\", \"median_iter_s\": 3.0}\n";

TEST(ProbeParse, ReadsCpfoldsIterationLinesAndSummary) {
  ProbeOutput o = ParseProbeOutput(kCpfoldOut);
  ASSERT_EQ(o.iters.size(), 6u);
  EXPECT_EQ(o.iters[1].rank, 1);  // the prefixed line
  EXPECT_TRUE(o.iters[1].warmup);
  EXPECT_EQ(o.iters[5].peak_mem_bytes, -1);  // no memory given
  ASSERT_EQ(o.bad_lines.size(), 1u);
  EXPECT_EQ(o.bad_lines[0], "cpprof-iter: {not json}");
  ASSERT_EQ(o.summaries.size(), 1u);  // cpfold-config is not a summary
  EXPECT_EQ(o.peak_mem_kind, "cuda_max_allocated");
  std::map<int, int64_t> want = {{0, 2000}, {1, 3000}};  // warmup iterations count for memory
  EXPECT_EQ(PeakByRank(o), want);
  // Per rank the mean of its timed iterations (0: 3.0, 1: 3.0); the slowest rank.
  ASSERT_TRUE(IterSeconds(o).has_value());
  EXPECT_DOUBLE_EQ(*IterSeconds(o), 3.0);
  EXPECT_DOUBLE_EQ(IterTotalSeconds(o), 15.0);  // rank 0: 9 + 2 + 4
}

TEST(ProbeParse, WarmupOnlyAndNothing) {
  ProbeOutput w = ParseProbeOutput("cpprof-iter: {\"rank\": 0, \"iter\": 0, \"warmup\": true, \"wall_s\": 5}\n");
  ASSERT_TRUE(IterSeconds(w).has_value());
  EXPECT_DOUBLE_EQ(*IterSeconds(w), 5.0);  // the probe's one iteration (cpprof runs --warmup 0 anyway)
  ProbeOutput none = ParseProbeOutput("hello\ncpprof-iter: without json\n");
  EXPECT_TRUE(none.iters.empty());
  EXPECT_FALSE(IterSeconds(none).has_value());
  EXPECT_TRUE(PeakByRank(none).empty());
}

// cpprof_workload's lines (python/cpprof_workload/runtime.py): the same protocol under its own
// tag, with the memory's kind and the run's planned iterations.
// Seen with real cpfold on 2 ranks under unbuffered Python: two ranks' lines joined in one.
TEST(ProbeParse, LinesOfTwoRanksJoinedInOneAreBothRead) {
  ProbeOutput o = ParseProbeOutput(
      "[rank1]: cpprof-iter: {\"rank\": 1, \"iter\": 2, \"warmup\": false, \"wall_s\": 0.16, \"peak_mem_bytes\": 7}"
      "cpprof-iter: {\"rank\": 0, \"iter\": 2, \"warmup\": false, \"wall_s\": 0.15, \"peak_mem_bytes\": 5}\n\n");
  ASSERT_EQ(o.iters.size(), 2u);
  EXPECT_TRUE(o.bad_lines.empty());
  EXPECT_EQ(o.iters[0].rank, 1);
  EXPECT_EQ(o.iters[1].rank, 0);
  EXPECT_DOUBLE_EQ(o.iters[1].wall_s, 0.15);
}

TEST(ProbeParse, ReadsCpprofWorkloadLines) {
  ProbeOutput o = ParseProbeOutput(
      "[rank0]:cpprof-iter: {\"rank\": 0, \"iter\": 0, \"warmup\": true, \"wall_s\": 2.0, \"wall_ms\": 2000.0, "
      "\"peak_mem_bytes\": 10, \"peak_mem_kind\": \"cpu_max_rss\", \"planned\": 8}\n"
      "cpprof-iter: {\"rank\": 0, \"iter\": 1, \"warmup\": false, \"wall_s\": 1.0, \"planned\": 8}\n"
      "cpprof-iter: {\"rank\": 1, \"iter\": 0, \"warmup\": true, \"wall_s\": 1.5, \"planned\": 8}\n"
      "cpprof-iter: {\"iter\": 1}\n");
  ASSERT_EQ(o.iters.size(), 3u);
  EXPECT_EQ(o.tag, "cpprof-iter");
  EXPECT_EQ(o.planned, 8);
  EXPECT_EQ(PlannedIters(o), 8);
  EXPECT_EQ(o.peak_mem_kind, "cpu_max_rss");
  ASSERT_EQ(o.bad_lines.size(), 1u);  // no rank, no wall_s
  ASSERT_TRUE(IterSeconds(o).has_value());
  EXPECT_DOUBLE_EQ(*IterSeconds(o), 1.5);  // rank 0's timed 1.0; rank 1 has only its warm-up
  // Without `planned`, the most iterations one rank printed (the probe ran them all).
  EXPECT_EQ(PlannedIters(ParseProbeOutput(kCpfoldOut)), 3);
  EXPECT_EQ(PlannedIters(ParseProbeOutput("nothing\n")), 0);
}

TEST(ProbePredict, SaysWhatItCouldNotLearnWithoutIterationLines) {
  Measurement m;
  m.wall_s = 20;
  m.no_iteration_lines = true;
  ProbeLimits l;
  Prediction p = Predict(m, l);
  EXPECT_TRUE(p.time_known);
  EXPECT_DOUBLE_EQ(p.predicted_s, 22);  // the whole probe x 1.1
  ASSERT_FALSE(p.lines.empty());
  EXPECT_EQ(p.lines.back().rfind("not learned: the time of one iteration, how many the run does", 0), 0u)
      << p.lines.back();
}

ProbeLimits H200Limits() {
  ProbeLimits l;
  l.gpu_total_bytes = {{0, 143771LL << 20}, {1, 143771LL << 20}};
  l.ranks_per_node = 2;
  l.timeout_s = 1800;
  l.overhead = 3.0;
  l.planned_iters = 4;
  return l;
}

TEST(ProbePredict, FitsWithTheNumbersShown) {
  Measurement m;
  m.wall_s = 40;
  m.iter_total_s = 10;
  m.iter_s = 10.0;
  m.peak_by_rank = {{0, 60 * kGiB}, {1, 61 * kGiB}};
  m.peak_source = "the workload's cpprof-iter lines";
  Prediction p = Predict(m, H200Limits());
  EXPECT_TRUE(p.ok());
  EXPECT_TRUE(p.memory_known);
  EXPECT_DOUBLE_EQ(p.startup_s, 30);
  EXPECT_DOUBLE_EQ(p.predicted_s, 30 + 4 * 10 * 3.0);
  ASSERT_GE(p.lines.size(), 4u);
  EXPECT_EQ(p.lines[0],
            "rank 0: peak memory 60.0 GiB of 140.4 GiB (43%; at most 126.4 GiB with 10% kept free for nsys)");
  EXPECT_EQ(p.lines.back(),
            "predicted profiled run: 150 s (startup 30.0 s + 4 iterations x 10.0 s x 3.0 (the preset's overhead "
            "factor under nsys, a guess)) against --timeout 1800 s");
}

TEST(ProbePredict, MemoryOverTheGpuLessHeadroomStopsWithTheFix) {
  Measurement m;
  m.wall_s = 5;
  m.iter_s = 1.0;
  m.iter_total_s = 1;
  m.peak_by_rank = {{0, 100 * kGiB}, {3, 130 * kGiB}};  // rank 3 is local rank 1 on 2 GPUs per node
  Prediction p = Predict(m, H200Limits());
  EXPECT_FALSE(p.memory_ok);
  EXPECT_TRUE(p.time_ok);
  ASSERT_EQ(p.problems.size(), 1u);
  EXPECT_EQ(p.problems[0],
            "rank 3 would run out of GPU memory: the probe peaked at 130.0 GiB, more than the 126.4 GiB its GPU "
            "leaves with 10% kept free for nsys (of 140.4 GiB). Fix: a smaller problem (cpfold: a smaller N_TOKEN or "
            "--n-token), more ranks, or --no-probe to run anyway.");
  // An unknown GPU size is said, not guessed.
  ProbeLimits l = H200Limits();
  l.gpu_total_bytes.clear();
  Prediction q = Predict(m, l);
  EXPECT_TRUE(q.memory_ok);
  EXPECT_FALSE(q.memory_known);
  EXPECT_EQ(q.lines[0], "rank 0: peak memory 100.0 GiB (the GPU's total is unknown)");
}

TEST(ProbePredict, TimePastTheTimeoutStopsAndAnUpperBoundPastItWarns) {
  Measurement m;
  m.wall_s = 70;
  m.iter_s = 50.0;
  m.iter_total_s = 50;
  ProbeLimits l = H200Limits();
  l.timeout_s = 600;
  Prediction p = Predict(m, l);  // 20 + 4 x 50 x 3 = 620 > 600
  EXPECT_FALSE(p.time_ok);
  ASSERT_EQ(p.problems.size(), 1u);
  EXPECT_CONTAINS(p.problems[0],
                  "the profiled run would pass --timeout 600 s: predicted 620 s (startup 20.0 s + 4 "
                  "iterations x 50.0 s x 3.0");
  EXPECT_CONTAINS(p.problems[0], "Fix: a larger --timeout (say 960)");
  EXPECT_CONTAINS(p.problems[0], "--no-probe to run anyway");
  // e2e: the probe ran 2 of 10 diffusion steps; only the upper bound passes the timeout: a warning.
  l.timeout_s = 1000;
  l.iter_scale = 5;
  Prediction q = Predict(m, l);
  EXPECT_TRUE(q.ok());
  EXPECT_DOUBLE_EQ(q.predicted_max_s, 20 + 4 * 50 * 3.0 * 5);
  ASSERT_EQ(q.warnings.size(), 1u);
  EXPECT_CONTAINS(q.warnings[0], "may pass --timeout 1000 s: predicted 620 s to 3020 s");
  // A workload without the protocol: its whole wall time, times the overhead.
  Measurement whole;
  whole.wall_s = 100;
  ProbeLimits c;
  c.overhead = 1.1;
  c.timeout_s = 100;
  Prediction r = Predict(whole, c);
  EXPECT_FALSE(r.time_ok);
  EXPECT_DOUBLE_EQ(r.predicted_s, 110);
  EXPECT_CONTAINS(r.lines.back(), "the probe's 100 s x 1.1");
}

// --probe-cap stopped a workload that printed no iteration line: no time prediction (its wall
// time is the cap's), the memory seen so far is still checked, and the lines say what is missing.
TEST(ProbePredict, ACappedProbeChecksMemoryOnlyAndSaysWhatItCouldNotLearn) {
  Measurement m;
  m.wall_s = 121;
  m.cap_s = 120;
  m.capped = true;
  m.no_iteration_lines = true;
  m.peak_by_rank = {{0, 2 * kGiB}, {1, 2 * kGiB}};
  m.peak_source = "nvidia-smi's memory.used every 1 s, less what was in use before (by local rank)";
  Prediction p = Predict(m, H200Limits());
  EXPECT_TRUE(p.ok());
  EXPECT_TRUE(p.memory_known);
  EXPECT_FALSE(p.time_known);
  EXPECT_DOUBLE_EQ(p.predicted_s, 0);
  ASSERT_GE(p.lines.size(), 2u);
  EXPECT_EQ(p.lines[p.lines.size() - 2],
            "probe stopped after 120 s (--probe-cap): peak GPU memory seen so far 2.0 GiB per GPU (nvidia-smi); not "
            "learned: time per iteration, iteration count, whether the whole run fits the --timeout (1800 s)");
  EXPECT_CONTAINS(p.lines.back(), "--probe-cap 0 to probe the whole run");
  for (const auto& line : p.lines) EXPECT_EQ(line.find("predicted profiled run"), std::string::npos) << line;
  // Ranks that differ are each named; nothing seen is said.
  m.peak_by_rank = {{0, 2 * kGiB}, {1, 3 * kGiB}};
  EXPECT_CONTAINS(Predict(m, H200Limits()).lines[3],
                  "peak GPU memory seen so far per GPU: rank 0 2.0 GiB, rank 1 3.0 GiB (nvidia-smi)");
  m.peak_by_rank.clear();
  EXPECT_CONTAINS(Predict(m, H200Limits()).lines[1],
                  "probe stopped after 120 s (--probe-cap): no peak GPU memory seen (nvidia-smi gave nothing);");
  // Memory over the limit seen before the cap stops the run as an uncapped probe would.
  m.peak_by_rank = {{0, 130 * kGiB}};
  Prediction q = Predict(m, H200Limits());
  EXPECT_FALSE(q.ok());
  ASSERT_EQ(q.problems.size(), 1u);
  EXPECT_CONTAINS(q.problems[0], "rank 0 would run out of GPU memory: the probe peaked at 130.0 GiB");
  auto j = ProbeJson({"torchrun"}, m, H200Limits(), q, ProbeOutput{});
  EXPECT_EQ(j["capped"], true);
  EXPECT_EQ(j["probe_cap_s"], 120.0);
  EXPECT_EQ(j["probe_cap_lifted"], false);
}

TEST(ProbePredict, JsonRecordsTheMeasurementAndTheVerdict) {
  Measurement m;
  m.wall_s = 5;
  m.iter_s = 1.0;
  m.peak_by_rank = {{0, 2 * kGiB}};
  ProbeOutput o = ParseProbeOutput(kCpfoldOut);
  ProbeLimits l = H200Limits();
  auto j = ProbeJson({"torchrun", "x"}, m, l, Predict(m, l), o);
  EXPECT_EQ(j["schema"], "cpprof.probe/1");
  EXPECT_EQ(j["peak_mem"][0]["gpu_total_bytes"], 143771LL << 20);
  EXPECT_EQ(j["limits"]["overhead_factor_is_a_guess"], true);
  EXPECT_EQ(j["prediction"]["memory_ok"], true);
  EXPECT_EQ(j["iters"].size(), 6u);
  EXPECT_EQ(j["capped"], false);
  EXPECT_EQ(j["probe_cap_s"], 0.0);
}

}  // namespace
}  // namespace cpprof::profile
