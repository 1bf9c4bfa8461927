// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof sweep end to end with fakes (tests/data/profile): the fake nsys runs the command and
// writes a real fast-preset cpfold export (tests/data/real/cpfold-opts-fast-1x2) as the capture,
// the fake torchrun starts one process per rank, and fakesweep.py answers like cpfold (its config
// line, an iteration line per rank and iteration) with numbers that scale with N and the grid, and
// runs out of memory like PyTorch above --oom-above. The sweep runs in-process (RunSweep) against
// hand-made doctor findings like the H200's; the CLI's own checks run the built binary.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "doctor/doctor.h"
#include "doctor/nsys_help.h"
#include "profile/cpfold_presets.h"
#include "runner/process_runner.h"
#include "sweep/run_sweep.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class FakeSweep {
 public:
  explicit FakeSweep(const std::string& name) {
    dir_ = TempDir() + "/sweep-" + name;
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/bin");
    for (const char* tool : {"nsys", "torchrun"}) {
      fs::copy_file(DataPath(std::string("profile/") + tool), dir_ + "/bin/" + tool);
    }
    log_ = dir_ + "/runs.log";
    // The H200 as the doctor saw it: 2 free H200s, nsys 2025.3.1, CPU sampling available.
    f_.candidates.push_back({});
    auto& c = f_.candidates.back();
    c.path = c.real_path = dir_ + "/bin/nsys";
    c.version = doctor::ParseNsysVersion("2025.3.1.0");
    f_.chosen = 0;
    f_.profile_help_read = true;
    f_.profile_help = doctor::ParseProfileHelp(ReadFile(DataPath("fakes/h200/nsys-profile--help.txt")));
    f_.cpu_sampling = true;
    f_.importer.checked = f_.importer.loads = true;
    f_.nvidia_smi_found = true;
    for (int i = 0; i < 2; ++i) {
      doctor::GpuInfo g;
      g.index = i;
      g.name = "NVIDIA H200";
      g.compute_cap = "9.0";
      g.memory_total_mib = 143771;
      g.uuid = "GPU-" + std::to_string(i);
      f_.gpus.push_back(g);
      f_.targets.push_back(i);
    }
    f_.python.runs = true;
    f_.python.torchrun = "torchrun";
    f_.python.version = "3.12.3";
    f_.python.torch_version = "2.11.0+cu130";
    std::string python = fs::canonical(DataPath("../../python")).string();
    in_.launcher = python + "/cpprof_helpers/launch_workload.py";
    in_.cpfold_root = python;
    in_.caller_env = {{"PATH", dir_ + "/bin:/usr/bin:/bin"},
                      {"PYTHONPATH", DataPath("profile")},
                      {"FAKE_EXPORT", RealExport("cpfold-opts-fast-1x2")}};
    in_.user = "tester";
    in_.tmp_root = dir_ + "/tmp";
    o_.out_dir = dir_ + "/out";
    o_.kill_grace_s = 1;
    o_.timeout_s = 120;
    o_.live = false;
    o_.cpprof_version = "test";
    o_.spec.workload = "-m fakesweep";
    o_.spec.iters = 3;
    o_.spec.warmup = 1;
    o_.spec.capture_iters = 2;
    Template("");
  }
  profile::PlanInputs& inputs() { return in_; }
  // The workload's extra flags after the template's fixed part.
  void Template(const std::string& extra) {
    o_.spec.arg_template = "-m fakesweep --n {n} --cp0 {cp0} --cp1 {cp1} --iters {iters} --warmup {warmup} --log " +
                           log_ + (extra.empty() ? "" : " " + extra);
  }
  sweep::SweepOptions& options() { return o_; }
  doctor::DoctorFindings& findings() { return f_; }
  StatusOr<int> Run() {
    runner::RealProcessRunner r;
    out_.str("");
    err_.str("");
    return sweep::RunSweep(o_, f_, in_, r, out_, err_);
  }
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }
  std::string runs() const { return fs::exists(log_) ? ReadFile(log_) : ""; }
  json State() const { return json::parse(ReadFile(o_.out_dir + "/sweep.json")); }
  std::string File(const std::string& name) const { return ReadFile(o_.out_dir + "/" + name); }

 private:
  std::string dir_, log_;
  doctor::DoctorFindings f_;
  profile::PlanInputs in_;
  sweep::SweepOptions o_;
  std::ostringstream out_, err_;
};

