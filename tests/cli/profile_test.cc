// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof profile: whole runs with fakes (tests/data/profile): an nsys that runs the command and writes a
// fixture export, a torchrun that parses its options like the real one (abbreviations on), and
// a workload that prints its arguments and can hang or crash a rank.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "doctor/doctor.h"
#include "profile/plan.h"
#include "profile/plan_testing.h"
#include "profile/process_tree.h"
#include "profile/run_profile.h"
#include "runner/process_runner.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

namespace fs = std::filesystem;
using profile::Plan;
using profile::ProfileOptions;

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

// ---- whole runs with fakes -------------------------------------------------------------------

class FakeRun {
 public:
  explicit FakeRun(const std::string& name) {
    dir_ = TempDir() + "/profile-" + name;
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/bin");
    fs::create_directories(dir_ + "/pids");
    for (const char* tool : {"nsys", "torchrun", "QdstrmImporter"}) {
      fs::copy_file(DataPath(std::string("profile/") + tool), dir_ + "/bin/" + tool);
    }
    std::string sql = ReadFile(DataPath("sql/_schema.sql")) + ReadFile(DataPath("sql/ranks_by_device.sql"));
    export_ = MakeDatabase("profile-" + name + ".sqlite", sql);
    findings_ = H200Findings(dir_ + "/bin/nsys");
    findings_.importer.path = dir_ + "/bin/QdstrmImporter";
    env_ = {{"PATH", dir_ + "/bin:/usr/bin:/bin"},
            {"PYTHONPATH", DataPath("profile")},
            {"FAKE_EXPORT", export_},
            {"NCCL_NVLS_ENABLE", "0"}};
    options_.results_dir = dir_ + "/results";
    options_.name = name;
  }
  ProfileOptions& options() { return options_; }
  doctor::DoctorFindings& findings() { return findings_; }
  profile::ExecuteOptions& execute_options() { return eo_; }
  std::map<std::string, std::string>& env() { return env_; }
  std::string pids() const { return dir_ + "/pids"; }
  void set_kit_root(const std::string& root) { kit_root_ = root; }
  const std::string& dir() const { return dir_; }

  Plan MakePlan() {
    profile::PlanInputs in = Inputs(env_);
    in.workload_kit_root = kit_root_;
    in.tmp_root = dir_ + "/tmp";
    in.user = "root";
    return MustPlan(options_, findings_, in);
  }
  StatusOr<int> Execute(const Plan& plan) {
    runner::RealProcessRunner r;
    out_.str("");
    err_.str("");
    return profile::Execute(plan, findings_, r, out_, err_, eo_);
  }
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }

 private:
  std::string dir_, export_, kit_root_;
  doctor::DoctorFindings findings_;
  std::map<std::string, std::string> env_;
  ProfileOptions options_;
  profile::ExecuteOptions eo_{.exec = {}, .kill_grace_s = 1, .live = true, .poll_s = 1, .compare = {}};
  std::ostringstream out_, err_;
};

TEST(ProfileRun, WritesTheResultsAndTheWorkloadGetsItsArgumentsIntact) {
  FakeRun run("ok");
  run.options().args = {"-m", "fakework", "--n", "512"};
  Plan p = run.MakePlan();
  auto rc = run.Execute(p);
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  EXPECT_EQ(*rc, 0);
  std::string log = ReadFile(p.out.stdout_log);
  EXPECT_CONTAINS(log, "fakework rank 0: argv=[\"--n\", \"512\"]");
  EXPECT_CONTAINS(log, "fakework rank 1: argv=[\"--n\", \"512\"]");
  EXPECT_EQ(ReadFile(p.out.tmp_stdout_log), log);
  EXPECT_EQ(p.out.tmp_stdout_log.rfind(run.dir() + "/tmp/root/cpprof/ok-", 0), 0u) << p.out.tmp_stdout_log;
  std::string md = ReadFile(p.out.readout_md);
  EXPECT_CONTAINS(md, "# cpprof profile: ok\n");
  EXPECT_CONTAINS(md, "cpfold: {\"rank\": 0, \"n\": 512, \"median_iter_s\": 0.5}");
  EXPECT_CONTAINS(md, "## cpprof readout: 2 ranks");
  EXPECT_CONTAINS(md, "### GPU time per rank");
  EXPECT_CONTAINS(ReadFile(p.out.report_json), "\"per_rank\"");
  EXPECT_CONTAINS(ReadFile(p.out.command_txt), "  NCCL_NVLS_ENABLE=0\n");
  EXPECT_CONTAINS(ReadFile(p.out.doctor_json), "cpprof.doctor/1");
  EXPECT_CONTAINS(ReadFile(p.out.gitignore), "*.sqlite\n");
  EXPECT_FALSE(run.out().empty());
  // The run's output was echoed live to stderr (unprefixed), after cpprof said so.
  EXPECT_CONTAINS(run.err(), "the run's output follows (--quiet hides it)\n");
  EXPECT_CONTAINS(run.err(), "fakework rank 1: argv=[\"--n\", \"512\"]\n");
  EXPECT_FALSE(fs::exists(p.out.probe_json));  // no probe for a workload cpprof does not know
  // This nsys's export keeps NVTX payloads: cpprof exported the report after the run with them.
  EXPECT_CONTAINS(run.err(), "cpprof: profile: exporting SQLite: " + run.dir() +
                                 "/bin/nsys export --type sqlite --include-json true ok.nsys-rep\n");
}

