// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/capture_reader.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace cpprof::nsys {
namespace {

using testing::DataPath;
using testing::MakeDatabase;
using testing::ReadFile;
using testing::RealExport;

using testing::SqlFixture;

model::CaptureInfo Read(const std::string& path) {
  auto db = Database::Open(path);
  EXPECT_TRUE(db.ok()) << db.status().message();
  auto info = ReadCaptureInfo(*db);
  EXPECT_TRUE(info.ok()) << info.status().message();
  return *info;
}

TEST(Base64, DecodesPaddedUnpaddedAndWrapped) {
  EXPECT_EQ(Base64Decode(""), "");
  EXPECT_EQ(Base64Decode("TQ=="), "M");
  EXPECT_EQ(Base64Decode("TWE="), "Ma");
  EXPECT_EQ(Base64Decode("TWFu"), "Man");
  EXPECT_EQ(Base64Decode("TQ"), "M");  // padding left out
  EXPECT_EQ(Base64Decode("TWE"), "Ma");
  EXPECT_EQ(Base64Decode("TW\nFu\r\n TQ=="), "ManM");  // wrapped lines
  EXPECT_EQ(Base64Decode("+/+/"), std::string("\xfb\xff\xbf", 3));
  EXPECT_EQ(Base64Decode("AA=="), std::string(1, '\0'));  // binary zeros survive
  EXPECT_EQ(Base64Decode("W3siZG9tYWluIjoiYSJ9XQ=="), R"([{"domain":"a"}])");
}

TEST(Base64, RejectsWhatIsNotBase64) {
  EXPECT_EQ(Base64Decode("TQ=a"), std::nullopt);  // data after padding
  EXPECT_EQ(Base64Decode("T"), std::nullopt);     // 6 bits cannot make a byte
  EXPECT_EQ(Base64Decode("TWFuT"), std::nullopt);
  EXPECT_EQ(Base64Decode("TW-u"), std::nullopt);  // URL-safe alphabet is not nsys's
  EXPECT_EQ(Base64Decode("TW_u"), std::nullopt);
  EXPECT_EQ(Base64Decode("TWE=="), std::nullopt);  // too much padding
  EXPECT_EQ(Base64Decode("TQ==="), std::nullopt);
  EXPECT_EQ(Base64Decode("T\x80QQ"), std::nullopt);
}

TEST(ElidePaths, KeepsBasenamesAndCuts) {
  EXPECT_EQ(ElidePaths("Loaded CUPTI library: /opt/nvidia/x/libcupti.so.13.0"),
            "Loaded CUPTI library: .../libcupti.so.13.0");
  EXPECT_EQ(ElidePaths("see /tmp/a/b/pid_1_stdout.log and stderr.log."), "see .../pid_1_stdout.log and stderr.log.");
  EXPECT_EQ(ElidePaths("file (/a/b/c.txt) ends."), "file (.../c.txt) ends.");
  EXPECT_EQ(ElidePaths("rate 1/2 and /x"), "rate 1/2 and /x");  // a fraction, a root-level name
  EXPECT_EQ(ElidePaths("abcdefghij", 8), "abcde...");
  EXPECT_EQ(ElidePaths("abcdefgh", 8), "abcdefgh");
}

TEST(NotableInfo, KeepsWhatMattersDropsRoutine) {
  EXPECT_TRUE(IsNotableInfoMessage("CPU sampling is disabled because perf_event_paranoid is 4."));
  EXPECT_TRUE(IsNotableInfoMessage("Some events were dropped."));
  EXPECT_TRUE(IsNotableInfoMessage("Function foo.Bar.baz was skipped: module not found"));
  EXPECT_TRUE(IsNotableInfoMessage("Backtraces will not be collected"));
  EXPECT_TRUE(IsNotableInfoMessage("Unable to open the file"));
  EXPECT_FALSE(IsNotableInfoMessage("NVTX injection initialized successfully."));
  EXPECT_FALSE(IsNotableInfoMessage("Number of CUPTI events produced: \t96018, CUPTI buffers: 50."));
  EXPECT_FALSE(
      IsNotableInfoMessage("Buffers holding CUDA trace data will be flushed on CudaProfilerStop() call. "
                           "See --flush-on-cudaprofilerstop to control this behavior."));
  EXPECT_FALSE(
      IsNotableInfoMessage("Process was launched by the profiler, see /tmp/x/pid_1_stdout.log and "
                           "stderr.log for program output"));
  EXPECT_FALSE(IsNotableInfoMessage("Notation annotation notify"));  // "not" only as a word
}

TEST(CaptureReader, FixtureByHand) {
  model::CaptureInfo c = Read(SqlFixture("capture_memory"));
  EXPECT_TRUE(c.recorded);
  EXPECT_EQ(c.traced, (std::vector<std::string>{"Cuda", "NvtxEvents", "OSRuntime"}));
  EXPECT_EQ(c.command, "python");
  EXPECT_EQ(c.arguments, (std::vector<std::string>{"-m", "pkg.entry", "two", "three", "four", "five", "six", "seven",
                                                   "eight", "nine", "ten"}));
  EXPECT_EQ(c.working_dir, "/home/u/work");
  using Env = std::vector<std::pair<std::string, std::string>>;
  // Values without the quotes nsys writes around them (`NCCL_NVLS_ENABLE="0"`): renderers quote once.
  EXPECT_EQ(c.env, (Env{{"CUDA_VISIBLE_DEVICES", "0,1"},
                        {"NCCL_DEBUG", "INFO"},
                        {"NCCL_NVLS_ENABLE", "0"},
                        {"NCCL_SOCKET_NTOKEN", "a=b"},
                        {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"},
                        {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"}}));
  EXPECT_TRUE(c.gpu_memory_usage);
  EXPECT_EQ(c.cuda_backtrace_kinds, (std::vector<std::string>{"kernel", "memory"}));
  EXPECT_FALSE(c.python_backtraces);
  EXPECT_TRUE(c.cpu_sampling);
  EXPECT_EQ(c.sampling_mode, "ProcessTree");
  EXPECT_EQ(c.sampling_period, 1000000);
  EXPECT_TRUE(c.sampling_backtraces);
  EXPECT_TRUE(c.osrt_backtraces);
  EXPECT_EQ(c.osrt_backtrace_threshold_ns, 80000);
  EXPECT_EQ(c.cuda_graph_trace_mode, "Graph");
  EXPECT_EQ(c.run_duration_ms, 1234);
  EXPECT_EQ(c.functions_trace_path, "/home/u/trace.json");
  EXPECT_EQ(c.functions_trace_error, "");
  ASSERT_EQ(c.functions_trace.size(), 3u);
  EXPECT_EQ(c.functions_trace[0].domain, "d");
  EXPECT_EQ(c.functions_trace[0].module, "pkg.entry");
  EXPECT_EQ(c.functions_trace[0].functions, std::vector<std::string>{"Blk.forward"});
  EXPECT_EQ(c.functions_trace[1].functions, (std::vector<std::string>{"A.forward", "B.forward"}));
  EXPECT_EQ(c.functions_trace[2].functions, std::vector<std::string>{"helper"});
  EXPECT_TRUE(c.pytorch_autograd);
  EXPECT_EQ(c.injections, (std::vector<std::string>{"PyTorch autograd_nvtx", "Python Functions Trace"}));
  EXPECT_EQ(c.reconstructed_flags,
            "--trace cuda,nvtx,osrt --cuda-memory-usage true --cudabacktrace kernel,memory --pytorch autograd-nvtx "
            "--python-functions-trace /home/u/trace.json --sample process-tree --cuda-graph-trace graph");
  ASSERT_EQ(c.messages.size(), 3u);
  EXPECT_EQ(c.messages[0].severity, "Warning");
  EXPECT_EQ(c.messages[0].source, "Analysis");
  EXPECT_EQ(c.messages[0].text, "No NVTX events collected. Does the process use NVTX?");
  EXPECT_EQ(c.messages[1].severity, "Info");
  EXPECT_EQ(c.messages[1].source, "Daemon");
  EXPECT_EQ(c.messages[1].text, "CPU sampling is disabled because perf_event_paranoid is 4.");
  EXPECT_EQ(c.messages[2].severity, "Error");
  EXPECT_EQ(c.messages[2].count, 2);
  EXPECT_EQ(c.messages[2].text, "Failed to load .../libfoo.so: not found");
  EXPECT_EQ(c.messages[2].raw_text, "Failed to load /opt/x/lib/libfoo.so: not found");
}

TEST(CaptureReader, NoSecretLeaves) {
  model::CaptureInfo c = Read(SqlFixture("capture_memory"));
  for (const auto& [k, v] : c.env) {
    EXPECT_NE(k, "SECRET_TOKEN");
    EXPECT_NE(k, "PATH");
    EXPECT_EQ(v.find("hunter2"), std::string::npos);
  }
  for (const auto& a : c.arguments) EXPECT_EQ(a.find("hunter2"), std::string::npos);
  EXPECT_EQ(c.reconstructed_flags.find("hunter2"), std::string::npos);
}

TEST(CaptureReader, SyntheticExportIsUnrecordedNotAnError) {
  model::CaptureInfo c = Read(SqlFixture("overlapping_streams"));
  EXPECT_FALSE(c.recorded);
  EXPECT_TRUE(c.traced.empty());
  EXPECT_TRUE(c.messages.empty());
  EXPECT_EQ(c.reconstructed_flags, "");
}

// Issue 19 row 5: an ARGUMENT_ index past int64 (or not a number) was read with overflow.
TEST(CaptureReader, DamagedArgumentIndexesKeepTheirRowsAfterTheOthers) {
  std::string sql = ReadFile(DataPath("sql/_schema.sql")) +
                    "CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT);"
                    "INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:COMMAND', 'python'),"
                    " ('PROCESS_0:ARGUMENT_99999999999999999999999', 'huge'), ('PROCESS_0:ARGUMENT_1', 'b'),"
                    " ('PROCESS_0:ARGUMENT_x', 'nan'), ('PROCESS_0:ARGUMENT_0', 'a'),"
                    " ('PROCESS_0:ARGUMENT_-3', 'neg'), ('RUN_DURATION_MS', '123456789012345678901234');";
  model::CaptureInfo c = Read(MakeDatabase("args.sqlite", sql));
  EXPECT_EQ(c.arguments, (std::vector<std::string>{"neg", "a", "b", "huge", "nan"}));
  EXPECT_EQ(c.run_duration_ms, 0) << "out of range: unknown";
}

TEST(CaptureReader, BadEncodedJsonIsSaidNotFatal) {
  std::string sql =
      ReadFile(DataPath("sql/_schema.sql")) +
      "CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT);"
      "INSERT INTO META_DATA_CAPTURE VALUES ('PYTHON_NVTX_ANNOTATIONS_OPTIONS:ENCODED_JSON', 'not*base64'),"
      " ('PROCESS_0:COMMAND', 'python');";
  model::CaptureInfo c = Read(MakeDatabase("bad_json.sqlite", sql));
  EXPECT_TRUE(c.recorded);
  EXPECT_EQ(c.functions_trace_error, "the recorded functions-trace JSON is not valid base64");
  sql = ReadFile(DataPath("sql/_schema.sql")) +
        "CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT);"
        "INSERT INTO META_DATA_CAPTURE VALUES ('PYTHON_NVTX_ANNOTATIONS_OPTIONS:ENCODED_JSON', 'eyJhIjox');";  // {"a":1
  c = Read(MakeDatabase("bad_json2.sqlite", sql));
  EXPECT_EQ(c.functions_trace_error, "the recorded functions-trace JSON is not a JSON list");
}

TEST(CaptureReaderReal, CpworkFull) {
  model::CaptureInfo c = Read(RealExport("cpwork-full"));
  EXPECT_TRUE(c.recorded);
  EXPECT_EQ(c.traced, (std::vector<std::string>{"Cuda", "NvtxEvents", "OSRuntime"}));
  EXPECT_EQ(c.command, "torchrun");
  EXPECT_EQ(c.arguments, (std::vector<std::string>{"--standalone", "--nnodes=1", "--nproc_per_node=2", "-m",
                                                   "cpwork.run", "--iters", "3"}));
  EXPECT_TRUE(c.gpu_memory_usage);
  EXPECT_EQ(c.cuda_backtrace_kinds.size(), 4u);
  EXPECT_TRUE(c.python_backtraces);
  EXPECT_TRUE(c.pytorch_autograd);
  EXPECT_TRUE(c.cpu_sampling);
  EXPECT_EQ(c.functions_trace_path, "/tmp/cpprof-exports/cpwork-trace.json");
  ASSERT_FALSE(c.functions_trace.empty());
  EXPECT_EQ(c.functions_trace.front().domain, "PyTorch");
  EXPECT_EQ(c.functions_trace.back().domain, "cpwork");
  EXPECT_EQ(c.functions_trace.back().module, "cpwork.layers");
  EXPECT_EQ(c.functions_trace.back().functions.front(), "TinyFold.forward");
  EXPECT_EQ(c.reconstructed_flags,
            "--trace cuda,nvtx,osrt --cuda-memory-usage true --cudabacktrace all --python-backtrace cuda "
            "--pytorch autograd-nvtx --python-functions-trace /tmp/cpprof-exports/cpwork-trace.json "
            "--sample process-tree --cuda-graph-trace graph");
  EXPECT_TRUE(c.messages.empty()) << c.messages.front().raw_text;  // only routine messages in this one
  // Only the allow-listed variables: this export's environment holds dozens of others.
  ASSERT_FALSE(c.env.empty());
  for (const auto& [k, v] : c.env) {
    EXPECT_TRUE(k.rfind("NCCL_", 0) == 0 || k.rfind("TORCH_", 0) == 0 || k == "PYTORCH_CUDA_ALLOC_CONF" ||
                k == "CUDA_VISIBLE_DEVICES")
        << k;
    EXPECT_EQ(v.find('"'), std::string::npos) << k << "=" << v << ": quoted once by the renderers, not here";
  }
}

TEST(CaptureReaderReal, CpworkTraceAndInlineMain) {
  model::CaptureInfo t = Read(RealExport("cpwork-trace"));
  EXPECT_EQ(t.reconstructed_flags, "--trace cuda,nvtx --sample process-tree --cuda-graph-trace graph");
  EXPECT_FALSE(t.pytorch_autograd);
  EXPECT_TRUE(t.functions_trace.empty());
  ASSERT_EQ(t.messages.size(), 1u);
  EXPECT_EQ(t.messages[0].severity, "Warning");
  EXPECT_EQ(t.messages[0].text, "No NVTX events collected. Does the process use NVTX?");

  model::CaptureInfo m = Read(RealExport("inline-main"));
  ASSERT_EQ(m.functions_trace.size(), 1u);
  EXPECT_EQ(m.functions_trace[0].domain, "inline");
  EXPECT_EQ(m.functions_trace[0].module, "cpwork.inline_main");
  EXPECT_EQ(m.functions_trace[0].functions, std::vector<std::string>{"InlineBlock.forward"});
  EXPECT_FALSE(m.gpu_memory_usage);
}

TEST(CaptureReaderReal, EveryExportReadsAndKeepsNoHostPathInTexts) {
  for (const auto& name : testing::RealExportNames()) {
    model::CaptureInfo c = Read(RealExport(name));
    EXPECT_TRUE(c.recorded) << name;
    EXPECT_FALSE(c.command.empty()) << name;
    for (const auto& m : c.messages) EXPECT_EQ(m.text.find("/tmp/"), std::string::npos) << name << ": " << m.text;
  }
}

}  // namespace
}  // namespace cpprof::nsys
