// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "sweep/run_sweep.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sweep/ladder.h"
#include "test_support.h"

namespace cpprof::sweep {
namespace {

namespace fs = std::filesystem;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

model::SweepResult State() {
  model::SweepResult r;
  r.spec.workload = "cpfold trunk";
  r.spec.mode = "trunk";
  r.spec.sizes = {512, 1024, 2048};
  r.spec.grids = {"1x1"};
  r.spec.dtype = "bf16";
  r.machine.gpu_name = "NVIDIA H200";
  r.machine.gpu_memory_bytes = 143771LL << 20;
  model::SweepPoint a;
  a.n = 512;
  a.grid = "1x1";
  a.status = "ok";
  a.capture_status = "ok";
  a.timing_argv = {"torchrun", "--nproc_per_node=1", "x y"};
  a.iter_s = {0.5, 0.25, 0.75};
  a.median_iter_s = 0.5;
  a.peak_mem_bytes = {1LL << 30};
  a.exposed_transfer_share = 0;
  a.modules.push_back({});
  a.modules.back().name = "TriangleMultiplicationOutgoing.forward";
  a.modules.back().path = "trunk/TriangleMultiplicationOutgoing.forward";
  a.modules.back().ms = 1.5;
  a.modules.back().cost_key = "TriangleMultiplicationOutgoing";
  a.modules.back().tflops = 100;
  a.modules.back().percent_of_peak = 10.1;
  a.efficiency_json = R"({"computed":true,"zeta":1,"alpha":[2,3]})";  // key order kept
  model::SweepPoint b = a;
  b.n = 1024;
  b.capture_status = "failed";  // not finished: run again on resume
  model::SweepPoint c;
  c.n = 2048;
  c.grid = "1x1";
  c.status = "oom";
  c.detail = "ran out of GPU memory";
  r.points = {a, b, c};
  return r;
}

TEST(SweepState, WrittenThenReadBackIsTheSameAndWritesTheSameBytes) {
  std::string dir = testing::TempDir() + "/sweep-state";
  fs::create_directories(dir);
  model::SweepResult written;
  ASSERT_TRUE(WriteOutputs(State(), dir, &written).ok());
  ASSERT_EQ(written.fits.size(), 1u);
  EXPECT_EQ(written.fits[0].largest_ok, 1024);
  EXPECT_EQ(written.fits[0].first_oom, 2048);
  std::string json = Read(dir + "/sweep.json"), md = Read(dir + "/sweep.md"), html = Read(dir + "/sweep.html");
  auto back = ReadSweepJson(dir + "/sweep.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->has_value());
  const model::SweepResult& r = **back;
  EXPECT_EQ(SpecChange(r.spec, State().spec), "");
  ASSERT_EQ(r.points.size(), 3u);
  EXPECT_EQ(r.points[0].timing_argv, State().points[0].timing_argv);
  EXPECT_EQ(r.points[0].iter_s, State().points[0].iter_s);
  EXPECT_EQ(r.points[0].efficiency_json, R"({"computed":true,"zeta":1,"alpha":[2,3]})");
  EXPECT_EQ(r.points[0].modules[0].cost_key, "TriangleMultiplicationOutgoing");
  EXPECT_DOUBLE_EQ(r.points[0].modules[0].percent_of_peak, 10.1);
  EXPECT_EQ(r.machine.gpu_memory_bytes, 143771LL << 20);
  // Which points a resume keeps.
  EXPECT_TRUE(r.points[0].Finished());
  EXPECT_FALSE(r.points[1].Finished());
  EXPECT_TRUE(r.points[2].Finished());
  // Written again from what was read: the same bytes.
  ASSERT_TRUE(WriteOutputs(r, dir).ok());
  EXPECT_EQ(Read(dir + "/sweep.json"), json);
  EXPECT_EQ(Read(dir + "/sweep.md"), md);
  EXPECT_EQ(Read(dir + "/sweep.html"), html);
}

TEST(SweepState, AFileThatIsNotASweepIsRefusedWithTheWayOut) {
  std::string dir = testing::TempDir() + "/sweep-not";
  fs::create_directories(dir);
  testing::WriteFile(dir + "/sweep.json", "{\"schema\": \"cpprof.report/2\"}");
  auto r = ReadSweepJson(dir + "/sweep.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ExitCode::kBadInput);
  EXPECT_NE(r.status().message().find("is not a sweep's state (cpprof.sweep/1 JSON). Pick another --out, or pass "
                                      "--force"),
            std::string::npos);
  auto none = ReadSweepJson(dir + "/absent.json");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

}  // namespace
}  // namespace cpprof::sweep