TEST(ProfileRun, PerRankWritesAReportPerRankAndOneReadoutOfThem) {
  FakeRun run("per-rank");
  run.options().args = {"-m", "fakework", "--n", "64"};
  run.options().per_rank = true;
  Plan p = run.MakePlan();
  auto rc = run.Execute(p);
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  EXPECT_EQ(*rc, 0);
  for (const auto& b : p.out.rank_bases) {
    EXPECT_TRUE(fs::exists(b + ".nsys-rep")) << b;
    EXPECT_TRUE(fs::exists(b + ".sqlite")) << b;
  }
  EXPECT_FALSE(fs::exists(p.out.sqlite)) << "no report of the whole run: one per rank";
  std::string log = ReadFile(p.out.stdout_log);
  EXPECT_CONTAINS(log, "fake nsys: profiling ");  // an nsys per rank
  EXPECT_CONTAINS(log, "fakework rank 1: argv=[\"--n\", \"64\"]");
  std::string md = ReadFile(p.out.readout_md);
  EXPECT_CONTAINS(md, "### One run from 2 exports");
  EXPECT_CONTAINS(md, "per-rank.0.sqlite");
  EXPECT_CONTAINS(md, "per-rank.1.sqlite");
}

TEST(ProfileRun, QuietKeepsTheRunsOutputInTheLogsOnly) {
  FakeRun run("quiet");
  run.options().args = {"-m", "fakework", "--n", "7"};
  run.execute_options().live = false;
  Plan p = run.MakePlan();
  auto rc = run.Execute(p);
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  EXPECT_EQ(run.err().find("fakework rank"), std::string::npos) << run.err();
  EXPECT_CONTAINS(ReadFile(p.out.tmp_stdout_log), "fakework rank 0: argv=[\"--n\", \"7\"]");
  EXPECT_CONTAINS(ReadFile(p.out.stdout_log), "fakework rank 0: argv=[\"--n\", \"7\"]");
}

TEST(ProfileRun, TimeoutKillsAHangingRankAndKeepsTheLogs) {
  FakeRun run("hang");
  run.options().args = {"-m", "fakework", "--hang", "--pid-dir", run.pids()};
  run.options().timeout_s = 3;
  Plan p = run.MakePlan();
  auto t0 = std::chrono::steady_clock::now();
  auto rc = run.Execute(p);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), ExitCode::kExternal);
  EXPECT_CONTAINS(rc.status().message(), "the run passed --timeout 3 s and was killed with its whole process tree");
  EXPECT_CONTAINS(rc.status().message(), p.out.stderr_log);
  EXPECT_LT(took, 20);
  EXPECT_CONTAINS(ReadFile(p.out.stdout_log), "fakework rank 1: argv=");
  // The ranks ran in sessions of their own and ignored SIGTERM: they are gone all the same.
  for (const char* f : {"/rank0.pid", "/rank1.pid"}) {
    pid_t pid = std::stoi(ReadFile(run.pids() + f));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(fs::exists("/proc/" + std::to_string(pid)) &&
                 ReadFile("/proc/" + std::to_string(pid) + "/stat").find(") Z") == std::string::npos)
        << "rank pid " << pid << " still runs";
  }
}

TEST(ProfileRun, ACrashingRankIsAClearErrorNamingTheLogs) {
  FakeRun run("crash");
  run.options().args = {"-m", "fakework", "--crash-rank", "1"};
  Plan p = run.MakePlan();
  auto rc = run.Execute(p);
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), ExitCode::kExternal);
  EXPECT_CONTAINS(rc.status().message(),
                  "the profiled run failed (exit 1): a rank or nsys crashed. Read the logs: " + p.out.stderr_log);
  EXPECT_CONTAINS(rc.status().message(), "fakework rank 1: RuntimeError: boom");
  EXPECT_CONTAINS(ReadFile(p.out.stderr_log), "RuntimeError: boom");
}

TEST(ProfileRun, OnlyAQdstrmLeftRunsTheImporterThenExports) {
  FakeRun run("qdstrm");
  run.env()["FAKE_NSYS_MODE"] = "qdstrm";
  run.options().args = {"-m", "fakework"};
  Plan p = run.MakePlan();
  auto rc = run.Execute(p);
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  EXPECT_CONTAINS(run.err(), "nsys left only a .qdstrm; running the importer: ");
  EXPECT_CONTAINS(run.err(), "exporting SQLite: ");
  EXPECT_TRUE(fs::exists(p.out.nsys_rep));
  EXPECT_TRUE(fs::exists(p.out.sqlite));
  EXPECT_TRUE(fs::exists(p.out.readout_md));
}

