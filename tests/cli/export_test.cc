// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Black-box tests of `cpprof export`: the bad-input errors of report/stats (one line on stderr,
// exit 4 or 5, nothing on stdout, no output file left behind), -o to a file, stdout.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace cpprof::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kUsage = 2;
constexpr int kBadInput = 4;
constexpr int kNotAnExport = 5;

void ExpectOneLineError(const CliResult& r, int rc, const std::string& needle) {
  EXPECT_EQ(r.rc, rc) << r.err;
  EXPECT_EQ(r.out, "") << "nothing on stdout when the input is bad";
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("cpprof: error: export: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

std::string Out(const std::string& name) {
  std::string p = TempDir() + "/export-" + name + ".json";
  fs::remove(p);
  return p;
}

TEST(ExportBadInput, MissingFile) {
  std::string out = Out("missing");
  ExpectOneLineError(RunBinary({"export", "--format", "chrome-trace", "/nonexistent/run.sqlite", "-o", out}), kBadInput,
                     "cannot open '/nonexistent/run.sqlite': No such file or directory. Check the path");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".part"));
}

TEST(ExportBadInput, NotSqlite) {
  std::string p = TempDir() + "/export-notes.sqlite";
  WriteFile(p, "this is a text file, not a database\n");
  ExpectOneLineError(RunBinary({"export", p}), kBadInput, "'" + p + "' is not an SQLite database");
}

TEST(ExportBadInput, NsysRepGivenByMistake) {
  std::string p = TempDir() + "/export-run.nsys-rep";
  WriteFile(p, std::string("\x01\x02QDSTRM-like binary", 20));
  ExpectOneLineError(RunBinary({"export", p}), kBadInput, "nsys export --type sqlite " + p);
}

TEST(ExportBadInput, EmptyFileAndForeignDatabase) {
  std::string p = TempDir() + "/export-empty.sqlite";
  WriteFile(p, "");
  ExpectOneLineError(RunBinary({"export", p}), kNotAnExport, "is empty (0 bytes)");
  std::string shop = MakeDatabase("export-shop.sqlite", "CREATE TABLE users(id); CREATE TABLE orders(id);");
  std::string out = Out("shop");
  ExpectOneLineError(RunBinary({"export", shop, "-o", out}), kNotAnExport, "not an nsys export");
  EXPECT_FALSE(fs::exists(out));
}

TEST(ExportBadInput, NoKernelTable) {
  std::string schema = ReadFile(DataPath("sql/_schema.sql"));
  schema = schema.substr(0, schema.find("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL"));
  std::string p = MakeDatabase("export-nokernels.sqlite", schema);
  ExpectOneLineError(RunBinary({"export", p}), kNotAnExport, "holds no table 'CUPTI_ACTIVITY_KIND_KERNEL'");
}

TEST(ExportUsage, BadFormatRanksAndWindow) {
  std::string db = RealExport("inline-main");
  CliResult r = RunBinary({"export", "--format", "html", db});
  EXPECT_EQ(r.rc, kUsage);
  EXPECT_NE(r.err.find("See 'cpprof help export'"), std::string::npos) << r.err;
  r = RunBinary({"export", db, "--ranks", "7"});
  EXPECT_EQ(r.rc, kUsage);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--ranks 7: the export has ranks 0.."), std::string::npos) << r.err;
  r = RunBinary({"export", db, "--start-ns", "20", "--end-ns", "10"});
  EXPECT_EQ(r.rc, kUsage);
  EXPECT_NE(r.err.find("--end-ns 10 is before --start-ns 20"), std::string::npos) << r.err;
  r = RunBinary({"help", "export"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("cpprof export --format chrome-trace run.sqlite -o run.json"), std::string::npos);
}

TEST(ExportOutput, FileAndStdoutHoldTheSameTrace) {
  std::string db = RealExport("inline-main");
  std::string out = Out("inline");
  CliResult to_file = RunBinary({"export", "--format", "chrome-trace", db, "-o", out});
  ASSERT_EQ(to_file.rc, 0) << to_file.err;
  EXPECT_EQ(to_file.out, "");
  EXPECT_NE(to_file.err.find("Open it at https://ui.perfetto.dev"), std::string::npos) << to_file.err;
  EXPECT_FALSE(fs::exists(out + ".part"));
  std::string file = ReadFile(out);
  EXPECT_TRUE(nlohmann::json::accept(file));
  nlohmann::json j = nlohmann::json::parse(file);
  EXPECT_GT(j["traceEvents"].size(), 100u);

  CliResult to_stdout = RunBinary({"export", db});
  ASSERT_EQ(to_stdout.rc, 0) << to_stdout.err;
  EXPECT_TRUE(to_stdout.out == file) << "stdout and -o differ";
  CliResult dash = RunBinary({"export", db, "-o", "-"});
  EXPECT_TRUE(dash.out == file) << "-o - is stdout";
}

TEST(ExportOutput, UnwritableOutputIsAnError) {
  CliResult r = RunBinary({"export", RealExport("inline-main"), "-o", "/nonexistent/dir/out.json"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(
      r.err.find("cannot write '/nonexistent/dir/out.json': creating a temporary file in '/nonexistent/dir' failed: No "
                 "such file or directory. Check that its folder exists"),
      std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace cpprof::testing
