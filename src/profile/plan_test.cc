// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The plan of `cpprof profile` (pure, from hand-made doctor findings like the H200's) and its
// guards. Whole runs with fakes and the binary's own tests are in tests/cli/profile_test.cc.
#include "profile/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "doctor/doctor.h"
#include "profile/plan_testing.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

namespace fs = std::filesystem;
using profile::Plan;
using profile::ProfileOptions;

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

// ---- the plan --------------------------------------------------------------------------------

TEST(ProfilePlan, FastPresetExactCommandForTheE2eShorthand) {
  ProfileOptions o = Opts({"e2e", "512", "2"});
  Plan p = MustPlan(o, H200Findings());
  std::string base = o.results_dir + "/inference/cpfold-e2e-n512-1x2-fast";
  std::vector<std::string> want = {kNsys, "profile", "--output=" + base, "--force-overwrite=true", "--trace=cuda,nvtx",
                                   "--sample=none", "--cpuctxsw=none",
                                   // cpfold's classes name the readout's modules (no torch.* list)
                                   "--python-functions-trace=" + base + ".functions-trace.json", "torchrun",
                                   "--standalone", "--nnodes=1", "--nproc_per_node=2", Launcher(), "--", "-m",
                                   "cpfold.run", "--mode", "e2e", "--n-token", "512", "--cp0", "1", "--cp1", "2",
                                   "--pg-timeout", "600"};
  EXPECT_EQ(p.argv, want);
  // This nsys's export keeps NVTX payloads: cpprof exports after the run instead of --export=sqlite.
  EXPECT_EQ(p.export_options, (std::vector<std::string>{"--include-json", "true"}));
  EXPECT_CONTAINS(profile::DescribePlan(p),
                  "export: after the run, " + kNsys + " export --type sqlite --include-json true");
  EXPECT_EQ(p.env_additions.at("PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");
  EXPECT_EQ(p.env_additions.at("PYTHONPATH"), PythonDir());
  EXPECT_EQ(p.env_additions.at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(p.out.sqlite, base + ".sqlite");
  EXPECT_EQ(p.out.readout_md, base + ".readout.md");
  EXPECT_EQ(p.out.tmp_stderr_log.rfind("/tmp/tester/cpprof/cpfold-e2e-n512-1x2-fast-", 0), 0u) << p.out.tmp_stderr_log;
  EXPECT_EQ(fs::path(p.out.tmp_stderr_log).filename(), "stderr.log");
  EXPECT_TRUE(p.trace_base.empty()) << "fast: cpfold's spec alone, not merged with nsys's pytorch.json";
  EXPECT_FALSE(p.trace_spec.empty());
  EXPECT_TRUE(p.dropped.empty());
  EXPECT_TRUE(profile::Guards(p, o, H200Findings()).empty());
}

TEST(ProfilePlan, PerRankPutsOneNsysPerRankInsideTorchrun) {
  ProfileOptions o = Opts({"e2e", "512", "2"});
  o.per_rank = true;
  doctor::DoctorFindings f = H200Findings();
  f.python.path = "/opt/venv/bin/python3";
  Plan p = MustPlan(o, f);
  std::string base = o.results_dir + "/inference/cpfold-e2e-n512-1x2-fast";
  std::vector<std::string> want = {"torchrun",
                                   "--standalone",
                                   "--nnodes=1",
                                   "--nproc_per_node=2",
                                   "--no_python",
                                   kNsys,
                                   "profile",
                                   "--output=" + base + ".%q{RANK}",
                                   "--force-overwrite=true",
                                   "--trace=cuda,nvtx",
                                   "--sample=none",
                                   "--cpuctxsw=none",
                                   "--python-functions-trace=" + base + ".functions-trace.json",
                                   "/opt/venv/bin/python3",
                                   Launcher(),
                                   "--",
                                   "-m",
                                   "cpfold.run",
                                   "--mode",
                                   "e2e",
                                   "--n-token",
                                   "512",
                                   "--cp0",
                                   "1",
                                   "--cp1",
                                   "2",
                                   "--pg-timeout",
                                   "600"};
  EXPECT_EQ(p.argv, want);
  EXPECT_EQ(p.out.rank_bases, (std::vector<std::string>{base + ".0", base + ".1"}));
  std::vector<std::string> results = p.out.Results();
  EXPECT_NE(std::find(results.begin(), results.end(), base + ".1.nsys-rep"), results.end())
      << "--force replaces the per-rank reports too";
}

// An nsys whose export cannot keep NVTX payloads (or whose 'export --help' did not answer) writes
// the export itself, as before.
TEST(ProfilePlan, WithoutIncludeJsonNsysProfileExports) {
  for (bool read : {true, false}) {
    doctor::DoctorFindings f = H200Findings();
    f.export_help_read = read;
    std::erase(f.export_options, "include-json");
    Plan p = MustPlan(Opts({"e2e", "512", "2"}), f);
    EXPECT_TRUE(p.export_options.empty());
    EXPECT_EQ(p.nsys_options.at(2), "--export=sqlite");
    EXPECT_CONTAINS(profile::DescribePlan(p), "export: nsys profile --export=sqlite (NVTX payloads left out)");
  }
}

// Issue 19 row 13: a run of one name in another results folder has /tmp logs of its own.
TEST(ProfilePlan, TmpLogsAreOwnedByOneResultsFolder) {
  ProfileOptions a = Opts({"e2e", "512", "2"});
  ProfileOptions b = a;
  b.results_dir = TempDir() + "/other-results";
  Plan pa = MustPlan(a, H200Findings()), pb = MustPlan(b, H200Findings());
  EXPECT_NE(pa.out.tmp_folder, pb.out.tmp_folder);
  EXPECT_EQ(pa.out.tmp_folder, MustPlan(a, H200Findings()).out.tmp_folder) << "stable for one results folder";
}

TEST(ProfilePlan, FullPresetIsTheSeedsOptionSetWithCpfoldsTraceJson) {
  ProfileOptions o = Opts({"trunk", "1024", "1"}, "full");
  Plan p = MustPlan(o, H200Findings());
  std::string base = o.results_dir + "/inference/cpfold-trunk-n1024-1x1-full";
  std::vector<std::string> want = {"--output=" + base,
                                   "--force-overwrite=true",
                                   "--trace=cuda,nvtx,osrt",
                                   "--cuda-memory-usage=true",
                                   "--pytorch=autograd-shapes-nvtx",
                                   "--python-functions-trace=" + base + ".functions-trace.json",
                                   "--cudabacktrace=all",
                                   "--python-backtrace=cuda"};
  EXPECT_EQ(p.nsys_options, want);
  EXPECT_EQ(p.trace_spec, PythonDir() + "/cpfold/trace_spec.json");
  EXPECT_EQ(p.out.functions_trace, base + ".functions-trace.json");
  EXPECT_TRUE(p.dropped.empty());
}

TEST(ProfilePlan, ShorthandGrids) {
  auto t = profile::ParseShorthand({"trunk", "1024", "4"});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->cp0, 2);
  EXPECT_EQ(t->cp1, 2);
  auto e = profile::ParseShorthand({"e2e", "512", "2"});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->cp0, 1);
  EXPECT_EQ(e->cp1, 2);
  EXPECT_FALSE(profile::ParseShorthand({"trunk", "big", "4"}).ok());
  // Nothing after --: cpfold's trunk, small, on every free GPU.
  Plan p = MustPlan(Opts({}), H200Findings());
  EXPECT_EQ(p.name, "cpfold-trunk-n256-1x2-fast");
  EXPECT_EQ(p.ranks, 2);
}