TEST(ProfileRun, ForceReplacesAnEarlierResult) {
  FakeRun run("force");
  run.options().args = {"-m", "fakework"};
  Plan p = run.MakePlan();
  ASSERT_TRUE(run.Execute(p).ok()) << run.err();
  EXPECT_FALSE(profile::Guards(p, run.options(), H200Findings()).empty());  // without --force: refused
  WriteFile(p.out.readout_md, "stale");
  run.options().force = true;
  ASSERT_TRUE(profile::Guards(p, run.options(), H200Findings()).empty());
  auto rc = run.Execute(p);
  ASSERT_TRUE(rc.ok()) << rc.status().message();
  EXPECT_CONTAINS(ReadFile(p.out.readout_md), "# cpprof profile: force");
}

TEST(ProfileRun, CompareRunsTheSanityDiffAgainstAnEarlierResult) {
  FakeRun run("compare");
  run.options().args = {"-m", "fakework"};
  Plan first = run.MakePlan();
  ASSERT_TRUE(run.Execute(first).ok()) << run.err();
  // The same work again (the fake nsys writes the same export): the same GPU work, exit 0.
  run.options().name = "compare-again";
  Plan again = run.MakePlan();
  run.execute_options().compare = profile::ResolveCompare(first.out.base);
  ASSERT_EQ(run.execute_options().compare, first.out.sqlite);
  auto rc = run.Execute(again);
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  EXPECT_EQ(*rc, 0);
  EXPECT_CONTAINS(ReadFile(again.out.readout_md), "SAME GPU work");
  EXPECT_CONTAINS(run.err(), "compared with " + first.out.sqlite + ": SAME GPU work");
  // Against other work: exit 3, the results are still written.
  run.options().name = "compare-other";
  Plan other = run.MakePlan();
  run.execute_options().compare = RealExport("cpwork-trace");
  rc = run.Execute(other);
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  EXPECT_EQ(*rc, 3);
  EXPECT_CONTAINS(ReadFile(other.out.readout_md), "GPU work DIFFERS");
  EXPECT_EQ(profile::ResolveCompare(run.dir() + "/nothing-here"), "");
}

TEST(ProfileRun, WritesTheFunctionsTraceJsonFromCpfoldsSpecMergedWithTheShippedOne) {
  FakeRun run("trace");
  run.options().args = {"-m", "fakework"};
  Plan p = run.MakePlan();
  p.trace_json = p.out.functions_trace = p.out.base + ".functions-trace.json";
  p.trace_spec = PythonDir() + "/cpfold/trace_spec.json";
  p.trace_base = DataPath("fakes/PythonFunctionsTrace/pytorch.json");
  auto rc = run.Execute(p);
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  std::string json = ReadFile(p.trace_json);
  EXPECT_CONTAINS(json, "\"domain\": \"cpfold\"");
  EXPECT_CONTAINS(json, "ContextParallel.forward");
  EXPECT_CONTAINS(json, "\"module\": \"torch");                           // the shipped entries are kept
  EXPECT_EQ(ReadFile(p.out.gitignore).find(".json"), std::string::npos);  // so the JSON is committed
}

TEST(ProfileRun, CtrlCStopsTheTreeAndExits130) {
  FakeRun run("ctrlc");
  run.options().args = {"-m", "fakework", "--hang", "--pid-dir", run.pids()};
  Plan p = run.MakePlan();
  std::string pidfile = run.pids() + "/rank0.pid";
  std::thread interrupter([&] {
    for (int i = 0; i < 300 && !fs::exists(pidfile); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::kill(::getpid(), SIGINT);
  });
  auto rc = run.Execute(p);
  interrupter.join();
  ASSERT_TRUE(rc.ok()) << rc.status().message();
  EXPECT_EQ(*rc, 130);
  EXPECT_CONTAINS(run.err(), "interrupted: stopped the run");
  EXPECT_TRUE(fs::exists(p.out.stdout_log));
}

// The probe: a workload that claims a peak larger than the H200's memory is stopped before nsys
// runs; the numbers go to NAME.probe.json and the message says what to do.
TEST(ProfileRun, ProbePredictingOutOfMemoryStopsBeforeNsys) {
  FakeRun run("probe-oom");
  for (auto& g : run.findings().gpus) g.memory_total_mib = 143771;
  run.options().args = {"-m", "fakework", "--iter-lines", "1", "--peak-bytes", "150000000000"};
  run.options().probe = true;
  Plan p = run.MakePlan();
  auto rc = run.Execute(p);
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), ExitCode::kCheckFailed);
  EXPECT_CONTAINS(rc.status().message(),
                  "the probe predicts a failure: rank 0 would run out of GPU memory: the probe "
                  "peaked at 139.7 GiB, more than the 126.4 GiB its GPU leaves");
  EXPECT_CONTAINS(rc.status().message(), "--no-probe to run anyway");
  EXPECT_CONTAINS(rc.status().message(), "(probe results: " + p.out.probe_json + ")");
  EXPECT_FALSE(fs::exists(p.out.nsys_rep));  // nsys never ran
  EXPECT_FALSE(fs::exists(p.out.stdout_log));
  EXPECT_CONTAINS(ReadFile(p.out.probe_json), "\"memory_ok\": false");
  EXPECT_CONTAINS(ReadFile(p.out.probe_stdout_log), "cpprof-iter: ");
  EXPECT_CONTAINS(ReadFile(p.out.tmp_probe_stdout_log), "cpprof-iter: ");
  // The probe's own launch had no nsys in front.
  EXPECT_EQ(ReadFile(p.out.probe_stdout_log).find("fake nsys"), std::string::npos);
}

