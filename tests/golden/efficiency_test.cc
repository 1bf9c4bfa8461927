// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The Efficiency section (docs/cost-model.md) on a committed real cpfold export: the 1 x 2 ring of
// the `small` preset at N = 256 (tests/data/real/README.md), with the sizes given by --dims as its
// log records them (cpfold's config line there predates the `model` field). Golden text of the
// section (CPPROF_REBASELINE=1 rewrites it; review the diff), JSON numbers that follow from each
// other, the sizes read from a cpfold log beside the export, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_support.h"

namespace cpprof::testing {
namespace {

using nlohmann::json;

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

// cpfold's `small` preset (python/cpfold/config.py), trunk mode, --recycles 0 (one pass).
const char* kDims =
    "N=256,c_z=64,c_s=128,tri_mul_hidden=64,tri_att_heads=4,tri_att_head_dim=16,single_att_heads=8,transition_n=4,"
    "c_m=32,c_opm=16,msa_heads=4,msa_head_dim=8,msa_depth=32,blocks=8,msa_blocks=1,passes=1,grid=1x2,dtype=bf16";

std::string Section(const std::string& text) {
  size_t at = text.find("Efficiency per module");
  if (at == std::string::npos) return "";
  size_t end = text.find("\n\n\n", at);
  size_t next = text.find("\nCommunication by kind", at);
  return text.substr(at, std::min(end, next) - at + 1);
}

TEST(Efficiency, GoldenTextOnRealRing) {
  CliResult r = RunCli({"report", RealExport("cpfold-ring-1x2"), "--dims", kDims});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string section = Section(r.out);
  ASSERT_FALSE(section.empty()) << r.out;
  for (size_t pos = 0, nl; pos < section.size(); pos = nl + 1) {
    nl = section.find('\n', pos);
    EXPECT_LE(nl - pos, 120u) << section.substr(pos, nl - pos);
  }
  std::string golden = DataPath("golden/cpfold-ring-1x2.efficiency.txt");
  if (std::getenv("CPPROF_REBASELINE")) {
    WriteFile(golden, section);
    GTEST_SKIP() << "rebaselined " << golden;
  }
  ASSERT_TRUE(std::filesystem::exists(golden)) << "run with CPPROF_REBASELINE=1 to create " << golden;
  EXPECT_EQ(section, ReadFile(golden)) << "review, then rebaseline with CPPROF_REBASELINE=1";
}

TEST(Efficiency, JsonNumbersFollowFromEachOther) {
  CliResult r = RunCli({"report", "--format", "json", RealExport("cpfold-ring-1x2"), "--dims", kDims});
  ASSERT_EQ(r.rc, 0) << r.err;
  json e = json::parse(r.out)["efficiency"];
  ASSERT_TRUE(e["computed"].get<bool>()) << e.dump(2);
  EXPECT_EQ(e["gpu"], "NVIDIA H200");
  EXPECT_EQ(e["device"]["name"], "H200 SXM");
  EXPECT_EQ(e["iterations"], 3);
  EXPECT_EQ(e["dims_source"], "--dims, defaults");
  int trimul = 0;
  for (const json& m : e["modules"]) {
    const double t = m["time_ns"], f = m["flops"], b = m["bytes"];
    ASSERT_GT(t, 0) << m.dump();
    EXPECT_NEAR(m["achieved_tflops"].get<double>(), f / t / 1e3, 1e-9);
    EXPECT_NEAR(m["achieved_gbs"].get<double>(), b / t, 1e-9);
    EXPECT_NEAR(m["percent_of_peak"].get<double>(), 100 * f / t / 1e3 / 989.5, 1e-6);
    EXPECT_LT(m["percent_of_peak"].get<double>(), 100) << m.dump();
    if (m["path"].get<std::string>().rfind("trunk/", 0) == 0) {
      EXPECT_EQ(m["calls_per_iteration"], 8);
    }
    if (m["path"].get<std::string>().rfind("MSA/", 0) == 0) {
      EXPECT_EQ(m["calls_per_iteration"], 1);
    }
    trimul += m["cost_key"] == "TriangleMultiplicationOutgoing";
  }
  EXPECT_EQ(trimul, 2) << "the trunk's and the MSA block's";
  ASSERT_FALSE(e["comm"].empty());
  for (const json& c : e["comm"]) {
    EXPECT_EQ(c["shifts_per_call"], 1);                     // a 1 x 2 ring: P - 1 shifts
    EXPECT_EQ(c["bytes_per_shift"], 64.0 * 256 * 128 * 2);  // h x N x N/2, bf16
    EXPECT_NEAR(c["ideal_ns_per_shift"].get<double>(), 64.0 * 256 * 128 * 2 / 450.0, 1e-6);
    EXPECT_EQ(c["link"], "NVLink");
  }
}

// Calls per iteration counted from the capture (the module's NVTX ranges in the steady window, per
// rank) against what the workload's config line says (tests/data/real/<name>/<name>.log):
// cpfold-e2e-1x2 ran `--recycles 1 --diffusion-steps 4 --samples 2` with the small preset (8
// Pairformer blocks, 1 MSA block, 2 confidence blocks, 4 diffusion blocks); cpfold-trunk-2x2
// `--recycles 1` on a 2 x 2 grid.
const char* kE2eDims =
    "N=256,c_z=64,c_s=128,tri_mul_hidden=64,tri_att_heads=4,tri_att_head_dim=16,single_att_heads=8,transition_n=4,"
    "c_m=32,c_opm=16,msa_heads=4,msa_head_dim=8,msa_depth=32,blocks=8,msa_blocks=1,passes=2,c_token_diffusion=256,"
    "diffusion_blocks=4,diffusion_heads=8,confidence_blocks=2,diffusion_steps=4,samples=2,grid=1x2,dtype=bf16";

// path -> calls per iteration, for the rows whose path ends with `end` ("" all).
std::map<std::string, double> Calls(const json& e) {
  std::map<std::string, double> out;
  for (const json& m : e["modules"]) out[m["path"].get<std::string>()] = m["calls_per_iteration"].get<double>();
  return out;
}

TEST(Efficiency, CallsCountedFromRealCapturesMatchTheConfigLine) {
  CliResult r = RunCli({"report", "--format", "json", RealExport("cpfold-e2e-1x2"), "--dims", kE2eDims});
  ASSERT_EQ(r.rc, 0) << r.err;
  json e = json::parse(r.out)["efficiency"];
  ASSERT_TRUE(e["computed"].get<bool>()) << e.dump(2);
  std::map<std::string, int> by_group;
  for (const json& m : e["modules"]) {
    const std::string path = m["path"];
    const std::string group = path.substr(0, path.find('/'));
    EXPECT_EQ(m["calls_source"], "capture") << path;
    EXPECT_EQ(m["calls_min"], m["calls_max"]) << path << ": both ranks run it alike";
    EXPECT_EQ(m["calls_per_iteration"], m["config_calls"]) << path << ": the config line's count";
    double want = group == "trunk" ? 16 : group == "MSA" ? 2 : group == "confidence" ? 4 : 16;
    if (path.ends_with("ConfidenceModule.forward")) want = 1;
    if (path.ends_with("DiffusionTransformer.forward")) want = 4;
    EXPECT_EQ(m["calls_per_iteration"].get<double>(), want) << path;
    ++by_group[group];
  }
  EXPECT_EQ(by_group["trunk"], 7);
  EXPECT_EQ(by_group["MSA"], 7);
  EXPECT_EQ(by_group["confidence"], 8) << "the head and its Pairformer's 7 modules";
  EXPECT_EQ(by_group["diffusion"], 3) << "the transformer, its attention and transition (not the atom transformers')";
  auto calls = Calls(e);
  const std::string dt = "diffusion/EDMSampler.sample/DiffusionModule.forward/DiffusionTransformer.forward";
  ASSERT_TRUE(calls.count(dt + "/AttentionPairBias.forward")) << e.dump(1);
  for (const json& m : e["modules"]) {
    if (m["path"] == dt + "/AttentionPairBias.forward") {
      EXPECT_EQ(m["cost_key"], "DiffusionAttentionPairBias");
    }
    if (m["path"] == dt + "/ConditionedTransitionBlock.forward") {
      EXPECT_EQ(m["cost_key"], "DiffusionTransition");
    }
  }
  EXPECT_EQ(e["notes"].dump().find("calls disagree"), std::string::npos) << e["notes"].dump(1);

  // The sizes say one trunk pass where the run made two: the capture's count wins, a note says so.
  std::string wrong = kE2eDims;
  wrong.replace(wrong.find("passes=2"), 8, "passes=1");
  json w = json::parse(RunCli({"report", "--format", "json", RealExport("cpfold-e2e-1x2"), "--dims", wrong}).out);
  EXPECT_EQ(Calls(w["efficiency"]), calls);
  EXPECT_CONTAINS(w["efficiency"]["notes"].dump(),
                  "calls disagree: the capture counts 16 calls per iteration of trunk/CPFoldModel.trunk/");
  EXPECT_CONTAINS(w["efficiency"]["notes"].dump(),
                  "where the config's calls 'blocks*passes' (blocks=8, passes=1) give 8");
  CliResult text = RunCli({"report", RealExport("cpfold-e2e-1x2"), "--dims", wrong});
  EXPECT_CONTAINS(text.out, "note: calls disagree: the capture counts 16 calls per iteration");

  // 2 x 2 (Cannon): every rank counts 16 trunk and 2 MSA calls per iteration.
  std::string grid = kE2eDims;
  grid.replace(grid.find("grid=1x2"), 8, "grid=2x2");
  json t = json::parse(RunCli({"report", "--format", "json", RealExport("cpfold-trunk-2x2"), "--dims", grid}).out);
  ASSERT_EQ(t["efficiency"]["modules"].size(), 14u) << t["efficiency"].dump(1);
  for (const json& m : t["efficiency"]["modules"]) {
    const std::string path = m["path"];
    EXPECT_EQ(m["calls_per_iteration"].get<double>(), path.rfind("trunk/", 0) == 0 ? 16 : 2) << path;
    EXPECT_EQ(m["calls_min"], m["calls_max"]) << path;
  }
}

TEST(Efficiency, SizesFromCpfoldLogBesideTheExport) {
  const std::string dir = TempDir() + "/efficiency-log";
  std::filesystem::create_directories(dir);
  const std::string copy = dir + "/ring.sqlite";
  std::filesystem::copy_file(RealExport("cpfold-ring-1x2"), copy, std::filesystem::copy_options::overwrite_existing);
  // Without a log, efficiency is not computed: one line says which flag gives it.
  CliResult none = RunCli({"report", copy});
  ASSERT_EQ(none.rc, 0) << none.err;
  EXPECT_CONTAINS(none.out, "Efficiency: not computed: N=256 comes from the command line (--n-token 256) but");
  EXPECT_EQ(json::parse(RunCli({"report", "--format", "json", copy}).out).count("efficiency"), 0u);
  // The committed log's config line predates the sizes: said so.
  WriteFile(dir + "/ring.log", ReadFile(DataPath("real/cpfold-ring-1x2/cpfold-ring-1x2.log")));
  CliResult old = RunCli({"report", copy});
  EXPECT_CONTAINS(old.out, "cpfold's config line has no model sizes");
  EXPECT_CONTAINS(old.out, "(ring.log)");
  // The same line as cpfold prints it now, with `model`.
  WriteFile(dir + "/ring.stdout.log",
            "cpfold-config: {\"mode\": \"trunk\", \"n_token\": 256, \"grid\": [1, 2], \"world\": 2, \"preset\": "
            "\"small\", \"dtype\": \"bf16\", \"recycles\": 0, \"msa_depth\": 32, \"model\": {\"c_s\": 128, \"c_z\": "
            "64, \"pairformer_blocks\": 8, \"tri_mul_hidden\": 64, \"tri_att_heads\": 4, \"tri_att_head_dim\": 16, "
            "\"single_att_heads\": 8, \"transition_n\": 4, \"c_m\": 32, \"msa_blocks\": 1, \"msa_heads\": 4, "
            "\"msa_head_dim\": 8, \"c_opm\": 16}}\n");
  CliResult logged = RunCli({"report", "--format", "json", copy});
  json e = json::parse(logged.out)["efficiency"];
  EXPECT_TRUE(e["computed"].get<bool>()) << e.dump(2);
  EXPECT_EQ(e["dims_source"], "command line, cpfold's config line in ring.stdout.log, kernels, defaults");
  // The dtype is the kernels' (the log's bf16 reached only part of the GEMMs: a note says so).
  const std::string kernels_dtype = e["dtype"];
  CliResult given =
      RunCli({"report", "--format", "json", copy, "--dims", std::string(kDims) + ",dtype=" + kernels_dtype});
  EXPECT_EQ(json::parse(given.out)["efficiency"]["modules"], e["modules"]) << "the log gives the same sizes";
  // A per-rank run's export NAME.<rank>.sqlite reads NAME.stdout.log, also in its partial.
  const std::string rank = dir + "/ring.1.sqlite";
  std::filesystem::rename(copy, rank);
  const std::string partial = dir + "/ring.1.partial.json";
  ASSERT_EQ(RunCli({"report", "--partial", rank, "-o", partial}).rc, 0);
  std::filesystem::rename(rank, copy);  // the merge sees the partial only
  CliResult merged = RunCli({"merge", "--format", "json", partial});
  ASSERT_EQ(merged.rc, 0) << merged.err;
  json m = json::parse(merged.out)["efficiency"];
  EXPECT_EQ(m["dims_source"], e["dims_source"]);
  EXPECT_EQ(m["modules"], e["modules"]);
}

// cpfold-opts-full-1x2 was captured with --pytorch=autograd-shapes-nvtx (tests/data/real/README.md):
// its sizes come from the shapes under each module and its command line, with no --dims and no
// config line beside it, and give the same section as the right --dims (cpfold's `small` preset,
// --blocks 1, a 1 x 2 grid at N = 256).
const char* kOptsFullDims =
    "N=256,c_z=64,c_s=128,tri_mul_hidden=64,tri_att_heads=4,tri_att_head_dim=16,single_att_heads=8,transition_n=4,"
    "c_m=32,c_opm=16,msa_heads=4,msa_head_dim=8,msa_depth=32,blocks=1,msa_blocks=1,passes=1,grid=1x2,dtype=bf16";

TEST(Efficiency, SizesFromTheCaptureEqualTheRightDims) {
  const std::string dir = TempDir() + "/efficiency-shapes";
  std::filesystem::create_directories(dir);
  const std::string copy = dir + "/full.sqlite";  // no log beside it
  std::filesystem::copy_file(RealExport("cpfold-opts-full-1x2"), copy,
                             std::filesystem::copy_options::overwrite_existing);
  CliResult found = RunCli({"report", "--format", "json", copy});
  ASSERT_EQ(found.rc, 0) << found.err;
  json e = json::parse(found.out)["efficiency"];
  ASSERT_TRUE(e["computed"].get<bool>()) << e.dump(2);
  CliResult given = RunCli({"report", "--format", "json", copy, "--dims", kOptsFullDims});
  json g = json::parse(given.out)["efficiency"];
  ASSERT_TRUE(g["computed"].get<bool>()) << g.dump(2);
  // Equal, but for what the config's calls expressions give: the capture does not show msa_blocks (the
  // calls are counted from it either way; a note says the default's 4 disagrees with the counted 1).
  auto without_config_calls = [](json rows) {
    for (json& m : rows) m.erase("config_calls");
    return rows;
  };
  EXPECT_EQ(without_config_calls(e["modules"]), without_config_calls(g["modules"]));
  EXPECT_EQ(e["comm"], g["comm"]);
  EXPECT_EQ(e["modules"].size(), 14u);
  // Every size the formulas of these rows use, found, and where from.
  const json& origin = e["dims_origin"];
  for (const char* name : {"N", "c_z", "c_s", "tri_mul_hidden", "tri_att_heads", "tri_att_head_dim", "single_att_heads",
                           "transition_n", "c_m", "c_opm", "msa_heads", "msa_head_dim", "msa_depth", "grid"}) {
    ASSERT_TRUE(origin.contains(name)) << name << " " << origin.dump(1);
    EXPECT_EQ(origin[name].get<std::string>().rfind("shapes: ", 0), 0u) << name << " " << origin[name];
  }
  // The dtype from the kernels that ran: mostly bf16 tensor-core GEMMs (CUTLASS), and cuBLAS's fp32
  // SIMT ones beside them (--dtype bf16 did not reach every matmul).
  const std::string dtype = origin["dtype"];
  EXPECT_EQ(dtype.rfind("kernels: GEMM and attention launches: bf16 56 % (tensor-core GEMM: ", 0), 0u) << dtype;
  EXPECT_CONTAINS(dtype, "fp32 44 % (SIMT GEMM (FFMA): sm80_xmma_gemm_f32f32_");
  EXPECT_EQ(e["dtype"], "bf16");
  EXPECT_EQ(origin["blocks"], "command line: --blocks 1");
  EXPECT_EQ(e["dims_source"], "shapes, command line, kernels, defaults");
  CliResult text = RunCli({"report", copy});
  EXPECT_CONTAINS(text.out, "came from: shapes: N=256, c_z=64,");
  std::filesystem::remove_all(dir);
}

// A --dims the recorded shapes contradict is a warning naming both; the --dims value is used.
TEST(Efficiency, DimsThatContradictTheShapesWarn) {
  CliResult r = RunCli(
      {"report", "--format", "json", RealExport("cpfold-opts-full-1x2"), "--dims", "N=512,c_z=64,grid=1x2,dtype=bf16"});
  ASSERT_EQ(r.rc, 0) << r.err;
  json e = json::parse(r.out)["efficiency"];
  EXPECT_CONTAINS(e["notes"].dump(),
                  "warning: --dims N=512 but the recorded shapes give N=256 (TriangleMultiplicationOutgoing.forward's "
                  "aten::layer_norm input [1, 256, 128, 64] on 2 ranks): the --dims value is used");
  EXPECT_EQ(e["dims_origin"]["N"], "--dims");
  EXPECT_EQ(e["dims_origin"]["tri_mul_hidden"].get<std::string>().rfind("shapes: ", 0), 0u);
}

// Physics is a check: a wrong --dims (N = 4096 on a capture of N = 256: 4096 times the TriMul
// product's FLOPs) gives "impossible" rows, never a rate above 100 % of a peak printed as achieved.
TEST(Efficiency, WrongDimsGiveImpossibleRowsNeverAboveAPeak) {
  const std::string dims =
      "N=4096,c_z=64,c_s=128,tri_mul_hidden=64,tri_att_heads=4,tri_att_head_dim=16,single_att_heads=8,"
      "transition_n=4,c_m=32,c_opm=16,msa_heads=4,msa_head_dim=8,msa_depth=32,grid=1x2,dtype=bf16";
  CliResult j = RunCli({"report", "--format", "json", RealExport("cpfold-opts-full-1x2"), "--dims", dims});
  ASSERT_EQ(j.rc, 0) << j.err;
  json e = json::parse(j.out)["efficiency"];
  int impossible = 0;
  for (const json& m : e["modules"]) {
    const bool over = m["percent_of_peak"].get<double>() > 100 || m["percent_of_roof"].get<double>() > 100 ||
                      m["achieved_gbs"].get<double>() > 4800;
    EXPECT_EQ(over, !m["impossible"].get<std::string>().empty()) << m.dump();
    impossible += over;
  }
  for (const json& c : e["comm"]) {
    EXPECT_EQ(c["percent_of_link"].get<double>() > 100, !c["impossible"].get<std::string>().empty()) << c.dump();
    impossible += c["percent_of_link"].get<double>() > 100;
  }
  EXPECT_GE(impossible, 4) << "the triangle products and attentions at least";
  EXPECT_CONTAINS(e["notes"].dump(), "warning: --dims N=4096 but the recorded shapes give N=256");
  // The text prints no percentage above 100 in the tables: those rows say "impossible" and why.
  CliResult t = RunCli({"report", RealExport("cpfold-opts-full-1x2"), "--dims", dims});
  const std::string section = Section(t.out);
  EXPECT_CONTAINS(section, "impossible");
  EXPECT_CONTAINS(section, "TriangleMultiplicationOutgoing.forward: impossible: the model's FLOPs");
  for (const json& m : e["modules"]) {
    if (m["cost_key"] != "TriangleMultiplicationOutgoing") continue;
    EXPECT_CONTAINS(m["impossible"].get<std::string>(),
                    "the sizes or the model do not match this capture (sizes used: N=4096 (--dims)");
  }
  size_t rows = 0;
  for (size_t pos = 0, nl; pos < section.size(); pos = nl + 1) {
    nl = section.find('\n', pos);
    std::stringstream cells(section.substr(pos, nl - pos));
    std::vector<std::string> col;
    for (std::string c; cells >> c;) col.push_back(c);
    std::vector<size_t> percents;  // the % columns of a module row (% peak, % roof) or a ring shift's (% link)
    if (col.size() == 11 && (col[9] == "memory" || col[9] == "compute")) percents = {6, 10};
    if (col.size() >= 9 && col[6] == "NVLink") percents = {8};
    rows += !percents.empty();
    for (size_t i : percents) {
      if (col[i] != "impossible" && col[i] != "-") {
        EXPECT_LE(std::stod(col[i]), 100) << section.substr(pos, nl - pos);
      }
    }
  }
  EXPECT_EQ(rows, e["modules"].size() + e["comm"].size()) << section;
}

TEST(Efficiency, Errors) {
  CliResult bad = RunBinary({"report", RealExport("cpfold-ring-1x2"), "--dims", "N=256,cz=64"});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_CONTAINS(bad.err, "--dims: unknown dim 'cz'");
  const std::string cfg = TempDir() + "/bad-cost.json";
  WriteFile(cfg, "{\"dims\": {\"heads\": 4}}");
  CliResult badcfg = RunBinary({"report", RealExport("cpfold-ring-1x2"), "--model-config", cfg});
  EXPECT_EQ(badcfg.rc, 4);
  EXPECT_CONTAINS(badcfg.err, "unknown dim 'heads' in 'dims' (--model-config)");
  CliResult table = RunCli({"report", "--print-cost-model", "--dims", "N=1024,c_z=128"});
  ASSERT_EQ(table.rc, 0) << table.err;
  json t = json::parse(table.out);
  EXPECT_EQ(t["modules"][0]["key"], "TriangleMultiplicationOutgoing");
  EXPECT_EQ(t["modules"][0]["matmul_flops"], 481036337152.0);
  CliResult builtin = RunCli({"report", "--print-cost-model"});
  EXPECT_CONTAINS(builtin.out, "\"H200 SXM\"");
}

}  // namespace
}  // namespace cpprof::testing
