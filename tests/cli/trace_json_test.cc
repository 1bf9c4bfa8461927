// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof trace-json, black-box, on the sample package tests/data/trace_pkg (a src layout) with
// Debian's /usr/bin/python3 (its python3-torch serves the nn.Module discovery test).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/process_runner.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

const char* kPython = "/usr/bin/python3";

std::string Pkg() { return DataPath("trace_pkg"); }
std::string Base() { return DataPath("fakes/PythonFunctionsTrace/pytorch.json"); }

// The binary, run from the package's folder (as the workload would be launched) with a small
// environment: PYTHONPATH=src unless `src_on_path` is false.
CliResult TraceJson(std::vector<std::string> args, bool src_on_path = true,
                    std::map<std::string, std::string> extra_env = {}) {
  runner::RealProcessRunner r;
  runner::RunOptions o;
  o.env = std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"}, {"HOME", TempDir()}};
  if (src_on_path) (*o.env)["PYTHONPATH"] = "src";
  for (const auto& [k, v] : extra_env) (*o.env)[k] = v;
  o.cwd = Pkg();
  o.timeout_s = 300;
  args.insert(args.begin(), {CPPROF_BINARY, "trace-json"});
  auto res = r.Run(args, o);
  if (!res.ok()) {
    ADD_FAILURE() << res.status().message();
    return {};
  }
  return {res->exit_code, res->out, res->err};
}

bool HavePython() { return fs::exists(kPython); }

class TraceJsonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HavePython()) GTEST_SKIP() << kPython << " is not installed";
    out_ = TempDir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json";
    fs::remove(out_);
  }
  std::string out_;
};

TEST_F(TraceJsonTest, AddsValidatedFunctionsToTheBase) {
  CliResult r = TraceJson({"--function", "tracepkg.blocks:Trunk.recycle", "--function", "tracepkg.blocks:Trunk.forward",
                           "--function", "tracepkg.blocks:helper", "--base", Base(), "--python", kPython, "-o", out_});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_CONTAINS(r.err, "cpprof: trace-json: wrote " + out_ + ": 3 functions in 1 module validated with");
  EXPECT_CONTAINS(r.err, "added to 6 base entries from " + Base());
  Json base = Json::parse(ReadFile(Base()));
  Json got = Json::parse(ReadFile(out_));
  ASSERT_EQ(got.size(), base.size() + 1);
  // Kept as they were (color too), each function once: the shipped file lists "glu" twice.
  for (size_t i = 0; i < base.size(); ++i) {
    Json unique = Json::array();
    for (const auto& f : base[i]["functions"]) {
      if (std::find(unique.begin(), unique.end(), f) == unique.end()) unique.push_back(f);
    }
    Json want = base[i];
    want["functions"] = unique;
    EXPECT_EQ(got[i], want) << i;
  }
  EXPECT_EQ(got[3]["functions"].size() + 1, base[3]["functions"].size());
  EXPECT_EQ(
      got.back().dump(),
      R"({"domain":"tracepkg","module":"tracepkg.blocks","functions":["Trunk.forward","Trunk.recycle","helper"]})");
}

TEST_F(TraceJsonTest, OutputDoesNotDependOnTheOrderOfFlags) {
  std::string a = out_ + ".a", b = out_ + ".b";
  ASSERT_EQ(
      TraceJson({"--function", "tracepkg.blocks:Trunk.forward", "--function", "tracepkg.blocks:PairformerBlock.forward",
                 "--function", "tracepkg.blocks:Trunk.forward", "--no-base", "--python", kPython, "-o", a})
          .rc,
      0);
  ASSERT_EQ(TraceJson({"--function", "tracepkg.blocks:PairformerBlock.forward", "--function",
                       "tracepkg.blocks:Trunk.forward", "--no-base", "--python", kPython, "-o", b})
                .rc,
            0);
  EXPECT_EQ(ReadFile(a), ReadFile(b));
  EXPECT_EQ(
      Json::parse(ReadFile(a)).dump(),
      R"([{"domain":"tracepkg","module":"tracepkg.blocks","functions":["PairformerBlock.forward","Trunk.forward"]}])");
}