TEST(ProfileRun, ProbePredictingATimeoutStops) {
  FakeRun run("probe-slow");
  run.options().args = {"-m", "fakework", "--iter-lines", "1", "--iter-s", "100"};
  run.options().probe = true;
  run.options().timeout_s = 120;
  Plan p = run.MakePlan();
  p.planned_iters = 4;  // as for cpfold: 4 x 100 s x 1.1 > 120 s
  auto rc = run.Execute(p);
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), ExitCode::kCheckFailed);
  EXPECT_CONTAINS(rc.status().message(), "the profiled run would pass --timeout 120 s: predicted ");
  EXPECT_CONTAINS(rc.status().message(), "4 iterations x 100 s x 1.1");
  EXPECT_FALSE(fs::exists(p.out.nsys_rep));
}

TEST(ProfileRun, AProbeThatHangsIsKilledAtTheTimeoutAndNsysNeverRuns) {
  FakeRun run("probe-hang");
  run.options().args = {"-m", "fakework", "--hang", "--pid-dir", run.pids()};
  run.options().probe = true;
  run.options().timeout_s = 2;
  Plan p = run.MakePlan();
  auto rc = run.Execute(p);
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), ExitCode::kCheckFailed);
  EXPECT_CONTAINS(rc.status().message(),
                  "the probe (the launch without nsys) alone passed --timeout 2 s and was "
                  "killed");
  EXPECT_CONTAINS(rc.status().message(), "--no-probe to skip the probe. Logs: " + p.out.probe_stderr_log);
  EXPECT_FALSE(fs::exists(p.out.nsys_rep));
}

TEST(ProfileRun, AProbeThatFitsIsInTheReadoutAndCommandTxt) {
  FakeRun run("probe-ok");
  for (auto& g : run.findings().gpus) g.memory_total_mib = 143771;
  run.options().args = {"-m", "fakework", "--iter-lines", "2", "--peak-bytes", "2147483648"};
  run.options().probe = true;
  Plan p = run.MakePlan();
  auto rc = run.Execute(p);
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  EXPECT_EQ(*rc, 0);
  std::string md = ReadFile(p.out.readout_md);
  EXPECT_CONTAINS(md, "## Feasibility probe (without nsys; `probe-ok.probe.json`)\n");
  EXPECT_CONTAINS(md, "- rank 1: peak memory 2.0 GiB of 140.4 GiB (1%;");
  EXPECT_CONTAINS(md, "- peak memory from the workload's cpprof-iter lines\n");
  EXPECT_CONTAINS(ReadFile(p.out.command_txt), "probe results (" + p.out.probe_json + "):\n  rank 0: peak memory");
  EXPECT_CONTAINS(ReadFile(p.out.probe_json), "\"schema\": \"cpprof.probe/1\"");
  EXPECT_CONTAINS(run.err(), "cpprof: profile: probe: predicted profiled run: ");
}

// A user's workload marked with cpprof_workload: the probe runs only the first two iterations
// ($CPPROF_PROBE_ITERS, the nsys run does not get it) and predicts from the `planned` count the
// lines announce.
TEST(ProfileRun, ProbeOfAnyWorkloadReadsCpprofIterLinesAndThePlannedCount) {
  FakeRun run("probe-kit");
  run.options().args = {"-m", "fakework", "--schedule", "--iter-lines", "6", "--planned", "6", "--iter-s", "100"};
  run.options().probe = true;
  run.options().timeout_s = 500;
  Plan p = run.MakePlan();
  EXPECT_EQ(p.probe_env.at("CPPROF_PROBE_ITERS"), "2");
  EXPECT_EQ(p.env.count("CPPROF_PROBE_ITERS"), 0u);
  EXPECT_CONTAINS(DescribePlan(p), "probe environment addition: CPPROF_PROBE_ITERS=2\n");
  auto rc = run.Execute(p);
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), ExitCode::kCheckFailed);
  // 6 planned x 100 s x 1.1 > 500 s, from a probe that ran 2 of them.
  EXPECT_CONTAINS(rc.status().message(), "6 iterations x 100 s x 1.1");
  std::string probe_out = ReadFile(p.out.probe_stdout_log);
  EXPECT_CONTAINS(probe_out, "CPPROF_PROBE_ITERS=2");
  EXPECT_EQ(probe_out.find("\"iter\": 2"), std::string::npos) << probe_out;
  std::string json = ReadFile(p.out.probe_json);
  EXPECT_CONTAINS(json, "\"iteration_tag\": \"cpprof-iter\"");
  EXPECT_CONTAINS(json, "\"planned_by_workload\": 6");
  EXPECT_CONTAINS(json, "\"peak_mem_source\": \"the workload's cpprof-iter lines\"");
}