TEST(ProfilePlan, WorkloadFlagsThatAbbreviateTorchrunOptionsFollowTheLaunchersSeparator) {
  Plan p = MustPlan(Opts({"-m", "pkg.entry", "--n", "512"}), H200Findings());
  std::vector<std::string> want_launch = {"torchrun", "--standalone", "--nnodes=1", "--nproc_per_node=2",
                                          Launcher(), "--",           "-m",         "pkg.entry",
                                          "--n",      "512"};
  EXPECT_EQ(p.launch, want_launch);
  EXPECT_EQ(p.name, "pkg-entry-fast");
  EXPECT_EQ(p.workflow, "custom");
  EXPECT_EQ(p.env_additions.at("CPPROF_PG_TIMEOUT_S"), "600");
  // Forms the launcher cannot run are usage errors that say what to write.
  auto py = profile::BuildPlan(Opts({"python3", "-m", "pkg.entry"}), H200Findings(), Inputs());
  ASSERT_FALSE(py.ok());
  EXPECT_EQ(py.status().code(), ExitCode::kUsage);
  EXPECT_CONTAINS(py.status().message(), "leave the interpreter out");
  EXPECT_FALSE(profile::BuildPlan(Opts({"-m"}), H200Findings(), Inputs()).ok());
  EXPECT_FALSE(profile::BuildPlan(Opts({"--n", "512"}), H200Findings(), Inputs()).ok());
}