const json* Point(const json& state, const std::string& grid, int n) {
  for (const auto& p : state["points"]) {
    if (p["grid"] == grid && p["n"] == n) return &p;
  }
  return nullptr;
}

// Also the source of tests/data/sweep/two-grids.json (the browser test's page): CPPROF_SWEEP_KEEP=DIR
// keeps the sweep's folder there.
TEST(SweepRun, SizesByGridsEndToEnd) {
  FakeSweep s("grids");
  s.Template("--oom-above 768");  // 1x1 runs out of memory at N=1024; 1x2 (half the pair per rank) does not
  s.options().spec.sizes = {256, 512, 1024};
  s.options().spec.grids = {"1x1", "1x2"};
  auto rc = s.Run();
  ASSERT_TRUE(rc.ok()) << rc.status().message() << s.err();
  EXPECT_EQ(*rc, 0) << s.err();
  if (const char* keep = std::getenv("CPPROF_SWEEP_KEEP")) {
    fs::copy(s.options().out_dir, keep, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  }
  // Each point: one timing run (3 timed iterations) and one capture (2), grid by grid, N upwards;
  // 1x1 N=1024 ran out of memory in its timing run: no capture.
  EXPECT_EQ(s.runs(),
            "n=256 grid=1x1 iters=3 warmup=1\nn=256 grid=1x1 iters=2 warmup=1\n"
            "n=512 grid=1x1 iters=3 warmup=1\nn=512 grid=1x1 iters=2 warmup=1\n"
            "n=1024 grid=1x1 iters=3 warmup=1\n"
            "n=256 grid=1x2 iters=3 warmup=1\nn=256 grid=1x2 iters=2 warmup=1\n"
            "n=512 grid=1x2 iters=3 warmup=1\nn=512 grid=1x2 iters=2 warmup=1\n"
            "n=1024 grid=1x2 iters=3 warmup=1\nn=1024 grid=1x2 iters=2 warmup=1\n");
  json st = s.State();
  EXPECT_EQ(st["schema"], "cpprof.sweep/1");
  ASSERT_EQ(st["points"].size(), 6u);
  for (const auto& p : st["points"]) {
    if (p["grid"] == "1x1" && p["n"] == 1024) continue;
    EXPECT_EQ(p["status"], "ok") << p.dump();
    EXPECT_EQ(p["capture"]["status"], "ok") << p.dump();
  }
  EXPECT_EQ((*Point(st, "1x1", 1024))["status"], "oom");
  // The median of the steady iterations (warm-up left out), the slowest rank per iteration:
  // 1x1 N=256 timed iterations 1..3 claim 1.01, 1.02, 1.00 ms.
  const json* p = Point(st, "1x1", 256);
  ASSERT_NE(p, nullptr);
  EXPECT_DOUBLE_EQ((*p)["timing"]["median_iter_s"].get<double>(), 0.00101);
  EXPECT_EQ((*p)["timing"]["iter_s"].size(), 3u);
  EXPECT_EQ((*p)["timing"]["warmup_iters"], 1);
  const json* q = Point(st, "1x2", 512);
  ASSERT_NE(q, nullptr);
  EXPECT_DOUBLE_EQ((*q)["timing"]["median_iter_s"].get<double>(), 0.00202);
  EXPECT_EQ((*q)["timing"]["peak_mem_bytes"], json({512 * 512 * 4096 / 2, 512 * 512 * 4096 / 2 + 1}));
  // The commands: the timing run has no nsys in front; the capture is the fast preset.
  std::string timing = (*q)["timing"]["argv"].dump(), capture = (*q)["capture"]["argv"].dump();
  EXPECT_EQ(timing.find("nsys"), std::string::npos) << timing;
  EXPECT_CONTAINS(timing, "\"--nproc_per_node=2\"");
  EXPECT_CONTAINS(capture, "\"--trace=cuda,nvtx\"");
  EXPECT_CONTAINS(capture, "\"--n\",\"512\",\"--cp0\",\"1\",\"--cp1\",\"2\",\"--iters\",\"2\"");
  // The capture's readout, in-process: modules, exposed transfer, efficiency from the config line.
  EXPECT_GE((*q)["capture"]["exposed_transfer_share"].get<double>(), 0);
  EXPECT_GT((*q)["capture"]["modules"].size(), 3u);
  EXPECT_TRUE((*q)["capture"]["efficiency"].is_object());
  EXPECT_EQ((*q)["capture"]["files"], "points/n512-1x2");
  EXPECT_TRUE(fs::exists(s.options().out_dir + "/points/n512-1x2.sqlite"));
  EXPECT_TRUE(fs::exists(s.options().out_dir + "/points/n512-1x2.timing.stdout.log"));
  // The largest N per grid: 512 on 1x1 (1024 ran out of memory), 1024 on 1x2 (no OOM), with the
  // memory's N^2 growth extrapolated to the H200's 143771 MiB: 1024 x sqrt(140.4 GiB / 2 GiB) = 8579,
  // rounded down to a multiple of 64.
  ASSERT_EQ(st["largest_n_per_grid"].size(), 2u);
  EXPECT_EQ(st["largest_n_per_grid"][0]["largest_n"], 512);
  EXPECT_EQ(st["largest_n_per_grid"][0]["first_oom_n"], 1024);
  EXPECT_EQ(st["largest_n_per_grid"][1]["largest_n"], 1024);
  EXPECT_TRUE(st["largest_n_per_grid"][1]["first_oom_n"].is_null());
  EXPECT_EQ(st["largest_n_per_grid"][1]["how"], "no size ran out of memory: N=1024 is the largest tried");
  EXPECT_EQ(st["largest_n_per_grid"][1]["predicted_n"], 8576);
  EXPECT_EQ(st["machine"]["gpu_name"], "NVIDIA H200");
  // sweep.md and sweep.html: the tables and every plot.
  std::string md = s.File("sweep.md"), html = s.File("sweep.html");
  EXPECT_CONTAINS(md, "## Largest N per grid");
  EXPECT_CONTAINS(md, "| 1x2 | 512 | ladder | ok | 2.020 |");
  EXPECT_CONTAINS(md, "## Time per module, grid 1x2");
  EXPECT_EQ(s.out(), md) << "stdout carries sweep.md";
  for (const char* id : {"plot-module-time-1x1", "plot-module-time-1x2", "plot-speedup", "plot-efficiency",
                         "plot-exposed-transfer", "plot-memory", "plot-largest"}) {
    EXPECT_CONTAINS(html, std::string("<figure id=\"") + id + "\"");
  }
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg")) << "nothing fetched";
  // Deterministic: a rerun with nothing left to run writes the same bytes.
  std::string js = s.File("sweep.json");
  auto again = s.Run();
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(s.File("sweep.json"), js);
  EXPECT_EQ(s.File("sweep.md"), md);
  EXPECT_EQ(s.File("sweep.html"), html);
}

TEST(SweepRun, AnOutOfMemoryStopsTheGridsLadder) {
  FakeSweep s("oom");
  s.Template("--oom-above 256");
  s.options().spec.sizes = {256, 512, 1024};
  s.options().spec.grids = {"1x1"};
  auto rc = s.Run();
  ASSERT_TRUE(rc.ok()) << rc.status().message() << s.err();
  EXPECT_EQ(*rc, 0);
  // N=512 ran out of memory in its timing run: no capture, and N=1024 never ran.
  EXPECT_EQ(s.runs(),
            "n=256 grid=1x1 iters=3 warmup=1\nn=256 grid=1x1 iters=2 warmup=1\nn=512 grid=1x1 iters=3 "
            "warmup=1\n");
  json st = s.State();
  EXPECT_EQ((*Point(st, "1x1", 512))["status"], "oom");
  EXPECT_CONTAINS((*Point(st, "1x1", 512))["detail"].get<std::string>(),
                  "ran out of GPU memory (exit 1): torch.OutOfMemoryError: CUDA out of memory.");
  EXPECT_EQ((*Point(st, "1x1", 1024))["status"], "skipped");
  EXPECT_EQ((*Point(st, "1x1", 1024))["detail"], "not run: N=512 on 1x1 ran out of GPU memory");
  EXPECT_EQ(st["largest_n_per_grid"][0]["largest_n"], 256);
  EXPECT_EQ(st["largest_n_per_grid"][0]["first_oom_n"], 512);
  EXPECT_EQ(st["largest_n_per_grid"][0]["how"], "the ladder: the last size that ran before the first out-of-memory");
}

// The timing run fits but the capture runs out of memory under nsys: the timings stand, the point
// is finished (no capture, said in a note) and the ladder goes on.
TEST(SweepRun, ACaptureOutOfMemoryKeepsTheTimings) {
  FakeSweep s("capture-oom");
  s.Template("--oom-when-iters 2");
  s.options().spec.sizes = {256, 512};
  s.options().spec.grids = {"1x1"};
  auto rc = s.Run();
  ASSERT_TRUE(rc.ok()) << rc.status().message() << s.err();
  EXPECT_EQ(*rc, 0);
  json st = s.State();
  const json* p = Point(st, "1x1", 512);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ((*p)["status"], "ok");
  EXPECT_EQ((*p)["capture"]["status"], "oom");
  EXPECT_CONTAINS((*p)["capture"]["detail"].get<std::string>(),
                  "the capture ran out of GPU memory under nsys (the timing run did not)");
  EXPECT_DOUBLE_EQ((*p)["timing"]["median_iter_s"].get<double>(), 0.00404);
  EXPECT_CONTAINS(st["notes"].dump(), "1x1 N=512: no capture: the capture ran out of GPU memory");
  EXPECT_EQ(st["largest_n_per_grid"][0]["largest_n"], 512);
}

TEST(SweepRun, ATimingRunPastTheTimeoutStopsTheLadderAndFailsTheSweep) {
  FakeSweep s("timeout");
  s.Template("--hang-at 512");
  s.options().spec.sizes = {256, 512, 1024};
  s.options().spec.grids = {"1x1"};
  s.options().timeout_s = 2;
  auto rc = s.Run();
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), ExitCode::kExternal);
  EXPECT_CONTAINS(rc.status().message(), "1x1 N=512: passed --timeout 2 s and was killed");
  json st = s.State();
  EXPECT_EQ((*Point(st, "1x1", 512))["status"], "timeout");
  EXPECT_EQ((*Point(st, "1x1", 1024))["detail"], "not run: N=512 on 1x1 passed --timeout");
  EXPECT_EQ(st["largest_n_per_grid"][0]["how"],
            "no size ran out of memory; N=512 passed --timeout, so N >= 512 was not tried");
}