TEST_F(TraceJsonTest, MissingMethodAndClassAreLeftOutAndListed) {
  CliResult r = TraceJson({"--function", "tracepkg.blocks:Trunk.forward", "--function",
                           "tracepkg.blocks:Trunk.backward", "--function", "tracepkg.blocks:Nope.forward", "--function",
                           "tracepkg.blocks:SCALE", "--no-base", "--python", kPython, "-o", out_});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_CONTAINS(r.err,
                  "cpprof: warning: trace-json: rejected tracepkg.blocks:Trunk.backward: class 'Trunk' has no "
                  "attribute 'backward'\n");
  EXPECT_CONTAINS(r.err, "rejected tracepkg.blocks:Nope.forward: module 'tracepkg.blocks' has no attribute 'Nope'\n");
  EXPECT_CONTAINS(r.err, "rejected tracepkg.blocks:SCALE: 'SCALE' is a float, not a function or method\n");
  EXPECT_CONTAINS(r.err, "; 3 rejected\n");
  EXPECT_EQ(Json::parse(ReadFile(out_))[0]["functions"].dump(), R"(["Trunk.forward"])");
}

TEST_F(TraceJsonTest, StrictMakesARejectionAnErrorAndWritesNothing) {
  WriteFile(out_, "previous");
  CliResult r =
      TraceJson({"--function", "tracepkg.blocks:Trunk.forward", "--function", "tracepkg.blocks:Trunk.backward",
                 "--no-base", "--strict", "--python", kPython, "-o", out_, "--force"});
  EXPECT_EQ(r.rc, 3);
  EXPECT_CONTAINS(r.err, "cpprof: error: trace-json: rejected tracepkg.blocks:Trunk.backward");
  EXPECT_CONTAINS(r.err, "cpprof: error: trace-json: 1 entry rejected (--strict); nothing written\n");
  EXPECT_EQ(ReadFile(out_), "previous");
}

TEST_F(TraceJsonTest, UnimportableModuleSaysWhy) {
  CliResult r = TraceJson({"--function", "tracepkg.broken:Trunk.forward", "--function", "tracepkg.blocks:Trunk.forward",
                           "--no-base", "--python", kPython, "-o", out_});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_CONTAINS(r.err,
                  "rejected tracepkg.broken:Trunk.forward: module 'tracepkg.broken' cannot be imported "
                  "(ModuleNotFoundError: No module named 'tracepkg_dependency_that_is_not_installed')");
}

TEST_F(TraceJsonTest, SrcLayoutWithoutPythonpathGetsTheHint) {
  CliResult r = TraceJson({"--function", "tracepkg.blocks:Trunk.forward", "--no-base", "--python", kPython, "-o", out_},
                          /*src_on_path=*/false);
  EXPECT_EQ(r.rc, 3);
  EXPECT_CONTAINS(r.err,
                  "module 'tracepkg.blocks' cannot be imported (ModuleNotFoundError: No module named 'tracepkg')");
  EXPECT_CONTAINS(r.err, "hint: ./src/tracepkg is a src layout: run with PYTHONPATH=src (or 'pip install -e .')");
  EXPECT_CONTAINS(r.err, "no entry was accepted");
  EXPECT_FALSE(fs::exists(out_));
}

TEST_F(TraceJsonTest, VendoredCodeNeedsItsAlias) {
  std::string fn = "tracepkg._vendor.folding.layers:FoldBlock.forward";
  CliResult without = TraceJson({"--function", fn, "--no-base", "--python", kPython, "-o", out_});
  EXPECT_EQ(without.rc, 3);
  EXPECT_CONTAINS(without.err, "(ModuleNotFoundError: No module named 'folding')");
  EXPECT_CONTAINS(without.err, "pass --alias folding=<the package it really is>");
  CliResult with = TraceJson(
      {"--function", fn, "--alias", "folding=tracepkg._vendor.folding", "--no-base", "--python", kPython, "-o", out_});
  ASSERT_EQ(with.rc, 0) << with.err;
  EXPECT_EQ(Json::parse(ReadFile(out_)).dump(),
            R"([{"domain":"tracepkg","module":"tracepkg._vendor.folding.layers","functions":["FoldBlock.forward"]}])");
}