// torchrun's real parser, where this machine's Python has torch: '--n' after '-m mod' is an
// ambiguous abbreviation, after the launcher's '--' it reaches the workload.
TEST(ProfilePlan, TorchrunsRealParserLeavesTheWorkloadArgumentsAlone) {
  Plan p = MustPlan(Opts({"-m", "pkg.entry", "--n", "512"}), H200Findings());
  std::string script =
      "import json, sys\n"
      "try:\n"
      "    from torch.distributed.run import get_args_parser\n"
      "except Exception as e:\n"
      "    print('SKIP', e); sys.exit(0)\n"
      "a = get_args_parser().parse_args(json.loads(sys.argv[1]))\n"
      "print(json.dumps([a.training_script] + a.training_script_args))\n";
  std::string args = "[";
  for (size_t i = 1; i < p.launch.size(); ++i) args += (i > 1 ? ",\"" : "\"") + p.launch[i] + "\"";
  args += "]";
  runner::RealProcessRunner r;
  runner::RunOptions ro;
  ro.timeout_s = 120;
  auto res = r.Run({"/usr/bin/python3", "-c", script, args}, ro);
  if (!res.ok() || res->out.rfind("SKIP", 0) == 0) GTEST_SKIP() << "no torch here";
  ASSERT_TRUE(res->ok()) << res->err;
  std::string launcher_args = res->out;
  EXPECT_CONTAINS(launcher_args, "\"-m\", \"pkg.entry\", \"--n\", \"512\"]");
  // And the naive launch fails exactly as the H200 note says.
  auto naive = r.Run({"/usr/bin/python3", "-c", script,
                      "[\"--standalone\",\"--nnodes=1\",\"--nproc_per_node=2\",\"-m\",\"pkg.entry\",\"--n\",\"512\"]"},
                     ro);
  ASSERT_TRUE(naive.ok());
  EXPECT_CONTAINS(naive->err, "ambiguous option: --n");
}

TEST(ProfilePlan, TokensThisNsysLacksAreDroppedWithAWarningOrAreAnError) {
  std::string help = HelpText();
  // An nsys whose --pytorch lacks autograd-shapes-nvtx and that has no --python-backtrace.
  for (std::string from : {"'autograd-nvtx', 'autograd-shapes-nvtx', 'functions-trace' or 'none'"}) {
    size_t at = help.find(from);
    ASSERT_NE(at, std::string::npos);
    help.replace(at, from.size(), "'autograd-nvtx' or 'none'");
  }
  for (size_t at; (at = help.find("--python-backtrace")) != std::string::npos;)
    help.replace(at, 18, "--python-bt-gone");
  Plan p = MustPlan(Opts({"trunk", "256", "1"}, "full"), H200Findings(kNsys, help));
  ASSERT_EQ(p.dropped.size(), 2u);
  EXPECT_EQ(p.dropped[0], "--pytorch=autograd-shapes-nvtx: this nsys's --pytorch accepts only autograd-nvtx, none");
  EXPECT_EQ(p.dropped[1], "--python-backtrace=cuda: this nsys (2025.3.1.0) has no --python-backtrace option");
  for (const auto& a : p.argv) {
    EXPECT_EQ(a.find("--pytorch"), std::string::npos);
    EXPECT_EQ(a.find("--python-backtrace"), std::string::npos);
  }
  // An essential option missing: an error that says so.
  std::string no_trace = HelpText();
  for (size_t at; (at = no_trace.find("--trace")) != std::string::npos;) no_trace.replace(at, 7, "--trxce");
  auto bad = profile::BuildPlan(Opts({"trunk", "256", "1"}), H200Findings(kNsys, no_trace), Inputs());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ExitCode::kCheckFailed);
  EXPECT_CONTAINS(bad.status().message(), "nsys 2025.3.1.0 has no --trace option");
}

TEST(ProfilePlan, NoNsysIsAnErrorExceptForADryRun) {
  doctor::DoctorFindings f = H200Findings();
  f.candidates.clear();
  f.chosen = -1;
  f.profile_help_read = false;
  ProfileOptions o = Opts({"e2e", "512", "2"});
  auto bad = profile::BuildPlan(o, f, Inputs());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ExitCode::kCheckFailed);
  EXPECT_CONTAINS(bad.status().message(), "no usable nsys: none found. get Nsight Systems");
  o.dry_run = true;
  Plan p = MustPlan(o, f);
  EXPECT_EQ(p.argv[0], "nsys");
  EXPECT_CONTAINS(profile::DescribePlan(p), "no usable nsys");
}

