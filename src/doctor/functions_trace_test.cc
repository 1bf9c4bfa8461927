// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "doctor/functions_trace.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.h"

namespace cpprof::doctor {
namespace {

using testing::DataPath;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;
using Json = nlohmann::ordered_json;

TEST(FunctionsTrace, FunctionFlag) {
  auto e = ParseFunctionFlag("pkg.layers:Trunk.forward");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->module, "pkg.layers");
  EXPECT_EQ(e->function, "Trunk.forward");
  auto no_colon = ParseFunctionFlag("pkg.layers.Trunk.forward");
  ASSERT_FALSE(no_colon.ok());
  EXPECT_EQ(no_colon.status().code(), ExitCode::kUsage);
  EXPECT_EQ(no_colon.status().message(),
            "--function 'pkg.layers.Trunk.forward' is not MODULE:Class.method (e.g. pkg.layers:Trunk.forward)");
  EXPECT_FALSE(ParseFunctionFlag("pkg-x:Trunk.forward").ok());
  EXPECT_FALSE(ParseFunctionFlag("pkg:Trunk.forward()").ok());
  EXPECT_FALSE(ParseFunctionFlag("a:b:c").ok());
}

TEST(FunctionsTrace, AliasFlag) {
  auto a = ParseAlias("boltz=vendor.boltz");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first, "boltz");
  EXPECT_EQ(a->second, "vendor.boltz");
  EXPECT_FALSE(ParseAlias("boltz").ok());
  EXPECT_FALSE(ParseAlias("=x").ok());
}

TEST(FunctionsTrace, SpecFile) {
  std::string p = TempDir() + "/spec.json";
  WriteFile(p, R"({"pkg.layers": ["Trunk.forward", "Head.forward"], "pkg.diff": ["Diffusion.sample"]})");
  auto s = ReadSpecFile(p);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[2].module, "pkg.diff");
  EXPECT_EQ((*s)[2].origin, "--spec " + p);
  WriteFile(p, R"(["pkg.layers"])");
  auto bad = ReadSpecFile(p);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ExitCode::kBadInput);
  WriteFile(p, R"({"pkg.layers": ["Trunk.forward", 3]})");
  EXPECT_FALSE(ReadSpecFile(p).ok());
}

TEST(FunctionsTrace, ShippedPytorchJsonParses) {
  auto base = ParseTraceJson(ReadFile(DataPath("fakes/PythonFunctionsTrace/pytorch.json")), "pytorch.json");
  ASSERT_TRUE(base.ok()) << base.status().message();
  EXPECT_EQ(base->size(), 6u);
  EXPECT_EQ((*base)[1]["color"], "0xbbd6cf");
  auto bad = ParseTraceJson(R"([{"domain": "x", "module": "m", "functions": "f"}])", "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("entry 0"), std::string::npos);
  EXPECT_FALSE(ParseTraceJson("{}", "obj.json").ok());
}

TEST(FunctionsTrace, MergeKeepsBaseAndSortsNewEntries) {
  std::vector<TraceEntry> base = {
      Json{{"domain", "PyTorch"}, {"color", "0xbbd6cf"}, {"module", "torch"}, {"functions", {"Tensor.to"}}},
      Json{{"domain", "PyTorch"}, {"module", "torch.autograd"}, {"functions", {"backward"}}},
      Json{{"domain", "PyTorch"}, {"color", "0xbbd6cf"}, {"module", "torch"}, {"functions", {"Tensor.to", "cat"}}},
  };
  std::vector<FunctionEntry> accepted = {
      {"pkg.layers", "Trunk.forward", "--function"},      {"pkg.heads", "Head.forward", "--function"},
      {"pkg.layers", "Pairformer.forward", "--function"}, {"pkg.layers", "Trunk.forward", "--spec"},  // a duplicate
      {"torch.autograd", "grad", "--function"},  // joins the base entry of its domain
  };
  auto merged = MergeTrace(base, accepted, "");
  ASSERT_EQ(merged.size(), 5u);
  EXPECT_EQ(merged[0].dump(),
            R"({"domain":"PyTorch","color":"0xbbd6cf","module":"torch","functions":["Tensor.to","cat"]})");
  EXPECT_EQ(merged[1].dump(), R"({"domain":"PyTorch","module":"torch.autograd","functions":["backward"]})");
  EXPECT_EQ(merged[2].dump(), R"({"domain":"pkg","module":"pkg.heads","functions":["Head.forward"]})");
  EXPECT_EQ(merged[3].dump(),
            R"({"domain":"pkg","module":"pkg.layers","functions":["Pairformer.forward","Trunk.forward"]})");
  EXPECT_EQ(merged[4].dump(), R"({"domain":"torch","module":"torch.autograd","functions":["grad"]})");
  // the order of the flags does not matter
  std::vector<FunctionEntry> reversed(accepted.rbegin(), accepted.rend());
  EXPECT_EQ(TraceJsonText(MergeTrace(base, reversed, "")), TraceJsonText(merged));
  // with a domain, everything new goes into it, and joins a base entry of the same domain+module
  auto in_domain = MergeTrace(base, {{"torch.autograd", "grad", ""}}, "PyTorch");
  ASSERT_EQ(in_domain.size(), 2u);
  EXPECT_EQ(in_domain[1]["functions"].dump(), R"(["backward","grad"])");
}

TEST(FunctionsTrace, WritesAtomically) {
  std::string dir = TempDir() + "/atomic";
  std::filesystem::create_directories(dir);
  std::string p = dir + "/trace.json";
  std::vector<TraceEntry> entries = {Json{{"domain", "d"}, {"module", "m"}, {"functions", {"A.forward"}}}};
  ASSERT_TRUE(WriteTraceAtomically(p, entries).ok());
  EXPECT_EQ(ReadFile(p), TraceJsonText(entries));
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);  // no temporary file left behind
  auto bad = WriteTraceAtomically(dir + "/no/such/dir/trace.json", entries);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("creating a temporary file in '" + dir + "/no/such/dir' failed"), std::string::npos);
}

}  // namespace
}  // namespace cpprof::doctor
