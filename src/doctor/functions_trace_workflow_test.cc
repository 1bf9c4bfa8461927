// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "doctor/functions_trace_workflow.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "test_support.h"

namespace cpprof::doctor {
namespace {

using testing::DataPath;
using testing::TempDir;
using testing::WriteFile;
using Json = nlohmann::ordered_json;

// Answers the validation helper's request with a fixed answer, and keeps what it was asked.
class FakeHelper : public runner::ProcessRunner {
 public:
  explicit FakeHelper(std::string answer) : answer_(std::move(answer)) {}
  StatusOr<runner::ProcessResult> Run(const std::vector<std::string>& argv, const runner::RunOptions& o) override {
    argv_ = argv;
    request_ = o.stdin_data.value_or("");
    runner::ProcessResult r;
    r.exit_code = 0;
    r.out = answer_;
    return r;
  }
  std::vector<std::string> argv_;
  std::string request_;

 private:
  std::string answer_;
};

// Two entries asked: the first imports, the second names a class its module lacks.
const char* kAnswer = R"({"schema": "cpprof.validate_trace/1", "python": "/venv/bin/python3",
  "entries": [{"ok": true}, {"ok": false, "reason": "class_missing", "detail": "no class 'Hed'"}]})";

FunctionsTraceJob Job() {
  FunctionsTraceJob job;
  job.request.entries = {{"pkg.layers", "Trunk.forward", "--function"}, {"pkg.heads", "Hed.forward", "--function"}};
  job.base = {Json{{"domain", "PyTorch"}, {"module", "torch"}, {"functions", {"cat"}}}};
  job.python = "/venv/bin/python3";
  job.command = "trace-json";
  return job;
}

TEST(FunctionsTraceWorkflow, ValidatesReportsTheRejectedAndMergesTheAccepted) {
  FakeHelper helper(kAnswer);
  std::ostringstream err;
  auto t = MakeFunctionsTrace(Job(), helper, runner::Environment({}), err);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(helper.argv_.at(0), "/venv/bin/python3");
  EXPECT_NE(helper.request_.find("\"module\":\"pkg.heads\""), std::string::npos) << helper.request_;
  ASSERT_EQ(t->validation.accepted.size(), 1u);
  EXPECT_EQ(t->validation.accepted[0].module, "pkg.layers");
  EXPECT_EQ(TraceJsonText(t->entries), TraceJsonText(MergeTrace(Job().base, t->validation.accepted, "")));
  EXPECT_EQ(t->entries.size(), 2u);  // torch from the base, then pkg.layers
  EXPECT_EQ(err.str(),
            "cpprof: warning: trace-json: rejected pkg.heads:Hed.forward: no class 'Hed'\n"
            "  hint: check the spelling and that the module is the one defining it (module:Class.method)\n");
}

TEST(FunctionsTraceWorkflow, StrictRefusesAnyRejectionAndNamesTheCommand) {
  FakeHelper helper(kAnswer);
  std::ostringstream err;
  FunctionsTraceJob job = Job();
  job.strict = true;
  job.command = "profile: functions trace";
  auto t = MakeFunctionsTrace(job, helper, runner::Environment({}), err);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), ExitCode::kCheckFailed);
  EXPECT_EQ(t.status().message(), "1 entry rejected (--strict); nothing written");
  EXPECT_EQ(err.str().rfind("cpprof: error: profile: functions trace: rejected pkg.heads:Hed.forward", 0), 0u)
      << err.str();
}

TEST(FunctionsTraceWorkflow, ReadTraceBaseChecksTheFileAndItsSize) {
  auto base = ReadTraceBase(DataPath("fakes/PythonFunctionsTrace/pytorch.json"));
  ASSERT_TRUE(base.ok()) << base.status().message();
  EXPECT_EQ(base->size(), 6u);
  std::string missing = TempDir() + "/no-such-base.json";
  EXPECT_EQ(ReadTraceBase(missing).status().message(), "cannot read the base file '" + missing + "'");
  // A valid file past the old 16 MiB limit of 'cpprof profile' is read; one byte past
  // kFunctionsTraceMaxBytes is cut there, and so no longer parses.
  std::string big = TempDir() + "/big-base.json";
  auto padded = [](size_t bytes) { return "[" + std::string(bytes - 2, ' ') + "]"; };
  WriteFile(big, padded(size_t{17} << 20));
  auto read = ReadTraceBase(big);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_TRUE(read->empty());
  WriteFile(big, padded(kFunctionsTraceMaxBytes + 1));
  auto too_big = ReadTraceBase(big);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), ExitCode::kBadInput);
  std::filesystem::remove(big);
}

}  // namespace
}  // namespace cpprof::doctor