TEST(ProfilePlan, BacktracesAreDroppedWhenTheDoctorSaysCpuSamplingIsUnavailable) {
  doctor::DoctorFindings f = H200Findings();
  f.cpu_sampling = false;
  f.checks.push_back({"cpu-sampling", "CPU sampling", doctor::CheckStatus::kWarn,
                      "CPU sampling is not available (perf_event_paranoid = 4)", ""});
  Plan p = MustPlan(Opts({"trunk", "256", "1"}, "full"), f);
  ASSERT_EQ(p.dropped.size(), 2u);
  EXPECT_EQ(p.dropped[0], "--cudabacktrace=all: inert: CPU sampling is not available (perf_event_paranoid = 4)");
  EXPECT_CONTAINS(p.dropped[1], "--python-backtrace=cuda: inert");
}

TEST(ProfilePlan, EnvironmentKeepsTheCallersNcclSettingsAndAddsTheImporterFix) {
  doctor::DoctorFindings f = H200Findings();
  f.profile_env["LD_LIBRARY_PATH"] = "/tmp/dl/usr/lib/x86_64-linux-gnu:/opt/host";
  Plan p = MustPlan(Opts({"e2e", "512", "2"}), f,
                    Inputs({{"PATH", "/usr/bin"}, {"NCCL_NVLS_ENABLE", "0"}, {"PYTHONPATH", "/mine"}}));
  EXPECT_EQ(p.env.at("NCCL_NVLS_ENABLE"), "0");
  EXPECT_EQ(p.env.at("LD_LIBRARY_PATH"), "/tmp/dl/usr/lib/x86_64-linux-gnu:/opt/host");
  EXPECT_EQ(p.env.at("PYTHONPATH"), PythonDir() + ":/mine");
  EXPECT_EQ(p.kept_from_caller, std::vector<std::string>{"NCCL_NVLS_ENABLE=0"});
  std::string d = profile::DescribePlan(p);
  EXPECT_CONTAINS(d, "  LD_LIBRARY_PATH=/tmp/dl/usr/lib/x86_64-linux-gnu:/opt/host\n");
  EXPECT_CONTAINS(d, "kept from the caller's environment:\n  NCCL_NVLS_ENABLE=0\n");
}

TEST(ProfilePlan, MultiNodeUsesRendezvousArgumentsAndNamesTheHost) {
  ProfileOptions o = Opts({"-m", "pkg.entry"});
  o.nnodes = 2;
  o.nproc_per_node = 2;
  EXPECT_FALSE(profile::BuildPlan(o, H200Findings(), Inputs()).ok());
  o.rdzv_endpoint = "node0:29500";
  profile::PlanInputs in = Inputs();
  in.host = "node1";
  Plan p = MustPlan(o, H200Findings(), in);
  EXPECT_EQ(p.name, "pkg-entry-fast-node1");
  std::vector<std::string> want = {"torchrun",
                                   "--nnodes=2",
                                   "--rdzv_backend=c10d",
                                   "--rdzv_endpoint=node0:29500",
                                   "--rdzv_id=cpprof-custom",
                                   "--nproc_per_node=2"};
  EXPECT_EQ(std::vector<std::string>(p.launch.begin(), p.launch.begin() + 6), want);
}

TEST(ProfilePlan, FullCpfoldRunsTheProbeFirstWithOneIterationAndFewDiffusionSteps) {
  Plan p = MustPlan(Opts({"e2e", "512", "2", "--iters", "5"}, "full"), H200Findings());
  EXPECT_TRUE(p.probe);
  EXPECT_EQ(p.probe_why, "on (the default for the full preset; --no-probe skips it)");
  // The same launch without nsys, the workload's flags last so they win over the user's.
  std::vector<std::string> want = {"torchrun",
                                   "--standalone",
                                   "--nnodes=1",
                                   "--nproc_per_node=2",
                                   Launcher(),
                                   "--",
                                   "-m",
                                   "cpfold.run",
                                   "--mode",
                                   "e2e",
                                   "--n-token",
                                   "512",
                                   "--cp0",
                                   "1",
                                   "--cp1",
                                   "2",
                                   "--pg-timeout",
                                   "600",
                                   "--iters",
                                   "5",
                                   "--iters",
                                   "1",
                                   "--warmup",
                                   "0",
                                   "--diffusion-steps",
                                   "2"};
  EXPECT_EQ(p.probe_argv, want);
  EXPECT_EQ(p.planned_iters, 6);      // --iters 5 + the default --warmup 1
  EXPECT_DOUBLE_EQ(p.iter_scale, 5);  // the small preset's 10 diffusion steps / 2
  EXPECT_DOUBLE_EQ(p.overhead, 3.0);
  std::string d = profile::DescribePlan(p);
  EXPECT_CONTAINS(d, "probe command, run first without nsys (argv, one per line):\n  torchrun\n");
  EXPECT_CONTAINS(d,
                  "time = startup + 6 iterations x the probe's time per iteration (up to x5.0 for the diffusion "
                  "steps it skips) x 3.0 (the preset's overhead factor, a guess)");
  EXPECT_CONTAINS(d, "  " + p.out.probe_json + "\n");
  // The trunk: no diffusion steps to shorten; --iters=N form read too.
  Plan t = MustPlan(Opts({"trunk", "256", "1", "--iters=2", "--warmup", "0"}, "full"), H200Findings());
  EXPECT_EQ(t.planned_iters, 2);
  EXPECT_DOUBLE_EQ(t.iter_scale, 1);
  EXPECT_EQ(std::vector<std::string>(t.probe_argv.end() - 4, t.probe_argv.end()),
            (std::vector<std::string>{"--iters", "1", "--warmup", "0"}));
}