// The timing run is the capture's probe: a peak too close to the GPU's memory for nsys's share
// skips the capture (the timings stand) and says why.
TEST(SweepRun, ATimingRunPredictingTheCaptureWouldNotFitSkipsIt) {
  FakeSweep s("no-room");
  for (auto& g : s.findings().gpus) g.memory_total_mib = 2048;  // N=512 peaks at 1 GiB, N=1024 at 4 GiB
  s.options().spec.sizes = {512, 1024};
  s.options().spec.grids = {"1x1"};
  auto rc = s.Run();
  ASSERT_TRUE(rc.ok()) << rc.status().message() << s.err();
  EXPECT_EQ(*rc, 0);
  json st = s.State();
  EXPECT_EQ((*Point(st, "1x1", 512))["capture"]["status"], "ok");
  const json* p = Point(st, "1x1", 1024);
  EXPECT_EQ((*p)["status"], "ok");
  EXPECT_EQ((*p)["capture"]["status"], "skipped");
  EXPECT_CONTAINS((*p)["capture"]["detail"].get<std::string>(),
                  "the timing run predicts the capture would fail: rank 0 would run out of GPU memory");
  EXPECT_TRUE((*p)["capture"]["argv"].empty()) << "no capture was tried";
  EXPECT_EQ(Count(s.runs(), "n=1024"), 1);
}