TEST_F(TraceJsonTest, TheMainTrapIsRefusedWithItsCause) {
  CliResult r =
      TraceJson({"--function", "tracepkg.entry:EntryTrunk.forward", "--function", "tracepkg.blocks:Trunk.forward",
                 "--entry-module", "tracepkg.entry", "--no-base", "--python", kPython, "-o", out_});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_CONTAINS(r.err,
                  "rejected tracepkg.entry:EntryTrunk.forward: module 'tracepkg.entry' is launched with -m, so it "
                  "runs as __main__; nsys does not annotate functions of the __main__ module");
  EXPECT_CONTAINS(r.err,
                  "hint: move the classes out of 'tracepkg.entry' into a module it imports, or launch another "
                  "module with -m");
  EXPECT_EQ(Json::parse(ReadFile(out_)).size(), 1u);
  // Without --entry-module the entry is accepted, with a note that the module has a __main__ block.
  CliResult n = TraceJson(
      {"--function", "tracepkg.entry:EntryTrunk.forward", "--no-base", "--python", kPython, "-o", out_, "--force"});
  ASSERT_EQ(n.rc, 0) << n.err;
  EXPECT_CONTAINS(n.err,
                  "cpprof: note: trace-json: module 'tracepkg.entry' has an `if __name__ == \"__main__\"` block: "
                  "if it is what you launch with -m, pass --entry-module tracepkg.entry");
}

TEST_F(TraceJsonTest, DiscoversModuleSubclassesWithDebianTorch) {
  runner::RealProcessRunner pr;
  runner::RunOptions po;
  po.env = std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"}};
  auto has_torch = pr.Run({kPython, "-c", "import torch.nn"}, po);
  if (!has_torch.ok() || has_torch->exit_code != 0) GTEST_SKIP() << "no torch for " << kPython << " (python3-torch)";

  CliResult r = TraceJson({"--discover", "tracepkg", "--match", "TriMul|Pairformer|Trunk|Diffusion", "--entry-module",
                           "tracepkg.entry", "--domain", "Model", "--no-base", "--python", kPython, "-o", out_});
  ASSERT_EQ(r.rc, 0) << r.err;
  // nn.Module subclasses whose name matches, with a forward (own or inherited); not TrunkConfig
  // (not a Module), TrunkWithoutForward, Embedding (no match), nor the plain classes of blocks.
  EXPECT_EQ(Json::parse(ReadFile(out_)).dump(),
            R"([{"domain":"Model","module":"tracepkg.models","functions":["DiffusionTrunk.forward",)"
            R"("PairformerStack.forward","TriMulBlock.forward","TrunkBase.forward"]}])");
  // The entry module is parsed, never imported: its matching class is refused with the cause.
  EXPECT_CONTAINS(r.err,
                  "rejected tracepkg.entry:EntryTrunk.forward: 'EntryTrunk' is defined in 'tracepkg.entry', "
                  "which runs as __main__ when launched with -m");
  EXPECT_CONTAINS(r.err, "cpprof: note: trace-json: --discover tracepkg: could not import 'tracepkg.broken'");
  EXPECT_CONTAINS(r.err, "4 functions in 1 module");
}

TEST_F(TraceJsonTest, SpecFileAndDomain) {
  std::string spec = out_ + ".spec";
  WriteFile(spec, R"({"tracepkg.blocks": ["Trunk.forward", "PairformerBlock.forward"]})");
  CliResult r = TraceJson({"--spec", spec, "--domain", "Fold", "--no-base", "--python", kPython, "-o", out_});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(
      Json::parse(ReadFile(out_)).dump(),
      R"([{"domain":"Fold","module":"tracepkg.blocks","functions":["PairformerBlock.forward","Trunk.forward"]}])");
}