TEST(ProfilePlan, CpfoldPresetsComeFromTheCpfoldPackage) {
  // python/cpfold/presets.json, written by cpfold itself: its numbers are not copied into cpprof.
  auto p = profile::ReadCpfoldPresets(PythonDir());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->default_preset, "small");
  EXPECT_EQ(p->diffusion_steps.at("tiny"), 3);
  EXPECT_EQ(p->diffusion_steps.at("small"), 10);
  EXPECT_EQ(p->diffusion_steps.at("af3"), 200);
  // A table from another cpfold is used as it is: here af3 has 40 steps, so the probe's 2 scale by 20.
  profile::PlanInputs in = Inputs();
  in.cpfold_presets.diffusion_steps["af3"] = 40;
  Plan e = MustPlan(Opts({"e2e", "512", "2", "--preset", "af3"}, "full"), H200Findings(), in);
  EXPECT_DOUBLE_EQ(e.iter_scale, 20);
  // Unknown: the probe runs every step, and the plan says why.
  in.cpfold_presets = {};
  in.cpfold_presets_error = "cannot read X/cpfold/presets.json: regenerate it";
  Plan u = MustPlan(Opts({"e2e", "512", "2"}, "full"), H200Findings(), in);
  EXPECT_DOUBLE_EQ(u.iter_scale, 1);
  ASSERT_FALSE(u.warnings.empty());
  EXPECT_CONTAINS(u.warnings.back(),
                  "the diffusion steps of cpfold's default preset are unknown, so the probe runs "
                  "them all (cannot read X/cpfold/presets.json: regenerate it)");
}

TEST(ProfilePlan, CpfoldPresetsErrorsSayHowToRegenerate) {
  const std::string root = TempDir() + "/presets-bad";
  std::filesystem::create_directories(root + "/cpfold");
  auto missing = profile::ReadCpfoldPresets(root + "/nowhere");
  ASSERT_FALSE(missing.ok());
  EXPECT_CONTAINS(missing.status().message(), "cannot read " + root + "/nowhere/cpfold/presets.json");
  EXPECT_CONTAINS(missing.status().message(), "python -m cpfold.config --write");
  WriteFile(root + "/cpfold/presets.json", R"({"default_preset": "small", "presets": {"small": {"recycles": 1}}})");
  auto bad = profile::ReadCpfoldPresets(root);
  ASSERT_FALSE(bad.ok());
  EXPECT_CONTAINS(bad.status().message(), "preset 'small' has no integer diffusion_steps");
  WriteFile(root + "/cpfold/presets.json", "not json");
  EXPECT_CONTAINS(profile::ReadCpfoldPresets(root).status().message(), "is not cpfold's preset table");
  std::filesystem::remove_all(root);
}