// The toy user model (python/tests/toy_user_model) through the whole path: a module written by
// `cpprof scaffold`, run by the fake torchrun on two gloo ranks with Debian's torch, once as the
// probe (2 of its 4 iterations) and once under the fake nsys; its cpprof-iter lines read by the
// probe. cpprof_workload comes from the plan's PYTHONPATH.
TEST(ProfileRun, ProbeReadsAScaffoldedModuleOfAUserModel) {
  if (!fs::exists("/usr/bin/python3") ||
      std::system("/usr/bin/python3 -c 'import torch.distributed' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "/usr/bin/python3 has no torch";
  }
  FakeRun run("probe-toy");
  std::string toy = fs::weakly_canonical(DataPath("../../python/tests/toy_user_model")).string();
  CliResult s = RunCli({"scaffold", "--model", "toymodel.model:ToyFold", "--entry", "infer", "--cp-wrapper",
                        "toymodel.cp:wrap_cp", "--contract", toy + "/contract.json", "--count", "recycles=2",
                        "--n-token", "12", "-o", run.dir() + "/profile_toy.py"});
  ASSERT_EQ(s.rc, 0) << s.err;
  run.env()["PYTHONPATH"] = toy + ":" + run.dir();
  run.env()["PATH"] = run.dir() + "/bin:/usr/bin:/bin";  // the fake torchrun's python3: Debian's, with torch
  run.set_kit_root(PythonDir());
  run.options().args = {"-m", "profile_toy", "--gain", "0.1"};
  run.options().probe = true;
  run.options().timeout_s = 300;
  Plan p = run.MakePlan();
  EXPECT_EQ(p.env.at("PYTHONPATH"), toy + ":" + run.dir() + ":" + PythonDir());
  auto rc = run.Execute(p);
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  EXPECT_EQ(*rc, 0) << run.err();
  std::string probe_out = ReadFile(p.out.probe_stdout_log);
  EXPECT_CONTAINS(probe_out, "cpprof-workload: {\"model\": \"toymodel.model:ToyFold\"");
  EXPECT_CONTAINS(probe_out, "\"counts\": {\"recycles\": 2}");
  std::string json = ReadFile(p.out.probe_json);
  EXPECT_CONTAINS(json, "\"iteration_tag\": \"cpprof-iter\"");
  EXPECT_CONTAINS(json, "\"planned_by_workload\": 4");  // 1 warm-up + 3, of which the probe ran 2
  EXPECT_CONTAINS(json, "\"peak_mem_kind\": \"cpu_max_rss\"");
  auto j = nlohmann::json::parse(json);
  EXPECT_EQ(j["iters"].size(), 4u);  // 2 ranks x 2 iterations
  EXPECT_EQ(j["limits"]["planned_iters"], 4);
  EXPECT_CONTAINS(ReadFile(p.out.readout_md), "x 1.1 (the preset's overhead factor under nsys, a guess)");
  // The profiled run ran all four, and rank 0 said how to name the model's classes.
  std::string log = ReadFile(p.out.stdout_log);
  EXPECT_CONTAINS(log, "\"iter\": 3, \"warmup\": false");
  EXPECT_CONTAINS(log,
                  "cpprof-trace-json: cpprof trace-json --function toymodel.model:ToyFold.forward --function "
                  "toymodel.model:TokenEncoder.forward --function toymodel.model:PairBlock.forward "
                  "--entry-module profile_toy -o profile_toy.trace.json");
}

// A workload without iteration lines: the probe says what it could not learn.
TEST(ProfileRun, ProbeOfAWorkloadWithoutLinesSaysWhatItCouldNotLearn) {
  FakeRun run("probe-blind");
  run.options().args = {"-m", "fakework"};
  run.options().probe = true;
  Plan p = run.MakePlan();
  auto rc = run.Execute(p);
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  std::string md = ReadFile(p.out.readout_md);
  EXPECT_CONTAINS(md, "- not learned: the time of one iteration, how many the run does");
  EXPECT_CONTAINS(md, "cpprof_workload.iteration, or write a profile module with 'cpprof scaffold'");
  EXPECT_CONTAINS(md, "- predicted profiled run: ");
}

// A workload that prints no memory: nvidia-smi's memory.used, polled during the probe.
TEST(ProfileRun, ProbeReadsPeakMemoryFromNvidiaSmiWhenTheWorkloadPrintsNone) {
  FakeRun run("probe-smi");
  for (auto& g : run.findings().gpus) g.memory_total_mib = 143771, g.memory_used_mib = 0;
  WriteFile(run.dir() + "/bin/nvidia-smi",
            "#!/bin/sh\necho 'index, name, compute_cap, memory.used [MiB], memory.total [MiB], uuid'\n"
            "echo '0, NVIDIA H200, 9.0, 140000 MiB, 143771 MiB, GPU-0'\n"
            "echo '1, NVIDIA H200, 9.0, 1000 MiB, 143771 MiB, GPU-1'\n");
  fs::permissions(run.dir() + "/bin/nvidia-smi", fs::perms::owner_all);
  run.options().args = {"-m", "fakework"};
  run.options().probe = true;
  run.execute_options().poll_s = 0.1;
  Plan p = run.MakePlan();
  auto rc = run.Execute(p);
  ASSERT_FALSE(rc.ok());
  EXPECT_CONTAINS(rc.status().message(), "rank 0 would run out of GPU memory: the probe peaked at 136.7 GiB");
  EXPECT_CONTAINS(ReadFile(p.out.probe_json), "nvidia-smi's memory.used every 0.1 s");
}

// ---- --probe-cap: the probe of a workload without iteration lines is short ----

// An nvidia-smi that says GPUs 0 and 1 hold `used_mib` each.
void WriteFakeNvidiaSmi(FakeRun& run, int used_mib) {
  WriteFile(run.dir() + "/bin/nvidia-smi",
            "#!/bin/sh\necho 'index, name, compute_cap, memory.used [MiB], memory.total [MiB], uuid'\n"
            "echo '0, NVIDIA H200, 9.0, " +
                std::to_string(used_mib) +
                " MiB, 143771 MiB, GPU-0'\n"
                "echo '1, NVIDIA H200, 9.0, " +
                std::to_string(used_mib) + " MiB, 143771 MiB, GPU-1'\n");
  fs::permissions(run.dir() + "/bin/nvidia-smi", fs::perms::owner_all);
}

// No process of the probe is left: its ranks (in sessions of their own, ignoring SIGTERM) are
// gone, and cpprof has no child left.
void ExpectNoProbeProcessLeft(FakeRun& run) {
  for (const char* f : {"/probe-rank0.pid", "/probe-rank1.pid"}) {
    ASSERT_TRUE(fs::exists(run.pids() + f)) << f;
    std::string proc = "/proc/" + ReadFile(run.pids() + f);
    EXPECT_FALSE(fs::exists(proc) && ReadFile(proc + "/stat").find(") Z") == std::string::npos)
        << "probe rank " << proc << " still runs";
  }
  EXPECT_TRUE(profile::Descendants(::getpid()).empty());
}

// A workload that prints no iteration line and would sleep an hour in the probe: stopped at the
// cap (not at --timeout, which would fail the probe), judged on the memory nvidia-smi saw, and the
// profiled run goes on.
TEST(ProfileRun, ProbeCapStopsAWorkloadWithoutLinesAndTheProfiledRunGoesOn) {
  FakeRun run("probe-cap");
  for (auto& g : run.findings().gpus) g.memory_total_mib = 143771, g.memory_used_mib = 0;
  WriteFakeNvidiaSmi(run, 2048);
  run.options().args = {"-m", "fakework", "--probe-sleep", "3600", "--pid-dir", run.pids()};
  run.options().probe = true;
  run.options().probe_cap_s = 2;
  run.options().timeout_s = 30;
  run.execute_options().poll_s = 0.1;
  Plan p = run.MakePlan();
  EXPECT_EQ(p.probe_cap_s, 2);
  EXPECT_CONTAINS(profile::DescribePlan(p), "probe cap: stopped after 2 s unless it has printed an iteration line");
  auto t0 = std::chrono::steady_clock::now();
  auto rc = run.Execute(p);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  EXPECT_EQ(*rc, 0);
  EXPECT_LT(took, 20) << "the probe ran past its cap";
  EXPECT_CONTAINS(run.err(), "stopped after 2 s unless it prints iteration lines (--probe-cap)");
  EXPECT_CONTAINS(run.err(), "cpprof: profile: probe: no iteration line after 2 s (--probe-cap): stopped it (");
  const std::string said =
      "probe stopped after 2 s (--probe-cap): peak GPU memory seen so far 2.0 GiB per GPU (nvidia-smi); not "
      "learned: time per iteration, iteration count, whether the whole run fits the --timeout (30.0 s)";
  EXPECT_CONTAINS(run.err(), "cpprof: profile: probe: " + said + "\n");
  std::string md = ReadFile(p.out.readout_md);
  EXPECT_CONTAINS(md, "- " + said + "\n");
  EXPECT_CONTAINS(md, "- rank 0: peak memory 2.0 GiB of 140.4 GiB");
  EXPECT_EQ(md.find("predicted profiled run"), std::string::npos) << md;
  EXPECT_CONTAINS(ReadFile(p.out.command_txt), "  " + said + "\n");
  auto j = nlohmann::json::parse(ReadFile(p.out.probe_json));
  EXPECT_EQ(j["capped"], true);
  EXPECT_EQ(j["probe_cap_s"], 2.0);
  EXPECT_EQ(j["probe_cap_lifted"], false);
  EXPECT_EQ(j["prediction"]["time_known"], false);
  EXPECT_GE(j["wall_s"].get<double>(), 2.0);
  EXPECT_EQ(ReadFile(p.out.probe_stdout_log).find("the probe slept"), std::string::npos);
  // The profiled run ran whole (it does not sleep: no CPPROF_PROBE_ITERS there).
  EXPECT_CONTAINS(ReadFile(p.out.stdout_log), "fakework rank 1: CPPROF_PROBE_ITERS=None");
  EXPECT_TRUE(fs::exists(p.out.sqlite));
  ExpectNoProbeProcessLeft(run);
}

// Memory over the GPU seen before the cap still stops the run, with the usual fix.
TEST(ProfileRun, ProbeCapStillStopsOnMemorySeenBeforeTheCap) {
  FakeRun run("probe-cap-oom");
  for (auto& g : run.findings().gpus) g.memory_total_mib = 143771, g.memory_used_mib = 0;
  WriteFakeNvidiaSmi(run, 140000);
  run.options().args = {"-m", "fakework", "--probe-sleep", "3600", "--pid-dir", run.pids()};
  run.options().probe = true;
  run.options().probe_cap_s = 1;
  run.options().timeout_s = 30;
  run.execute_options().poll_s = 0.1;
  Plan p = run.MakePlan();
  auto rc = run.Execute(p);
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), ExitCode::kCheckFailed);
  EXPECT_CONTAINS(rc.status().message(), "rank 0 would run out of GPU memory: the probe peaked at 136.7 GiB");
  EXPECT_CONTAINS(rc.status().message(), "--no-probe to run anyway");
  EXPECT_CONTAINS(ReadFile(p.out.probe_json), "\"capped\": true");
  EXPECT_FALSE(fs::exists(p.out.nsys_rep));  // nsys never ran
  ExpectNoProbeProcessLeft(run);
}

