// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof scaffold, black-box: the module it writes for the toy user model
// (python/tests/toy_user_model, whose pytest runs that module on two gloo ranks), and what it
// refuses: an existing file without --force, the file that defines the model (the __main__ trap),
// malformed flags.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runner/process_runner.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

namespace fs = std::filesystem;

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

std::string Toy() { return fs::weakly_canonical(DataPath("../../python/tests/toy_user_model")).string(); }

CliResult Scaffold(std::vector<std::string> args, const std::string& cwd = Toy()) {
  runner::RealProcessRunner r;
  runner::RunOptions o;
  o.env = std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"}, {"HOME", TempDir()}};
  o.cwd = cwd;
  o.timeout_s = 60;
  args.insert(args.begin(), {CPPROF_BINARY, "scaffold"});
  auto res = r.Run(args, o);
  EXPECT_TRUE(res.ok()) << res.status().message();
  return res.ok() ? CliResult{res->exit_code, res->out, res->err} : CliResult{-1, "", ""};
}

TEST(Scaffold, WritesARunnableModuleForTheModel) {
  std::string out = TempDir() + "/scaffold-ok/profile_toy.py";
  fs::create_directories(fs::path(out).parent_path());
  CliResult r =
      Scaffold({"--model", "toymodel.model:ToyFold", "--entry", "infer", "--cp-wrapper", "toymodel.cp:wrap_cp",
                "--contract", "contract.json", "--count", "recycles=2", "--n-token", "16", "--iters", "2", "-o", out});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");  // stdout carries data only; the next steps go to stderr
  EXPECT_CONTAINS(r.err, "cpprof: scaffold: wrote " + out +
                             " for toymodel.model:ToyFold (entry infer, contract "
                             "contract.json, counts recycles)");
  EXPECT_CONTAINS(r.err, "cpprof profile --probe --trace-discover toymodel -- -m profile_toy --n-token 16");
  std::string py = ReadFile(out);
  EXPECT_CONTAINS(py, "from toymodel.model import ToyFold\nfrom toymodel.cp import wrap_cp\n");
  EXPECT_CONTAINS(py, "CONTRACT = \"" + Toy() + "/contract.json\"");
  EXPECT_CONTAINS(py, "COUNTS = {\"recycles\":2}");
  EXPECT_CONTAINS(py, "counts = cw.broadcast_counts(");
  EXPECT_CONTAINS(py, "    return model.infer(inputs, **counts)\n");
  EXPECT_CONTAINS(py, "    model = wrap_cp(model)\n");
  EXPECT_CONTAINS(py, "    with torch.no_grad():\n        for i, warm in cw.schedule(args.iters, args.warmup):");
  EXPECT_CONTAINS(py, "with cw.iteration(i, warmup=warm):");
  EXPECT_CONTAINS(py, "p.add_argument(\"--n-token\", type=int, default=16)");
  EXPECT_CONTAINS(py, "SELF_MODULE = \"profile_toy\"");
  EXPECT_CONTAINS(py, "TRACE_JSON = \"profile_toy.trace.json\"");
  EXPECT_CONTAINS(py, "--entry-module {SELF_MODULE} -o {TRACE_JSON}");
  EXPECT_EQ(py.find('@'), std::string::npos) << "a placeholder left";
  // Python reads it.
  runner::RealProcessRunner pr;
  auto c = pr.Run({"/usr/bin/python3", "-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())", out}, {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->exit_code, 0) << c->err;

  // An existing file: refused without --force, replaced with it.
  CliResult again = Scaffold({"--model", "toymodel.model:ToyFold", "--contract", "contract.json", "-o", out});
  EXPECT_EQ(again.rc, 2) << again.err;
  EXPECT_CONTAINS(again.err, "--force");
  EXPECT_EQ(ReadFile(out), py);
  CliResult forced = Scaffold(
      {"--model", "toymodel.model:ToyFold", "--contract", "contract.json", "--call", "kwargs", "-o", out, "--force"});
  EXPECT_EQ(forced.rc, 0) << forced.err;
  EXPECT_CONTAINS(ReadFile(out), "    return model(**inputs)\n");
  EXPECT_CONTAINS(ReadFile(out), "    model = model  # no --cp-wrapper: edit to wrap the model for CP\n");
}

// A real checkpoint without a contract: the entry gets a random sequence (make_inputs), as one
// argument whatever --call says.
TEST(Scaffold, ACheckpointWithoutAContractDrivesTheEntryWithASequence) {
  std::string ckpt = TempDir() + "/scaffold-ckpt";
  fs::create_directories(ckpt);
  std::string out = TempDir() + "/profile_ckpt.py";
  CliResult r = Scaffold({"--model", "toymodel.model:ToyFold", "--entry", "infer_protein", "--checkpoint", ckpt,
                          "--call", "kwargs", "-o", out});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_CONTAINS(r.err, "(entry infer_protein, checkpoint " + ckpt + ")");
  std::string py = ReadFile(out);
  EXPECT_CONTAINS(py, "CONTRACT = None");
  EXPECT_CONTAINS(py, "CHECKPOINT = \"" + fs::weakly_canonical(ckpt).string() + "\"");
  EXPECT_CONTAINS(py, "    return model.infer_protein(inputs)\n");
  EXPECT_CONTAINS(py, "COUNTS = {}");
}

TEST(Scaffold, RefusesTheFileThatDefinesTheModel) {
  std::string model_file = Toy() + "/toymodel/model.py";
  std::string before = ReadFile(model_file);
  for (const std::string& o : {std::string("toymodel/model.py"), model_file}) {
    CliResult r = Scaffold({"--model", "toymodel.model:ToyFold", "--contract", "contract.json", "-o", o, "--force"});
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_CONTAINS(r.err, "is the file that defines --model (toymodel.model): run as '-m' it would be __main__");
    EXPECT_CONTAINS(r.err, "e.g. -o profile_model.py");
  }
  CliResult w = Scaffold({"--model", "toymodel.model:ToyFold", "--cp-wrapper", "toymodel.cp:wrap_cp", "--contract",
                          "contract.json", "-o", "toymodel/cp.py", "--force"});
  EXPECT_EQ(w.rc, 2) << w.err;
  EXPECT_CONTAINS(w.err, "defines --cp-wrapper (toymodel.cp)");
  EXPECT_EQ(ReadFile(model_file), before);
}

TEST(Scaffold, UsageErrorsSayWhatToWrite) {
  std::string out = TempDir() + "/scaffold-usage.py";
  struct Case {
    std::vector<std::string> args;
    int rc;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--model", "toymodel.model:ToyFold", "-o", out}, 2, "no inputs: give --contract FILE"},
      {{"--model", "ToyFold", "--contract", "contract.json", "-o", out},
       2,
       "--model 'ToyFold': give the import path of the module and the name in it, e.g. mypkg.model:FoldModel"},
      {{"--model", "toymodel.model:ToyFold", "--contract", "contract.json", "--count", "recycles", "-o", out},
       2,
       "--count 'recycles': write NAME=N, e.g. recycles=3"},
      {{"--model", "toymodel.model:ToyFold", "--contract", "nope.json", "-o", out},
       4,
       "--contract 'nope.json': no such file"},
      {{"--model", "toymodel.model:ToyFold", "--entry", "a.b", "--contract", "contract.json", "-o", out},
       2,
       "--entry 'a.b' is not a method name"},
  };
  for (const auto& c : cases) {
    CliResult r = Scaffold(c.args);
    EXPECT_EQ(r.rc, c.rc) << r.err;
    EXPECT_CONTAINS(r.err, c.message);
  }
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace cpprof::testing