TEST(ProfilePlan, ProbeDefaultsAndSwitches) {
  ProfileOptions full = Opts({"trunk", "256", "1"}, "full");
  full.no_probe = true;
  Plan p = MustPlan(full, H200Findings());
  EXPECT_FALSE(p.probe);
  EXPECT_CONTAINS(profile::DescribePlan(p), "probe: off (--no-probe)\n");
  EXPECT_EQ(profile::DescribePlan(p).find("probe command"), std::string::npos);
  EXPECT_FALSE(MustPlan(Opts({"trunk", "256", "1"}), H200Findings()).probe);  // fast: only with --probe
  EXPECT_FALSE(MustPlan(Opts({"-m", "pkg.entry"}, "full"), H200Findings()).probe);
  ProfileOptions own = Opts({"-m", "pkg.entry", "--n", "5"});
  own.probe = true;
  Plan q = MustPlan(own, H200Findings());
  EXPECT_TRUE(q.probe);
  EXPECT_EQ(q.planned_iters, 0);  // unknown: the probe runs the whole workload as it is
  EXPECT_EQ(q.probe_cap_s, 120);  // --probe-cap's default: until it prints an iteration line
  EXPECT_CONTAINS(profile::DescribePlan(q), "probe cap: stopped after 120 s unless it has printed an iteration line");
  ProfileOptions cpfold = Opts({"trunk", "256", "1"}, "full");
  cpfold.probe_cap_s = 5;
  Plan c = MustPlan(cpfold, H200Findings());
  EXPECT_EQ(c.probe_cap_s, 0) << "cpfold's probe is one iteration: no cap";
  EXPECT_EQ(profile::DescribePlan(c).find("probe cap"), std::string::npos);
  EXPECT_EQ(std::vector<std::string>(q.probe_argv.end() - 4, q.probe_argv.end()),
            (std::vector<std::string>{"-m", "pkg.entry", "--n", "5"}));
  own.no_probe = true;
  auto both = profile::BuildPlan(own, H200Findings(), Inputs());
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().code(), ExitCode::kUsage);
}

TEST(ProfilePlan, TraceFunctionWritesTheJsonBesideTheResultsAndExcludesTraceJson) {
  ProfileOptions o = Opts({"-m", "pkg.entry"});
  o.trace_functions = {"pkg.model:Trunk.forward"};
  o.trace_discover = "pkg.model";
  o.trace_match = "Trunk|Diffusion";
  Plan p = MustPlan(o, H200Findings());
  std::string json = p.out.base + ".functions-trace.json";
  EXPECT_EQ(p.trace_json, json);
  EXPECT_EQ(p.out.functions_trace, json);
  EXPECT_EQ(p.entry_module, "pkg.entry");
  EXPECT_EQ(p.nsys_options.back(), "--python-functions-trace=" + json);  // the fast preset takes it too
  EXPECT_CONTAINS(profile::DescribePlan(p),
                  json +
                      " (written from --trace-function pkg.model:Trunk.forward, --trace-discover pkg.model "
                      "--trace-match Trunk|Diffusion, validated by import with the workload's Python, merged with ");
  ProfileOptions both = o;
  both.trace_json = "/tmp/x.json";
  auto bad = profile::BuildPlan(both, H200Findings(), Inputs());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ExitCode::kUsage);
  EXPECT_CONTAINS(bad.status().message(), "--trace-json FILE excludes --trace-function and --trace-discover");
  ProfileOptions match_only = Opts({"-m", "pkg.entry"});
  match_only.trace_match = "Trunk";
  EXPECT_EQ(profile::CheckOptions(match_only).message(), "--trace-match REGEX goes with --trace-discover PKG");
  ProfileOptions bad_match = o;
  bad_match.trace_match = "Trunk(?=Block)";  // RE2: no lookarounds
  Status bad_re = profile::CheckOptions(bad_match);
  EXPECT_EQ(bad_re.code(), ExitCode::kUsage);
  EXPECT_CONTAINS(bad_re.message(),
                  "--trace-match 'Trunk(?=Block)' is not a valid regular expression (RE2: invalid "
                  "perl operator: (?=)");
  ProfileOptions malformed = Opts({"-m", "pkg.entry"});
  malformed.trace_functions = {"pkg.model.Trunk.forward"};
  EXPECT_CONTAINS(profile::CheckOptions(malformed).message(),
                  "--trace-function 'pkg.model.Trunk.forward' is not "
                  "MODULE:Class.method");
}

// ---- guards ----------------------------------------------------------------------------------

