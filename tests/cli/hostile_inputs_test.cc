// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Issue 39's reproducers, kept: files users edit or carry between machines (partials, sweep
// states) given damaged on purpose. Each gives one line on stderr that names the file and the
// field, exit 4, nothing on stdout, and never a crash or an "internal error".
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "runner/process_runner.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kBadInput = 4;

void ExpectFieldError(const CliResult& r, const std::string& file, const std::string& field) {
  EXPECT_EQ(r.rc, kBadInput) << r.err;
  EXPECT_EQ(r.out, "") << "nothing on stdout when the input is bad";
  EXPECT_EQ(r.err.rfind("cpprof: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(field), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
}

// Zigzag LEB128 varints in base64, as a partial packs its long arrays.
std::string Packed(const std::vector<int64_t>& values) {
  std::string bytes;
  for (int64_t v : values) {
    uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    while (z >= 0x80) {
      bytes.push_back(static_cast<char>((z & 0x7F) | 0x80));
      z >>= 7;
    }
    bytes.push_back(static_cast<char>(z));
  }
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = uint8_t(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= uint8_t(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) n |= uint8_t(bytes[i + 2]);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back(i + 2 < bytes.size() ? kAlphabet[n & 63] : '=');
  }
  return out;
}

// A real partial (one export of the 1x2 ring), made once.
const json& RingPartial() {
  static const json partial = [] {
    const std::string out = TempDir() + "/hostile-ring.partial.json";
    CliResult r = RunCli({"report", "--partial", RealExport("cpfold-ring-1x2"), "-o", out});
    EXPECT_EQ(r.rc, 0) << r.err;
    return json::parse(ReadFile(out));
  }();
  return partial;
}

// The ring's partial changed by `damage`, written as `name`, merged by the binary.
CliResult MergeDamaged(const std::string& name, const std::function<void(json&)>& damage) {
  json j = RingPartial();
  damage(j);
  const std::string path = TempDir() + "/" + name;
  WriteFile(path, j.dump());
  return RunBinary({"merge", path});
}

constexpr int64_t kMax = INT64_MAX;

TEST(HostilePartial, ParentPastTheTreeIsNamedNotACrash) {
  // Issue 39: SIGSEGV (the parent index was used unchecked).
  CliResult r = MergeDamaged("parent.partial.json", [](json& j) { j["nodes"].back()["parent"] = 100000; });
  ExpectFieldError(r, "parent.partial.json", "field 'nodes[");
  EXPECT_NE(r.err.find("].parent' is 100000"), std::string::npos) << r.err;
}

TEST(HostilePartial, ExtremeVarintsAreRefused) {
  // Issue 39: these overflowed signed integers and were merged with exit 0.
  CliResult hidden = MergeDamaged("hidden.partial.json", [](json& j) {
    j["processes"][0]["sweep"]["hidden_segments"] = {{"count", 2}, {"packed", Packed({kMax, kMax, kMax, 5})}};
  });
  ExpectFieldError(hidden, "hidden.partial.json", "field 'hidden_segments");
  CliResult comm = MergeDamaged("comm.partial.json", [](json& j) {
    j["processes"][0]["sweep"]["comm_ops"]["0"] = {{"count", 2}, {"packed", Packed({kMax, kMax, 0, kMax, 1, 0})}};
  });
  ExpectFieldError(comm, "comm.partial.json", "field 'comm_ops.0");
  CliResult summary = MergeDamaged("summary.partial.json", [](json& j) {
    for (auto& p : j["processes"]) p["summary"]["busy_ns"] = kMax;
  });
  ExpectFieldError(summary, "summary.partial.json", "field 'processes[0].summary.busy_ns' is 9223372036854775807");
  CliResult window = MergeDamaged("window.partial.json", [](json& j) { j["window"]["start_ns"] = INT64_MIN; });
  ExpectFieldError(window, "window.partial.json", "field 'window.start_ns'");
}

TEST(HostilePartial, NegativeTimesAreRefused) {
  // Found by the fuzz target: two ranks at -2^62 summed to INT64_MIN and overflowed the busy spread.
  CliResult busy = MergeDamaged("busy.partial.json", [](json& j) {
    for (auto& p : j["processes"]) p["summary"]["busy_ns"] = -(int64_t{1} << 62);
  });
  ExpectFieldError(busy, "busy.partial.json", "field 'processes[0].summary.busy_ns' is -4611686018427387904, below 0");
  CliResult node =
      MergeDamaged("node-time.partial.json", [](json& j) { j["processes"][1]["sweep"]["nodes"][0]["busy_ns"] = -1; });
  ExpectFieldError(node, "node-time.partial.json", "field 'processes[1].sweep.nodes[0].busy_ns' is -1, below 0");
}

TEST(HostilePartial, WrongTypesAndHugeCountsAreNamedNotInternalErrors) {
  ExpectFieldError(MergeDamaged("schema.partial.json", [](json& j) { j["schema"] = 2; }), "schema.partial.json",
                   "field 'schema' is 2");
  ExpectFieldError(MergeDamaged("abc.partial.json",
                                [](json& j) {
                                  json& comm = j["processes"][0]["sweep"]["comm_ops"];
                                  comm["abc"] = comm["0"];
                                }),
                   "abc.partial.json", "has key 'abc'");
  ExpectFieldError(
      MergeDamaged("count.partial.json",
                   [](json& j) { j["processes"][0]["sweep"]["comm_ops"]["0"]["count"] = uint64_t{1} << 60; }),
      "count.partial.json", "field 'comm_ops.0.count' is 1152921504606846976");
  ExpectFieldError(
      MergeDamaged("node.partial.json",
                   [](json& j) {
                     j["processes"][0]["sweep"]["comm_ops"]["0"] = {{"count", 1}, {"packed", Packed({10, 5, 60000})}};
                   }),
      "node.partial.json", "names node 60000");
  ExpectFieldError(
      MergeDamaged("cls.partial.json", [](json& j) { j["processes"][0]["summary"]["top_kernels"][0]["cls"] = 200; }),
      "cls.partial.json", "top_kernels[0].cls' is 200");
}

TEST(HostilePartial, ManyDistinctNotesAreCapped) {
  CliResult r = MergeDamaged("notes.partial.json", [](json& j) {
    j["notes"] = json::array();
    for (int i = 0; i < 20'000; ++i) j["notes"].push_back("note " + std::to_string(i));
  });
  ExpectFieldError(r, "notes.partial.json", "field 'notes' holds more than a partial's 10000 items");
}

// A sweep state (tests/data/sweep/one-grid.json) changed by `damage`, rendered by the binary.
CliResult RenderDamaged(const std::string& name, const std::function<void(json&)>& damage) {
  const std::string dir = TempDir() + "/hostile-sweep-" + name;
  fs::create_directories(dir);
  json j = json::parse(ReadFile(DataPath("sweep/one-grid.json")));
  damage(j);
  WriteFile(dir + "/sweep.json", j.dump());
  return RunBinary({"sweep", "--render", "--out", dir});
}

TEST(HostileSweepState, DamagedFieldsAreNamed) {
  // Issue 39: "internal error ... this is a bug".
  ExpectFieldError(RenderDamaged("points", [](json& j) { j["points"] = {1}; }), "sweep.json", "field 'points[0]'");
  ExpectFieldError(RenderDamaged("grid", [](json& j) { j["spec"]["grids"] = {"9999999x9999999"}; }), "sweep.json",
                   "field 'spec.grids[0]'");
  ExpectFieldError(RenderDamaged("n", [](json& j) { j["points"][0]["n"] = "big"; }), "sweep.json",
                   "field 'points[0].n'");
  ExpectFieldError(RenderDamaged("cp", [](json& j) { j["points"][0]["cp0"] = int64_t{1} << 40; }), "sweep.json",
                   "field 'points[0].cp0'");
  ExpectFieldError(RenderDamaged("timing", [](json& j) { j["points"][0]["timing"] = "fast"; }), "sweep.json",
                   "field 'points[0].timing'");
  // The 15-minute fuzz run's finding: 1.8e308 passed as a time and overflowed the plots' log axis.
  ExpectFieldError(RenderDamaged("huge", [](json& j) { j["points"][0]["timing"]["median_iter_s"] = 1.7e308; }),
                   "sweep.json", "field 'points[0].timing.median_iter_s'");
  ExpectFieldError(RenderDamaged("huges", [](json& j) { j["points"][0]["timing"]["iter_s"][1] = -1e300; }),
                   "sweep.json", "field 'points[0].timing.iter_s[1]' is not a number within +-1e18");
}

TEST(HostileSweepState, AFifoIsRefusedBeforeItBlocks) {
  const std::string dir = TempDir() + "/hostile-sweep-fifo";
  fs::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir + "/sweep.json").c_str(), 0600), 0);
  CliResult r = RunBinary({"sweep", "--render", "--out", dir});
  EXPECT_EQ(r.rc, kBadInput) << r.err;
  EXPECT_NE(r.err.find("is not a regular file"), std::string::npos) << r.err;
}