TEST_F(TraceJsonTest, DefaultBaseIsTheShippedFileOfTheChosenNsys) {
  // A fake nsys in a bundle layout with the shipped pytorch.json beside it; first on PATH.
  std::string target = TempDir() + "/tj-bundle/host/target-linux-x64";
  fs::create_directories(target + "/PythonFunctionsTrace");
  fs::copy_file(Base(), target + "/PythonFunctionsTrace/pytorch.json", fs::copy_options::overwrite_existing);
  std::string nsys = target + "/nsys";
  WriteFile(nsys, "#!/bin/sh\ncase \"$*\" in\n  --version) /bin/cat '" + DataPath("fakes/h200/nsys--version.txt") +
                      "';;\n  'profile --help') /bin/cat '" + DataPath("fakes/h200/nsys-profile--help.txt") +
                      "';;\n  *) exit 99;;\nesac\n");
  fs::permissions(nsys, fs::perms::owner_all);
  CliResult r = TraceJson({"--function", "tracepkg.blocks:Trunk.forward", "--python", kPython, "-o", out_}, true,
                          {{"PATH", target + ":/usr/bin:/bin"}});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_CONTAINS(r.err, "added to 6 base entries from " + target + "/PythonFunctionsTrace/pytorch.json");
  EXPECT_EQ(Json::parse(ReadFile(out_)).size(), 7u);
}

TEST_F(TraceJsonTest, NoNsysAndNoBaseIsAnErrorSayingWhatToPass) {
  std::string empty = TempDir() + "/tj-empty";
  fs::create_directories(empty);
  CliResult r = TraceJson({"--function", "tracepkg.blocks:Trunk.forward", "--python", kPython, "-o", out_}, true,
                          {{"PATH", empty}});
  EXPECT_EQ(r.rc, 1);
  EXPECT_CONTAINS(r.err,
                  "cpprof: error: trace-json: no base file: no nsys found. Pass the shipped pytorch.json with "
                  "--base FILE");
}

TEST_F(TraceJsonTest, UsageErrors) {
  CliResult bad = TraceJson({"--function", "tracepkg.blocks.Trunk.forward", "--no-base"});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_EQ(bad.err,
            "cpprof: error: trace-json: --function 'tracepkg.blocks.Trunk.forward' is not MODULE:Class.method "
            "(e.g. pkg.layers:Trunk.forward)\n");
  CliResult nothing = TraceJson({"--no-base"});
  EXPECT_EQ(nothing.rc, 2);
  EXPECT_CONTAINS(nothing.err,
                  "nothing to name: give --function MODULE:Class.method, --spec FILE, or --discover PKG "
                  "--match REGEX");
  CliResult half = TraceJson({"--discover", "tracepkg", "--no-base"});
  EXPECT_EQ(half.rc, 2);
  EXPECT_CONTAINS(half.err, "--discover PKG and --match REGEX go together");
  std::string bad_base = out_ + ".base";
  WriteFile(bad_base, R"({"not": "a list"})");
  CliResult base = TraceJson({"--function", "tracepkg.blocks:Trunk.forward", "--base", bad_base});
  EXPECT_EQ(base.rc, 4);
  EXPECT_CONTAINS(base.err, "is not a list of {\"domain\", \"module\", \"functions\": [...]}");
}

TEST_F(TraceJsonTest, StdoutWhenNoOutputFile) {
  CliResult r = TraceJson({"--function", "tracepkg.blocks:Trunk.forward", "--no-base", "--python", kPython});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out).dump(),
            R"([{"domain":"tracepkg","module":"tracepkg.blocks","functions":["Trunk.forward"]}])");
}

}  // namespace
}  // namespace cpprof::testing
