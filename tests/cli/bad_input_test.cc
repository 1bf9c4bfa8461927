// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Black-box tests of the built binary: every kind of bad input gives one line on stderr that
// names the file and says what to do, a documented exit code (docs/exit-codes.md), nothing on
// stdout, and never a crash.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "test_support.h"

namespace cpprof::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kBadInput = 4;
constexpr int kNotAnExport = 5;
constexpr int kUsage = 2;

void ExpectOneLineError(const CliResult& r, int rc, const std::string& needle) {
  EXPECT_EQ(r.rc, rc) << r.err;
  EXPECT_EQ(r.out, "") << "nothing on stdout when the input is bad";
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("cpprof: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

std::string Copy(const std::string& src, const std::string& name) {
  std::string dst = TempDir() + "/" + name;
  fs::copy_file(src, dst, fs::copy_options::overwrite_existing);
  return dst;
}

class BadInput : public ::testing::TestWithParam<const char*> {};  // the subcommand

TEST_P(BadInput, MissingFile) {
  std::string cmd = GetParam();
  std::vector<std::string> args{cmd};
  if (cmd == "stats") args.insert(args.end(), {"--report", "cuda_gpu_kern_sum"});
  args.push_back("/nonexistent/run.sqlite");
  ExpectOneLineError(RunBinary(args), kBadInput,
                     "cannot open '/nonexistent/run.sqlite': No such file or directory. Check the path");
}

std::vector<std::string> Args(const std::string& cmd, const std::string& file) {
  if (cmd == "stats") return {"stats", "--report", "cuda_gpu_kern_sum", file};
  return {cmd, file};
}

TEST_P(BadInput, NotSqlite) {
  std::string p = TempDir() + "/notes.sqlite";
  WriteFile(p, "this is a text file, not a database\n");
  ExpectOneLineError(RunBinary(Args(GetParam(), p)), kBadInput, "'" + p + "' is not an SQLite database");
}

TEST_P(BadInput, NsysRepGivenByMistake) {
  std::string p = TempDir() + "/run.nsys-rep";
  WriteFile(p, std::string("\x01\x02QDSTRM-like binary", 20));
  ExpectOneLineError(RunBinary(Args(GetParam(), p)), kBadInput, "nsys export --type sqlite " + p);
}

TEST_P(BadInput, EmptyFile) {
  std::string p = TempDir() + "/empty.sqlite";
  WriteFile(p, "");
  ExpectOneLineError(RunBinary(Args(GetParam(), p)), kNotAnExport, "is empty (0 bytes)");
}

TEST_P(BadInput, EmptyDatabase) {
  std::string p = MakeDatabase("nothing.sqlite", "CREATE TABLE t(x); DROP TABLE t;");
  ExpectOneLineError(RunBinary(Args(GetParam(), p)), kNotAnExport, "is an SQLite database with no tables");
}

// `report` and `stats` read a directory's exports (a run captured per rank); none here.
TEST_P(BadInput, Directory) {
  std::string dir = TempDir() + "/no-exports";
  fs::create_directories(dir);
  WriteFile(dir + "/run.nsys-rep", "not exported");
  ExpectOneLineError(RunBinary(Args(GetParam(), dir)), kUsage,
                     "holds 1 .nsys-rep report(s) but no .sqlite export: export each with 'nsys export --type "
                     "sqlite REPORT.nsys-rep'");
}

TEST_P(BadInput, TruncatedExport) {
  std::string p = Copy(RealExport("cpwork-trace"), "truncated.sqlite");
  fs::resize_file(p, fs::file_size(p) / 2);
  ExpectOneLineError(RunBinary(Args(GetParam(), p)), kBadInput, "is corrupt or truncated");
}

// The kernel table's root page overwritten with garbage (SQLite has no page checksums, so the
// damage must be where the reader goes to be seen at all).
TEST_P(BadInput, CorruptExport) {
  std::string p = Copy(RealExport("cpwork-trace"), "corrupt.sqlite");
  int64_t root = 0, page_size = 0;
  {
    sqlite3* db = nullptr;
    sqlite3_open_v2(p.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db,
                       "SELECT rootpage, (SELECT page_size FROM pragma_page_size) FROM sqlite_master "
                       "WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'",
                       -1, &st, nullptr);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    root = sqlite3_column_int64(st, 0);
    page_size = sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  ASSERT_GT(root, 1);
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    std::string garbage(static_cast<size_t>(page_size), '\xA5');
    f.seekp(static_cast<std::streamoff>((root - 1) * page_size));
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  ExpectOneLineError(RunBinary(Args(GetParam(), p)), kBadInput, "is corrupt or truncated");
}

INSTANTIATE_TEST_SUITE_P(Commands, BadInput, ::testing::Values("report", "stats"));

TEST(BadInputReport, ForeignTables) {
  std::string p = MakeDatabase("shop.sqlite", "CREATE TABLE users(id); CREATE TABLE orders(id);");
  ExpectOneLineError(RunBinary({"report", p}), kNotAnExport, "not an nsys export (it has tables orders, users");
}

TEST(BadInputReport, NoKernelTable) {
  std::string schema = ReadFile(DataPath("sql/_schema.sql"));
  schema = schema.substr(0, schema.find("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL"));
  std::string p = MakeDatabase("nokernels.sqlite", schema);
  ExpectOneLineError(RunBinary({"report", p}), kNotAnExport,
                     "holds no table 'CUPTI_ACTIVITY_KIND_KERNEL': no CUDA kernel was captured");
}

TEST(BadInputStats, NoKernelTableIsSkippedLikeNsys) {
  std::string schema = ReadFile(DataPath("sql/_schema.sql"));
  schema = schema.substr(0, schema.find("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL"));
  std::string p = MakeDatabase("nokernels2.sqlite", schema);
  CliResult r = RunBinary({"stats", "--report", "cuda_gpu_kern_sum", "--format", "csv", p});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "SKIPPED: " + p + " does not contain CUDA kernel data.\n");
}

TEST(Usage, UnknownCommandSuggests) {
  CliResult r = RunBinary({"reprot", "x.sqlite"});
  EXPECT_EQ(r.rc, kUsage);
  EXPECT_EQ(r.err,
            "cpprof: error: unknown command 'reprot'. Did you mean 'report'? 'cpprof help' lists the commands.\n");
}

TEST(Usage, UnknownReportListsSupported) {
  CliResult r = RunBinary({"stats", "--report", "cuda_gpu_kern", "x.sqlite"});
  EXPECT_EQ(r.rc, kUsage);
  EXPECT_NE(r.err.find("unknown report 'cuda_gpu_kern': neither cpprof nor nsys has a report of that name ('nsys "
                       "stats --help-reports' lists nsys's). cpprof's reports:"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("cuda_gpu_mem_size_sum"), std::string::npos) << r.err;
}

// A report nsys has and cpprof does not (or an nsys argument cpprof does not take): not "unknown",
// but the nsys command to run.
// (A report of cpprof's with an nsys argument, cuda_gpu_kern_sum:base, has its own message:
// StatsOptions.ReportArgumentsAreRefusedWithTheNsysCommand.)
TEST(Usage, NsysOnlyReportNamesNsysStats) {
  for (const char* name : {"cuda_api_trace", "um_sum", "um_sum:rows=5"}) {
    CliResult r = RunBinary({"stats", "--report", name, "x.sqlite"});
    EXPECT_EQ(r.rc, kUsage) << name;
    EXPECT_NE(r.err.find(std::string("report '") + name + "' is an nsys report that cpprof does not implement: run " +
                         "'nsys stats -r " + name + " FILE' for it. cpprof's reports:"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("unknown report"), std::string::npos) << r.err;
  }
}

TEST(Usage, BadFormatAndMissingFile) {
  CliResult r = RunBinary({"report", "--format", "xml", "x.sqlite"});
  EXPECT_EQ(r.rc, kUsage);
  EXPECT_NE(r.err.find("See 'cpprof help report'"), std::string::npos) << r.err;
  r = RunBinary({"report"});
  EXPECT_EQ(r.rc, kUsage);
  EXPECT_NE(r.err.find("report needs an export"), std::string::npos) << r.err;
}

TEST(Usage, ModulesConfigPrintedAndChecked) {
  CliResult r = RunBinary({"report", "--print-modules-config"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("\"groups\""), std::string::npos) << r.out;
  std::string bad = testing::TempDir() + "/bad-modules.json";
  {
    std::ofstream f(bad);
    f << R"({"groups": [{"name": "trunk", "match": "Pairformer("}]})";
  }
  r = RunBinary({"report", "--modules", bad, "x.sqlite"});
  EXPECT_EQ(r.rc, kBadInput);
  EXPECT_NE(r.err.find("group 'trunk' match 'Pairformer(' is not a valid regular expression"), std::string::npos)
      << r.err;
  r = RunBinary({"report", "--modules", testing::TempDir() + "/missing.json", "x.sqlite"});
  EXPECT_EQ(r.rc, kBadInput);
  EXPECT_NE(r.err.find("--print-modules-config > modules.json"), std::string::npos) << r.err;
}

TEST(Usage, BadPatternsNameTheFlagThePatternAndRe2sReason) {
  // Said before the export is opened (x.sqlite does not exist): a usage error, exit 2.
  CliResult r = RunBinary({"report", "--iteration-range", "step(", "x.sqlite"});
  EXPECT_EQ(r.rc, kUsage);
  EXPECT_NE(r.err.find("--iteration-range 'step(' is not a valid regular expression (RE2: missing ): step()"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("https://github.com/google/re2/wiki/Syntax"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  r = RunBinary({"report", "--exclude-ranges", "(?<=warm)up", "x.sqlite"});
  EXPECT_EQ(r.rc, kUsage);
  EXPECT_NE(r.err.find("--exclude-ranges '(?<=warm)up' is not a valid regular expression (RE2: invalid perl "
                       "operator: (?<"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("no lookarounds or backreferences"), std::string::npos) << r.err;
  r = RunBinary({"trace-json", "--discover", "pkg", "--match", "Trunk|(", "--no-base"});
  EXPECT_EQ(r.rc, kUsage);
  EXPECT_NE(r.err.find("--match 'Trunk|(' is not a valid regular expression (RE2: missing ): Trunk|()"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("searched in class names"), std::string::npos) << r.err;
  // A pattern RE2 accepts whatever the cost of backtracking elsewhere: no usage error.
  r = RunBinary({"report", "--iteration-range", "(a+)+$", "x.sqlite"});
  EXPECT_EQ(r.rc, kBadInput) << r.err;
}

TEST(Usage, HelpSaysThePatternSyntaxIsRe2s) {
  for (const char* cmd : {"report", "profile", "trace-json"}) {
    CliResult r = RunBinary({"help", cmd});
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("https://github.com/google/re2/wiki/Syntax"), std::string::npos) << cmd << r.out;
  }
}

TEST(Usage, HelpShowsExamples) {
  CliResult r = RunBinary({"help", "report"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos);
  EXPECT_NE(r.out.find("cpprof report run.sqlite --format json"), std::string::npos);
  r = RunBinary({});
  EXPECT_EQ(r.rc, kUsage);
  EXPECT_NE(r.err.find("commands:"), std::string::npos);
}

TEST(Output, ClosedStdoutIsAnError) {
  // `cpprof report ... | head -0`: a closed pipe must not pass for success.
  std::string cmd =
      std::string("'") + CPPROF_BINARY + "' report '" + RealExport("cpwork-trace") + "' > /dev/full 2>/dev/null";
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 1);
}

}  // namespace
}  // namespace cpprof::testing