// A workload that prints an iteration line before the cap is not capped: its probe (here 3.5 s,
// past a 1 s cap) runs to its end and the time is predicted from its lines.
TEST(ProfileRun, ProbeCapIsLiftedByAnIterationLine) {
  FakeRun run("probe-cap-lines");
  run.options().args = {"-m",       "fakework", "--schedule",    "--iter-lines", "2",         "--planned", "2",
                        "--iter-s", "0.1",      "--probe-sleep", "3.5",          "--pid-dir", run.pids()};
  run.options().probe = true;
  run.options().probe_cap_s = 1;
  run.options().timeout_s = 60;
  Plan p = run.MakePlan();
  auto rc = run.Execute(p);
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  EXPECT_EQ(*rc, 0);
  EXPECT_CONTAINS(ReadFile(p.out.probe_stdout_log), "fakework rank 1: the probe slept 3.5 s");
  auto j = nlohmann::json::parse(ReadFile(p.out.probe_json));
  EXPECT_EQ(j["capped"], false);
  EXPECT_EQ(j["probe_cap_lifted"], true);
  EXPECT_EQ(j["prediction"]["time_known"], true);
  EXPECT_GE(j["wall_s"].get<double>(), 3.5);
  std::string md = ReadFile(p.out.readout_md);
  EXPECT_CONTAINS(md, "- predicted profiled run: ");
  EXPECT_CONTAINS(md, "2 iterations x 0.1 s x 1.1");
  EXPECT_EQ(md.find("--probe-cap"), std::string::npos) << md;
  ExpectNoProbeProcessLeft(run);
}