// scaffold writes names and paths into Python: each is a checked identifier or a literal from one
// quoting function, and the module is checked to parse before it is written.
class HostileScaffold : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir() + "/hostile-scaffold";
    fs::create_directories(dir_);
    contract_ = dir_ + "/contract.json";
    WriteFile(contract_, R"({"inputs": [{"name": "x", "shape": ["N_token"], "dtype": "float32", "kind": "float"}]})");
  }
  CliResult Scaffold(std::vector<std::string> args) {
    args.insert(args.begin(), {"scaffold", "--model", "m.model:M"});
    return RunBinary(args);
  }
  std::string dir_, contract_;
};

TEST_F(HostileScaffold, AnOutputNameThatIsNotAModuleIsRefusedNotRun) {
  // Issue 39: this -o wrote a module that ran the command when started with --help.
  const std::string evil = dir_ + "/b\" + str(__import__(\"os\").system(\"touch " + dir_ + "/pwned\")) + \".py";
  for (const std::string& out : {evil, dir_ + "/a\"\"\"b.py", dir_ + "/a\nb.py", dir_ + "/class.py", dir_ + "/m.txt"}) {
    CliResult r = Scaffold({"--contract", contract_, "-o", out});
    EXPECT_EQ(r.rc, 2) << out << ": " << r.err;
    EXPECT_NE(r.err.find("must be a Python module name"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << out;
  }
  EXPECT_FALSE(fs::exists(dir_ + "/pwned"));
}

TEST_F(HostileScaffold, PathsWithQuotesAndNewlinesAreLiterals) {
  const std::string odd = dir_ + "/c\"\"\"'\n\\x \u00e9.json";
  fs::copy_file(contract_, odd, fs::copy_options::overwrite_existing);
  const std::string out = dir_ + "/profile_m.py";
  CliResult r = Scaffold({"--contract", odd, "-o", out, "--force"});
  ASSERT_EQ(r.rc, 0) << r.err;
  // The module parses, and its CONTRACT is the path, byte for byte.
  runner::RealProcessRunner runner;
  auto py = runner.Run({"python3", "-I", "-c",
                        "import ast, sys; t = ast.parse(open(sys.argv[1], encoding='utf-8').read()); "
                        "sys.stdout.write([ast.literal_eval(n.value) for n in t.body if isinstance(n, ast.Assign) "
                        "and getattr(n.targets[0], 'id', '') == 'CONTRACT'][0])",
                        out},
                       {});
  ASSERT_TRUE(py.ok()) << py.status().message();
  EXPECT_EQ(py->exit_code, 0) << py->err;
  EXPECT_EQ(py->out, odd);
}

TEST_F(HostileScaffold, BadValuesAreRefusedWithTheirReason) {
  const std::string out = dir_ + "/profile_bad.py";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--gain", "nan"}, "--gain nan: give a finite positive number"},
      {{"--count", "recycles=99999999999999999999"}, "the count is past"},
      {{"--count", "n_token=3"}, "--count n_token: the module has a flag --n-token of its own"},
      {{"--count", "help=1"}, "--count help: the module has a flag --help of its own"},
      {{"--entry", "class"}, "--entry 'class' is not a method name"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--contract", contract_, "-o", out});
    CliResult r = Scaffold(args);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  CliResult folder = Scaffold({"--contract", dir_, "-o", out});
  EXPECT_EQ(folder.rc, 2) << folder.err;
  EXPECT_NE(folder.err.find("is a folder"), std::string::npos) << folder.err;
  EXPECT_FALSE(fs::exists(out));
}

// One run means one run: exports of separate runs, or one capture given twice under two names,
// are refused by every command that reads several exports (unless --force).
class SeveralRuns : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = TempDir() + "/hostile-runs";
    fs::create_directories(dir_ + "/apart");
    fs::create_directories(dir_ + "/twice");
    const std::string real = RealExport("cpfold-ring-1x2");  // a 10.9 s capture
    fs::copy_file(real, dir_ + "/apart/run_a.sqlite", fs::copy_options::overwrite_existing);
    fs::copy_file(real, dir_ + "/apart/run_b.sqlite", fs::copy_options::overwrite_existing);
    // The same command captured again 20 s later.
    Sql(dir_ + "/apart/run_b.sqlite",
        "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + 20000000000");
    fs::copy_file(real, dir_ + "/twice/rep.sqlite", fs::copy_options::overwrite_existing);
    fs::copy_file(real, dir_ + "/twice/rep_copy.sqlite", fs::copy_options::overwrite_existing);
  }
  static void Sql(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  static std::string dir_;
};
std::string SeveralRuns::dir_;

void ExpectRefused(const CliResult& r, const std::string& why) {
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
}

TEST_F(SeveralRuns, CapturesThatDoNotOverlapAreRefusedByEveryCommand) {
  // Issue 39: read as one 4-rank run with a -17 s clock "refinement" and a straggler verdict.
  const std::string a = dir_ + "/apart/run_a.sqlite", b = dir_ + "/apart/run_b.sqlite";
  const std::string why = "are not from one run: their captures do not overlap in time";
  ExpectRefused(RunCli({"report", a, b}), why);
  ExpectRefused(RunCli({"export", a, b, "-o", dir_ + "/apart.trace.json"}), why);
  ExpectRefused(RunCli({"diff", dir_ + "/apart", a}), why);
  ExpectRefused(RunCli({"stats", "--merge", "-r", "cuda_gpu_kern_sum", a, b}), why);
  // The partials of each: merge refuses them too.
  ASSERT_EQ(RunCli({"report", "--partial", a, "-o", dir_ + "/a.partial.json"}).rc, 0);
  ASSERT_EQ(RunCli({"report", "--partial", b, "-o", dir_ + "/b.partial.json"}).rc, 0);
  ExpectRefused(RunCli({"merge", dir_ + "/a.partial.json", dir_ + "/b.partial.json"}), why);
  EXPECT_FALSE(fs::exists(dir_ + "/apart.trace.json"));
  CliResult forced = RunCli({"report", "--force", "--format", "json", a, b});
  EXPECT_EQ(forced.rc, 0) << forced.err;
}

TEST_F(SeveralRuns, OneCaptureUnderTwoNamesIsRefused) {
  // Issue 39: the copy was read as a third and fourth rank.
  const std::string a = dir_ + "/twice/rep.sqlite", b = dir_ + "/twice/rep_copy.sqlite";
  const std::string why = "are the same capture (the same content under two names)";
  ExpectRefused(RunCli({"report", a, b}), why);
  ExpectRefused(RunCli({"export", a, b, "-o", dir_ + "/twice.trace.json"}), why);
  ExpectRefused(RunCli({"stats", "--merge", "-r", "cuda_gpu_kern_sum", a, b}), why);
  ASSERT_EQ(RunCli({"report", "--partial", a, "-o", dir_ + "/p1.partial.json"}).rc, 0);
  ASSERT_EQ(RunCli({"report", "--partial", "--window", "all", b, "-o", dir_ + "/p2.partial.json"}).rc, 0);
  ExpectRefused(RunCli({"merge", dir_ + "/p1.partial.json", dir_ + "/p2.partial.json"}), why);
  EXPECT_EQ(RunCli({"report", "--force", "--format", "json", a, b}).rc, 0);
}

TEST_F(SeveralRuns, AMissingRankIsANote) {
  std::vector<std::string> parts =
      SplitPerProcess(RealExport("cpfold-ring-1x2"), dir_ + "/missing", SplitOptions{{0, 1'000'000}, {}, true, {0, 1}});
  for (const auto& p : parts) {
    Sql(p, "INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', 'WORLD_SIZE=\"4\"')");
  }
  CliResult r = RunCli({"report", "--format", "json", parts[0], parts[1]});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("the launcher's WORLD_SIZE is 4, but the exports hold 2 ranks: the exports of 2 ranks are "
                       "missing"),
            std::string::npos)
      << r.out.substr(0, 2000);
}

}  // namespace
}  // namespace cpprof::testing