TEST(SweepRun, LargestBisectsBetweenTheLastFitAndTheFirstOutOfMemory) {
  FakeSweep s("largest");
  s.Template("--oom-above 400");
  s.options().spec.sizes = {256, 512};
  s.options().spec.grids = {"1x1"};
  s.options().spec.largest = true;
  s.options().spec.step = 64;
  auto rc = s.Run();
  ASSERT_TRUE(rc.ok()) << rc.status().message() << s.err();
  json st = s.State();
  // 256 fits, 512 does not; then 384 fits, 448 does not: within a step of 64.
  EXPECT_EQ((*Point(st, "1x1", 384))["origin"], "bisection");
  EXPECT_EQ((*Point(st, "1x1", 384))["status"], "ok");
  EXPECT_EQ((*Point(st, "1x1", 448))["status"], "oom");
  EXPECT_EQ(st["points"].size(), 4u);
  EXPECT_EQ(st["largest_n_per_grid"][0]["largest_n"], 384);
  EXPECT_EQ(st["largest_n_per_grid"][0]["first_oom_n"], 448);
  EXPECT_CONTAINS(st["largest_n_per_grid"][0]["how"].get<std::string>(), "bisection");
}

TEST(SweepRun, AResumeSkipsFinishedPointsAndRetriesFailedOnes) {
  FakeSweep s("resume");
  // N=512 crashes while the flag file exists (the template stays the same for the resume).
  std::string flag = s.options().out_dir + "-crash";
  WriteFile(flag, "");
  s.Template("--crash-at 512 --crash-flag " + flag);
  s.options().spec.sizes = {256, 512};
  s.options().spec.grids = {"1x1"};
  auto rc = s.Run();
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), ExitCode::kExternal);
  EXPECT_CONTAINS(rc.status().message(),
                  "1 point failed (rerun the same command to retry them; a larger --timeout for those that "
                  "passed it):\n  1x1 N=512: the timing run failed (exit 1)");
  EXPECT_EQ((*Point(s.State(), "1x1", 512))["status"], "failed");
  EXPECT_EQ(Count(s.runs(), "n=256"), 2);
  // Rerun: N=256 is kept, not run again; N=512 (failed) runs again, and now passes.
  fs::remove(flag);
  auto again = s.Run();
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, 0);
  EXPECT_CONTAINS(s.err(), "resuming " + s.options().out_dir +
                               "/sweep.json: 1 finished point kept, not run again (1x1 N=256); 1 unfinished point "
                               "run again");
  EXPECT_EQ(Count(s.runs(), "n=256"), 2) << s.runs();
  EXPECT_EQ(Count(s.runs(), "n=512"), 3) << s.runs();  // the failed timing run, then timing and capture
  EXPECT_EQ((*Point(s.State(), "1x1", 512))["status"], "ok");
}