// --probe-cap 0: no cap; a workload without lines is probed whole, as before the cap existed.
TEST(ProfileRun, ProbeCapZeroProbesTheWholeRun) {
  FakeRun run("probe-cap-off");
  run.options().args = {"-m", "fakework", "--probe-sleep", "1.5", "--pid-dir", run.pids()};
  run.options().probe = true;
  run.options().probe_cap_s = 0;
  Plan p = run.MakePlan();
  EXPECT_CONTAINS(profile::DescribePlan(p), "probe cap: none (--probe-cap 0)");
  auto rc = run.Execute(p);
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  EXPECT_CONTAINS(ReadFile(p.out.probe_stdout_log), "fakework rank 1: the probe slept 1.5 s");
  auto j = nlohmann::json::parse(ReadFile(p.out.probe_json));
  EXPECT_EQ(j["capped"], false);
  EXPECT_EQ(j["probe_cap_s"], 0.0);
  std::string md = ReadFile(p.out.readout_md);
  EXPECT_CONTAINS(md, "- predicted profiled run: ");
  EXPECT_CONTAINS(md, "- not learned: the time of one iteration");
  EXPECT_EQ(md.find("probe stopped after"), std::string::npos) << md;
  ExpectNoProbeProcessLeft(run);
}

TEST(ProfileRun, TraceFunctionIsValidatedByImportAndMergedWithTheShippedJson) {
  FakeRun run("tracefn");
  run.options().args = {"-m", "fakework"};
  run.options().trace_functions = {"fakemodel:Trunk.forward", "fakemodel:Gone.forward"};
  Plan p = run.MakePlan();
  auto rc = run.Execute(p);
  ASSERT_TRUE(rc.ok()) << rc.status().message() << run.err();
  EXPECT_EQ(p.trace_json, p.out.base + ".functions-trace.json");
  std::string json = ReadFile(p.trace_json);
  EXPECT_CONTAINS(json, "\"module\": \"fakemodel\"");
  EXPECT_CONTAINS(json, "\"Trunk.forward\"");
  EXPECT_EQ(json.find("Gone"), std::string::npos);
  EXPECT_CONTAINS(json, "\"module\": \"torch");  // the shipped entries are kept
  EXPECT_CONTAINS(run.err(), "rejected fakemodel:Gone.forward");
  EXPECT_CONTAINS(run.err(), "wrote " + p.trace_json + ": 1 function validated with ");
  // nsys got it.
  EXPECT_CONTAINS(ReadFile(p.out.command_txt), "--python-functions-trace=" + p.trace_json);
  // Nothing accepted: stop before running anything.
  FakeRun none("tracefn-none");
  none.options().args = {"-m", "fakework"};
  none.options().trace_functions = {"fakemodel:Gone.forward"};
  Plan q = none.MakePlan();
  auto bad = none.Execute(q);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ExitCode::kCheckFailed);
  EXPECT_CONTAINS(bad.status().message(), "no --trace-function/--trace-discover entry was accepted");
  EXPECT_FALSE(fs::exists(q.out.stdout_log));
}