TEST(ProfileGuards, BusyTargetGpusAreRefusedNamingThePids) {
  doctor::DoctorFindings f = H200Findings();
  f.busy.push_back({1, {{4242, 30000, "GPU-1"}}});
  ProfileOptions o = Opts({"e2e", "512", "2"});
  Plan p = MustPlan(o, f);
  auto stops = profile::Guards(p, o, f);
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].code(), ExitCode::kCheckFailed);
  EXPECT_EQ(stops[0].message(),
            "2 ranks need 2 free GPUs but only 1 of 2 is free: GPU 1 is busy: PID 4242 (30000 MiB). Wait for them, or "
            "ask for fewer ranks (never more ranks than free GPUs).");
  // One rank fits on the free GPU, which it gets.
  ProfileOptions one = Opts({"e2e", "512", "1"});
  Plan q = MustPlan(one, f);
  EXPECT_TRUE(profile::Guards(q, one, f).empty());
  EXPECT_EQ(q.env_additions.at("CUDA_VISIBLE_DEVICES"), "0");
  // Asking for the busy GPU by --gpus is refused.
  one.gpus = {1};
  f.targets = {1};
  Plan r = MustPlan(one, f);
  auto s = profile::Guards(r, one, f);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_CONTAINS(s[0].message(), "the target GPUs are not free: GPU 1 is busy: PID 4242 (30000 MiB)");
}

TEST(ProfileGuards, WaitPollsUntilTheBusyGpuIsFree) {
  doctor::DoctorFindings busy = H200Findings();
  busy.busy.push_back({1, {{4242, 30000, "GPU-1"}}});
  ProfileOptions o = Opts({"e2e", "512", "2"});
  o.wait = true;
  o.poll_s = 30;
  int asked = 0;
  double slept = 0;
  std::ostringstream err;
  doctor::DoctorFindings f = profile::WaitForGpus(
      o, Inputs(), busy, [&] { return ++asked < 3 ? busy : H200Findings(); }, [&](double s) { slept += s; }, err);
  EXPECT_TRUE(f.busy.empty());
  EXPECT_EQ(asked, 3);
  EXPECT_EQ(slept, 90);
  EXPECT_CONTAINS(err.str(), "waiting for busy GPUs (GPU 1 PID 4242); asking again in 30 s");
  // --max-wait gives up with the GPUs still busy (the guard then refuses).
  o.max_wait_s = 60;
  asked = 0;
  f = profile::WaitForGpus(
      o, Inputs(), busy, [&] { return ++asked, busy; }, [](double) {}, err);
  EXPECT_FALSE(f.busy.empty());
  EXPECT_EQ(asked, 2);
  EXPECT_CONTAINS(err.str(), "waited 60 s (--max-wait) and the GPUs are still busy");
  // One rank fits beside the busy GPU: nothing to wait for.
  asked = 0;
  profile::WaitForGpus(
      Opts({"e2e", "512", "1"}), Inputs(), busy, [&] { return ++asked, busy; }, [](double) {}, err);
  EXPECT_EQ(asked, 0);
}

TEST(ProfileGuards, NeverMoreRanksThanGpus) {
  ProfileOptions o = Opts({"trunk", "1024", "4"});
  Plan p = MustPlan(o, H200Findings());
  auto stops = profile::Guards(p, o, H200Findings());
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_CONTAINS(stops[0].message(), "4 ranks need 4 free GPUs but only 2 of 2 are free");
}

TEST(ProfileGuards, AnNsysThatCannotMakeAReportStopsWithTheFix) {
  doctor::DoctorFindings f = H200Findings();
  f.importer.loads = false;
  f.checks.push_back({"importer", "nsys can write reports", doctor::CheckStatus::kFail,
                      "QdstrmImporter cannot load libdw.so.1 (exit 127)", "install libdw1 libelf1 ..."});
  ProfileOptions o = Opts({"e2e", "512", "2"});
  auto stops = profile::Guards(MustPlan(o, f), o, f);
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].message(),
            "nsys cannot make a report here: QdstrmImporter cannot load libdw.so.1 (exit 127). Fix: install libdw1 "
            "libelf1 ...");
}

TEST(ProfileGuards, AnExistingResultIsNotOverwrittenWithoutForce) {
  ProfileOptions o = Opts({"e2e", "512", "2"});
  o.results_dir = TempDir() + "/results-exists";
  Plan p = MustPlan(o, H200Findings());
  fs::create_directories(p.out.folder);
  WriteFile(p.out.sqlite, "old");
  auto stops = profile::Guards(p, o, H200Findings());
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].message(), "a result named 'cpfold-e2e-n512-1x2-fast' exists (" + p.out.sqlite +
                                    "). Pass --force to replace it, or pick another --name.");
  o.force = true;
  EXPECT_TRUE(profile::Guards(p, o, H200Findings()).empty());
}

// ---- the output table ------------------------------------------------------------------------

