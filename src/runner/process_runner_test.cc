// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "runner/process_runner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "runner/environment.h"
#include "test_support.h"

namespace cpprof::runner {
namespace {

namespace fs = std::filesystem;

std::map<std::string, std::string> BaseEnv() { return {{"PATH", "/usr/bin:/bin"}}; }

TEST(ProcessRunner, ArgvIsNotParsedByAShell) {
  RealProcessRunner r;
  RunOptions o;
  o.env = BaseEnv();
  auto res = r.Run({"printf", "%s|", "a b", "$HOME", "; rm -rf /", "'q'"}, o);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->exit_code, 0);
  EXPECT_EQ(res->out, "a b|$HOME|; rm -rf /|'q'|");
}

TEST(ProcessRunner, ExitCodeStdoutStderrApart) {
  RealProcessRunner r;
  RunOptions o;
  o.env = BaseEnv();
  auto res = r.Run({"sh", "-c", "echo out; echo err >&2; exit 7"}, o);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->exit_code, 7);
  EXPECT_FALSE(res->ok());
  EXPECT_EQ(res->out, "out\n");
  EXPECT_EQ(res->err, "err\n");
  EXPECT_EQ(res->Describe(), "exit 7");
}

TEST(ProcessRunner, LargeStdinRoundTrip) {
  RealProcessRunner r;
  RunOptions o;
  o.env = BaseEnv();
  std::string big(3 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4096) big[i] = '\n';
  o.stdin_data = big;
  auto res = r.Run({"cat"}, o);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->exit_code, 0);
  EXPECT_EQ(res->out, big);  // no deadlock with both pipes full
}

TEST(ProcessRunner, ChildThatIgnoresStdinDoesNotKillUs) {
  RealProcessRunner r;
  RunOptions o;
  o.env = BaseEnv();
  o.stdin_data = std::string(1 << 20, 'y');  // more than a pipe holds; the child exits first
  auto res = r.Run({"true"}, o);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->exit_code, 0);
}

TEST(ProcessRunner, TimeoutKillsTheProcessGroup) {
  RealProcessRunner r;
  RunOptions o;
  o.env = BaseEnv();
  o.timeout_s = 0.3;
  auto t0 = std::chrono::steady_clock::now();
  auto res = r.Run({"sh", "-c", "sleep 30 & sleep 30; wait"}, o);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(res.ok());
  EXPECT_TRUE(res->timed_out);
  EXPECT_EQ(res->Describe(), "timed out");
  EXPECT_LT(s, 5.0);
}

TEST(ProcessRunner, NotFoundIsAStatusNamingTheProgram) {
  RealProcessRunner r;
  RunOptions o;
  o.env = BaseEnv();
  auto res = r.Run({"cpprof-no-such-program"}, o);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().message(), "'cpprof-no-such-program' not found on PATH");
  auto abs = r.Run({"/nonexistent/nsys", "--version"}, o);
  ASSERT_FALSE(abs.ok());
  EXPECT_EQ(abs.status().message(), "'/nonexistent/nsys' does not exist or is not executable");
}

TEST(ProcessRunner, LooksUpTheProgramOnTheGivenPath) {
  std::string dir = testing::TempDir() + "/runner-path";
  fs::create_directories(dir);
  {
    std::ofstream f(dir + "/cpprof-fake-tool");
    f << "#!/bin/sh\necho \"fake $FOO\"\n";
  }
  fs::permissions(dir + "/cpprof-fake-tool", fs::perms::owner_all);
  RealProcessRunner r;
  RunOptions o;
  o.env = std::map<std::string, std::string>{{"PATH", dir}, {"FOO", "bar"}};
  auto res = r.Run({"cpprof-fake-tool"}, o);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->out, "fake bar\n");
  // the environment is exactly the one given: nothing of ours leaks in
  o.env = std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"}};
  auto env = r.Run({"env"}, o);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->out, "PATH=/usr/bin:/bin\n");
  fs::remove_all(dir);
}

TEST(ProcessRunner, RunsInTheGivenDirectory) {
  RealProcessRunner r;
  RunOptions o;
  o.env = BaseEnv();
  o.cwd = "/";
  auto res = r.Run({"pwd"}, o);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->out, "/\n");
  o.cwd = "/nonexistent-dir";
  auto bad = r.Run({"pwd"}, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("in '/nonexistent-dir'"), std::string::npos);
}

TEST(ProcessRunner, OutputBeyondTheCapIsDropped) {
  RealProcessRunner r;
  RunOptions o;
  o.env = BaseEnv();
  o.max_output = 100;
  auto res = r.Run({"sh", "-c", "head -c 100000 /dev/zero"}, o);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->exit_code, 0);
  EXPECT_EQ(res->out.size(), 100u);
  EXPECT_TRUE(res->truncated);
}

// on_output sees every chunk as it comes, the part past max_output too, each from its stream.
TEST(ProcessRunner, OnOutputStreamsEachChunkAsItComes) {
  RealProcessRunner r;
  RunOptions o;
  o.env = BaseEnv();
  o.max_output = 10;
  std::string out, err;
  bool saw_first_before_end = false;
  o.on_output = [&](bool is_err, std::string_view chunk) {
    (is_err ? err : out).append(chunk);
    if (out.find("first") != std::string::npos && out.find("second") == std::string::npos) saw_first_before_end = true;
  };
  auto res = r.Run({"sh", "-c", "echo first; sleep 0.3; echo oops >&2; echo second-line-past-the-cap"}, o);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(out, "first\nsecond-line-past-the-cap\n");
  EXPECT_EQ(err, "oops\n");
  EXPECT_TRUE(saw_first_before_end);
  EXPECT_EQ(res->out.size(), 10u);
}

TEST(Environment, RootPrefixesFixedLocationsOnly) {
  Environment env({{"HOME", "/home/u"}, {"PATH", "/x"}}, "/tmp/root/");
  EXPECT_EQ(env.System("/opt/nvidia"), "/tmp/root/opt/nvidia");
  EXPECT_EQ(env.Home(), "/home/u");
  EXPECT_EQ(env.GetOr("CONDA_PREFIX", "none"), "none");
}

TEST(Environment, GlobSortsVersionsNumerically) {
  std::string dir = testing::TempDir() + "/glob";
  for (const char* d : {"cuda-9.2", "cuda-12.4", "cuda-11.8", "cuda-12.10"}) fs::create_directories(dir + "/" + d);
  auto got = Environment::Glob(dir + "/cuda-*");
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], dir + "/cuda-9.2");
  EXPECT_EQ(got[1], dir + "/cuda-11.8");
  EXPECT_EQ(got[2], dir + "/cuda-12.4");
  EXPECT_EQ(got[3], dir + "/cuda-12.10");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cpprof::runner