// ---- the command line ------------------------------------------------------------------------

TEST(ProfileCli, HelpListsTheOptions) {
  CliResult r = RunCli({"help", "profile"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_CONTAINS(r.out, "--dry-run");
  EXPECT_CONTAINS(r.out, "--preset");
}

// The built binary, with an nsys that answers like the H200's: --dry-run prints the argv, one per
// line, and runs nothing.
TEST(ProfileCli, DryRunPrintsTheExactCommandAndRunsNothing) {
  std::string dir = TempDir() + "/profile-dry";
  fs::create_directories(dir);
  WriteDryRunNsys(dir);
  CliResult r = RunBinary({"profile", "--nsys", dir + "/nsys", "--dry-run", "--results-dir", dir + "/results", "--",
                           "-m", "pkg.entry", "--n", "512"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_CONTAINS(r.out, "  --output=" + dir + "/results/custom/pkg-entry-fast\n");
  EXPECT_CONTAINS(r.out, "/launch_workload.py\n  --\n  -m\n  pkg.entry\n  --n\n  512\n");
  EXPECT_CONTAINS(r.out, "  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n");
  EXPECT_FALSE(fs::exists(dir + "/ran"));
  EXPECT_FALSE(fs::exists(dir + "/results"));
  EXPECT_CONTAINS(r.out, "probe: off (a workload cpprof does not know is probed only with --probe)\n");
  // With --probe the dry run shows the probe's command too (no nsys in front of it).
  CliResult q = RunBinary({"profile", "--nsys", dir + "/nsys", "--dry-run", "--probe", "--results-dir",
                           dir + "/results", "--", "-m", "pkg.entry", "--n", "512"});
  EXPECT_EQ(q.rc, 0) << q.err;
  size_t at = q.out.find("probe command, run first without nsys (argv, one per line):\n");
  ASSERT_NE(at, std::string::npos) << q.out;
  std::string probe = q.out.substr(at, q.out.find("probe predictions", at) - at);
  EXPECT_EQ(probe.find("nsys"), probe.find("nsys (argv"));  // only the heading names nsys
  EXPECT_CONTAINS(probe, "/launch_workload.py\n  --\n  -m\n  pkg.entry\n  --n\n  512\n");
  EXPECT_FALSE(fs::exists(dir + "/ran"));
  // Issue 19, row 13: an empty argument or one with a newline is shown unambiguously ($'...').
  CliResult odd = RunBinary({"profile", "--nsys", dir + "/nsys", "--dry-run", "--results-dir", dir + "/results", "--",
                             "-m", "pkg.entry", "a\nb", "", " x", "it's"});
  EXPECT_EQ(odd.rc, 0) << odd.err;
  EXPECT_CONTAINS(odd.out, "  pkg.entry\n  $'a\\nb'\n  $''\n  $' x'\n  it's\n");
}

// Usage errors are found before the doctor runs: exit 2 with the reason.
TEST(ProfileCli, TraceJsonExcludesTraceFunctionAndProbeExcludesNoProbe) {
  CliResult r = RunCli({"profile", "--dry-run", "--trace-json", "t.json", "--trace-function", "pkg.m:A.forward", "--",
                        "-m", "pkg.entry"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_CONTAINS(r.err, "cpprof: error: profile: --trace-json FILE excludes --trace-function and --trace-discover");
  CliResult d = RunCli({"profile", "--dry-run", "--trace-json", "t.json", "--trace-discover", "pkg", "--", "-m", "x"});
  // A repeatable option right before '--' leaves the separator to the workload.
  CliResult g = RunCli({"profile", "--dry-run", "--gpus", "0,1", "--trace-function", "a:B.c", "--trace-function",
                        "a:D.e", "--probe", "--no-probe", "--", "-m", "x"});
  EXPECT_EQ(g.rc, 2);
  EXPECT_CONTAINS(g.err, "--probe and --no-probe exclude each other");
  EXPECT_EQ(d.rc, 2);
  CliResult p = RunCli({"profile", "--dry-run", "--probe", "--no-probe", "--", "-m", "pkg.entry"});
  EXPECT_EQ(p.rc, 2);
  EXPECT_CONTAINS(p.err, "--probe and --no-probe exclude each other");
  CliResult h = RunCli({"help", "profile"});
  for (const char* opt : {"--trace-function", "--trace-discover", "--trace-match", "--no-probe", "--probe", "--quiet",
                          "--name", "--nproc-per-node", "--nnodes", "--rdzv-endpoint", "--timeout", "--probe-cap"}) {
    EXPECT_CONTAINS(h.out, opt);
  }
}

}  // namespace
}  // namespace cpprof::testing