TEST(SweepRun, AChangedMatrixIsRefusedUnlessForced) {
  FakeSweep s("changed");
  s.options().spec.sizes = {256};
  s.options().spec.grids = {"1x1"};
  ASSERT_TRUE(s.Run().ok()) << s.err();
  s.options().spec.sizes = {256, 512};
  auto rc = s.Run();
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), ExitCode::kUsage);
  EXPECT_CONTAINS(rc.status().message(), "holds a sweep of another matrix or workload (--n was '256', now '256,512')");
  EXPECT_CONTAINS(rc.status().message(), "pass --force to start again there");
  EXPECT_EQ(Count(s.runs(), "n=512"), 0);
  s.options().force = true;
  auto forced = s.Run();
  ASSERT_TRUE(forced.ok()) << forced.status().message();
  EXPECT_EQ(Count(s.runs(), "n=256"), 4) << "--force runs every point again";
  EXPECT_EQ(s.State()["spec"]["sizes"], json({256, 512}));
}

TEST(SweepRun, BusyGpusAreRefusedBeforeAnythingRuns) {
  FakeSweep s("busy");
  s.findings().busy.push_back({1, {{4242, 30000, "GPU-1"}}});
  s.options().spec.sizes = {256};
  s.options().spec.grids = {"1x1", "1x2"};
  auto rc = s.Run();
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), ExitCode::kCheckFailed);
  EXPECT_EQ(rc.status().message(),
            "grid 1x2: 2 ranks need 2 free GPUs but only 1 of 2 is free: GPU 1 is busy: PID 4242 (30000 MiB). Wait "
            "for them, or ask for fewer ranks (never more ranks than free GPUs).");
  EXPECT_EQ(s.runs(), "");
  EXPECT_FALSE(fs::exists(s.options().out_dir));
}