// Every row of kOutputFiles is where BuildPlan put it: beside the result's base, or in the run's
// /tmp folder; the functions trace only when cpprof writes one.
TEST(ProfilePlan, OutputPathsFollowTheirTable) {
  ProfileOptions o = Opts({"-m", "pkg.entry"});
  o.probe = true;
  Plan p = MustPlan(o, H200Findings());
  std::string base = o.results_dir + "/custom/pkg-entry-fast";
  EXPECT_EQ(p.out.base, base);
  EXPECT_EQ(p.out.nsys_rep, base + ".nsys-rep");
  EXPECT_EQ(p.out.doctor_json, base + ".doctor.json");
  EXPECT_EQ(p.out.probe_stderr_log, base + ".probe.stderr.log");
  EXPECT_EQ(p.out.tmp_probe_stdout_log, p.out.tmp_folder + "/probe.stdout.log");
  EXPECT_EQ(p.out.gitignore, o.results_dir + "/.gitignore");
  EXPECT_TRUE(p.out.functions_trace.empty()) << "no --trace-function, not cpfold: cpprof writes no functions trace";
  EXPECT_EQ(std::string(profile::OutputSuffix(&profile::OutputPaths::qdstrm)), ".qdstrm");
  EXPECT_EQ(std::string(profile::OutputSuffix(&profile::OutputPaths::tmp_stderr_log)), "/stderr.log");
  std::set<std::string> paths;
  for (const profile::OutputFile& file : profile::kOutputFiles) {
    if (file.when == profile::OutputWhen::kFunctionsTrace) continue;
    const std::string& path = p.out.*file.path;
    EXPECT_EQ(path, (file.in_tmp ? p.out.tmp_folder : base) + file.suffix);
    EXPECT_TRUE(paths.insert(path).second) << path << " is named by two rows";
    EXPECT_NE(std::string(file.writer), "");
  }
  // --trace-function: cpprof writes it beside the results, and nsys is given that file.
  o.trace_functions = {"pkg.model:Trunk.forward"};
  Plan q = MustPlan(o, H200Findings());
  EXPECT_EQ(q.out.functions_trace, base + ".functions-trace.json");
  EXPECT_EQ(q.trace_json, q.out.functions_trace);
}

// Results() (what --force replaces and a run clears first) is the table's result rows, then each
// rank's reports; the live /tmp logs and the functions trace are not results.
TEST(ProfilePlan, ResultsAreTheTablesResultRowsThenEachRanksReports) {
  ProfileOptions o = Opts({"e2e", "512", "2"});
  o.per_rank = true;
  Plan p = MustPlan(o, H200Findings());
  const std::string b = p.out.base;
  std::vector<std::string> want = {
      b + ".nsys-rep",         b + ".qdstrm",           b + ".sqlite",     b + ".readout.md", b + ".report.json",
      b + ".command.txt",      b + ".doctor.json",      b + ".stdout.log", b + ".stderr.log", b + ".probe.json",
      b + ".probe.stdout.log", b + ".probe.stderr.log", b + ".0.nsys-rep", b + ".0.qdstrm",   b + ".0.sqlite",
      b + ".1.nsys-rep",       b + ".1.qdstrm",         b + ".1.sqlite"};
  EXPECT_EQ(p.out.Results(), want);
}

// --dry-run's "outputs:" lists the run's files, the probe's only when it runs, never the .qdstrm
// nsys leaves only on failure.
TEST(ProfilePlan, DescribePlanListsTheOutputsOfTheStepsThatRun) {
  ProfileOptions o = Opts({"-m", "pkg.entry"});
  Plan p = MustPlan(o, H200Findings());
  std::string d = profile::DescribePlan(p);
  std::string outputs = d.substr(d.find("outputs:\n"));
  std::string want = "outputs:\n";
  for (const std::string* x :
       {&p.out.nsys_rep, &p.out.sqlite, &p.out.readout_md, &p.out.report_json, &p.out.command_txt, &p.out.doctor_json,
        &p.out.stdout_log, &p.out.stderr_log, &p.out.tmp_stdout_log, &p.out.tmp_stderr_log}) {
    want += "  " + *x + "\n";
  }
  EXPECT_EQ(outputs, want);
  o.probe = true;
  Plan q = MustPlan(o, H200Findings());
  std::string dq = profile::DescribePlan(q);
  EXPECT_CONTAINS(dq, "  " + q.out.tmp_stderr_log + "\n  " + q.out.probe_json + "\n  " + q.out.probe_stdout_log +
                          "\n  " + q.out.probe_stderr_log + "\n  " + q.out.tmp_probe_stdout_log + "\n  " +
                          q.out.tmp_probe_stderr_log + "\n");
  EXPECT_EQ(dq.find(".qdstrm"), std::string::npos);
}

}  // namespace
}  // namespace cpprof::testing