// The reference workload itself (cpfold, on CPU with gloo, tiny preset) through the fake torchrun
// and nsys: its own iteration lines (warm-up marked, two ranks writing to one pipe), its config
// line for the efficiency section. One size on both grids (one rank, two ranks): each point
// starts Python and torch per rank twice (timing, capture), so a second size would double the
// test's 40 s without reaching other code (the ladder of sizes is the fakes' tests' above).
// Skipped where /usr/bin/python3 (the fakes' PATH) has no torch.
TEST(SweepRun, RealCpfoldOnCpu) {
  if (std::system("PATH=/usr/bin:/bin python3 -c 'import torch' > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "the python3 of /usr/bin:/bin (the fakes' PATH) has no torch";
  }
  FakeSweep s("cpfold");
  std::string python = fs::canonical(DataPath("../../python")).string();
  s.inputs().cpfold_spec = python + "/cpfold/trace_spec.json";
  auto presets = profile::ReadCpfoldPresets(python);
  ASSERT_TRUE(presets.ok()) << presets.status().message();
  s.inputs().cpfold_presets = *presets;
  model::SweepSpec& spec = s.options().spec;
  spec.workload = "cpfold trunk";
  spec.mode = "trunk";
  spec.arg_template = "";
  spec.dtype = "fp32";
  spec.sizes = {48};
  spec.grids = {"1x1", "1x2"};
  spec.iters = 2;
  spec.capture_iters = 1;
  spec.extra_args = {"--preset", "tiny", "--device", "cpu", "--backend", "gloo"};
  auto rc = s.Run();
  ASSERT_TRUE(rc.ok()) << rc.status().message() << s.err();
  EXPECT_EQ(*rc, 0) << s.err();
  json st = s.State();
  ASSERT_EQ(st["points"].size(), 2u);
  for (const auto& p : st["points"]) {
    EXPECT_EQ(p["status"], "ok") << p.dump();
    EXPECT_EQ(p["timing"]["iter_s"].size(), 2u) << "both steady iterations of every rank read: " << p.dump();
    EXPECT_EQ(p["timing"]["warmup_iters"], 1);
    EXPECT_GT(p["timing"]["median_iter_s"].get<double>(), 0);
    EXPECT_EQ(p["timing"]["peak_mem_kind"], "cpu_max_rss");
    EXPECT_EQ(p["timing"]["peak_mem_bytes"].size(), p["ranks"].get<size_t>());
    EXPECT_EQ(p["capture"]["status"], "ok");
    EXPECT_TRUE(p["capture"]["efficiency"].is_object()) << "sizes from cpfold's config line";
  }
  EXPECT_CONTAINS((*Point(st, "1x2", 48))["timing"]["argv"].dump(),
                  "\"-m\",\"cpfold.run\",\"--mode\",\"trunk\",\"--n-token\",\"48\",\"--cp0\",\"1\",\"--cp1\",\"2\"");
}

// A GPU taken while the sweep runs: nvidia-smi is asked again before each point. Here the first
// point's workload leaves a flag that makes the fake nvidia-smi list a process on GPU 0.
TEST(SweepRun, AGpuTakenDuringTheSweepStopsItBeforeTheNextPoint) {
  FakeSweep s("taken");
  std::string flag = s.options().out_dir + "-taken";
  fs::create_directories(s.options().out_dir + "-bin");
  WriteFile(s.options().out_dir + "-bin/nvidia-smi", "#!/bin/sh\necho 'pid, used_gpu_memory [MiB], gpu_uuid'\n[ -f '" +
                                                         flag + "' ] && echo '4242, 1000 MiB, GPU-0'\nexit 0\n");
  fs::permissions(s.options().out_dir + "-bin/nvidia-smi", fs::perms::owner_all);
  s.inputs().caller_env["PATH"] = s.options().out_dir + "-bin:" + s.inputs().caller_env["PATH"];
  s.Template("--touch " + flag);
  s.options().spec.sizes = {256, 512};
  s.options().spec.grids = {"1x2"};
  auto rc = s.Run();
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), ExitCode::kCheckFailed);
  EXPECT_EQ(rc.status().message(),
            "1x2 N=512: 2 ranks need 2 free GPUs but only 1 of 2 is free: GPU 0 is busy: PID 4242 (1000 MiB). Wait "
            "for them, or ask for fewer ranks (never more ranks than free GPUs). The finished points are kept in " +
                s.options().out_dir + "/sweep.json: rerun the same command to go on.");
  EXPECT_EQ(Count(s.runs(), "n=512"), 0);
  EXPECT_EQ((*Point(s.State(), "1x2", 256))["status"], "ok");
}

// ---- the command line ------------------------------------------------------------------------

TEST(SweepCli, HelpListsTheOptions) {
  CliResult h = RunCli({"help", "sweep"});
  EXPECT_EQ(h.rc, 0);
  for (const char* opt : {"--n", "--grids", "--dtype", "--arg-template", "--iters", "--warmup", "--capture-iters",
                          "--largest", "--step", "--max-n", "--timeout", "--out", "--gpus", "--force", "--dry-run"}) {
    EXPECT_CONTAINS(h.out, opt);
  }
  EXPECT_CONTAINS(h.out, "cpprof sweep trunk --n 512,1024,2048 --grids 1x1,1x2,2x2");
}

// The built binary, with an nsys that answers like the H200's: --dry-run prints each grid's
// commands (cpfold's, with the grid and dtype) and runs nothing.
TEST(SweepCli, DryRunPrintsEachGridsCommandsAndRunsNothing) {
  std::string dir = TempDir() + "/sweep-dry";
  fs::create_directories(dir);
  WriteDryRunNsys(dir);
  CliResult r = RunBinary({"sweep", "trunk", "--nsys", dir + "/nsys", "--dry-run", "--n", "1024,512", "--grids",
                           "1x1,1x2,2x1", "--dtype", "bf16", "--out", dir + "/out", "--", "--preset", "tiny"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_CONTAINS(r.out, "grid 1x2 N=512 (each size of the ladder alike, with its N):\n  timing run (no profiler): ");
  EXPECT_CONTAINS(r.out, "torchrun --standalone --nnodes=1 --nproc_per_node=2 ");
  EXPECT_CONTAINS(r.out,
                  "-m cpfold.run --mode trunk --n-token 512 --cp0 1 --cp1 2 --pg-timeout 450 --iters 5 "
                  "--warmup 1 --dtype bf16 --preset tiny\n");
  EXPECT_CONTAINS(r.out, "  capture: " + dir + "/nsys profile --output=" + dir + "/out/points/n512-1x2 ");
  EXPECT_CONTAINS(r.out, "--iters 2 --warmup 1 --dtype bf16 --preset tiny\n");
  // A grid the shorthand does not pick (it makes 2 ranks 1x2) is passed on to cpfold.
  EXPECT_CONTAINS(r.out, "--n-token 512 --cp0 1 --cp1 2 --pg-timeout 450 --cp0 2 --cp1 1 --iters 5 ");
  EXPECT_FALSE(fs::exists(dir + "/ran"));
  EXPECT_FALSE(fs::exists(dir + "/out"));
}

TEST(SweepCli, UsageErrorsSayWhatToGive) {
  CliResult a = RunCli({"sweep", "--n", "512,big", "--out", "x"});
  EXPECT_EQ(a.rc, 2);
  EXPECT_CONTAINS(a.err, "cpprof: error: sweep: --n: 'big' is not a positive size.");
  CliResult b = RunCli({"sweep", "--n", "512", "--grids", "1x2,2", "--out", "x"});
  EXPECT_EQ(b.rc, 2);
  EXPECT_CONTAINS(b.err, "--grids: '2' is not a CP grid. Give ROWSxCOLS");
  CliResult c = RunCli({"sweep", "--n", "512", "--arg-template", "-m pkg.mod --size 512", "--out", "x"});
  EXPECT_EQ(c.rc, 2);
  EXPECT_CONTAINS(c.err, "has no {n}");
  CliResult d = RunCli({"sweep", "--n", "512", "--arg-template", "-m pkg.mod --n {n} --x {bogus}", "--out", "x"});
  EXPECT_EQ(d.rc, 2);
  EXPECT_CONTAINS(d.err, "unknown placeholder '{bogus}'");
  CliResult e = RunCli({"sweep", "trunk", "--n", "512", "--out", "x", "--", "--n-token", "9"});
  EXPECT_EQ(e.rc, 2);
  EXPECT_CONTAINS(e.err, "'--n-token' after -- is set by cpprof sweep per point");
}

}  // namespace
}  // namespace cpprof::testing
