// `cpprof stats` options that follow nsys: the default report set, --report lists, --timeunit,
// -o PREFIX (one file per report, never over an existing file without --force), and an
// .nsys-rep given by mistake (exported beside it with a fake nsys that answers as the real one).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include "render/csv.h"
#include "render/stats_units.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

namespace fs = std::filesystem;

const char* kExport = "cpwork-train";
// nsys's default set (nsys stats --help), in its order, as far as cpprof implements it.
const std::vector<std::string> kDefaultSet = {
    "nvtx_sum", "osrt_sum", "cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"};

std::string Golden(const std::string& name, const std::string& report) {
  return ReadFileOrXz(DataPath("real/" + name + "/" + name + "_" + report + ".csv"));
}

// A fresh folder under the test's scratch directory.
std::string FreshDir(const std::string& name) {
  std::string d = TempDir() + "/" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(StatsOptions, NoReportRunsTheDefaultSetInNsysOrder) {
  CliResult all = RunCli({"stats", "--format", "csv", RealExport(kExport)});
  ASSERT_EQ(all.rc, 0) << all.err;
  // The export has no OS runtime trace: osrt_sum is SKIPPED, as nsys says it.
  EXPECT_NE(all.err.find("SKIPPED: " + RealExport(kExport) + " does not contain OS Runtime trace data.\n"),
            std::string::npos)
      << all.err;
  EXPECT_EQ(all.out.find("(osrt_sum):"), std::string::npos);
  for (const auto& r : kDefaultSet) {
    CliResult one = RunCli({"stats", "--report", r, "--format", "csv", RealExport(kExport)});
    ASSERT_EQ(one.rc, 0) << one.err;
    EXPECT_EQ(one.out, Golden(kExport, r)) << r;
    if (one.out.empty()) continue;
    size_t at = all.out.find("(" + r + "):\n");
    ASSERT_NE(at, std::string::npos) << r;
    EXPECT_EQ(all.out.compare(at + r.size() + 4, one.out.size(), one.out), 0) << r;
  }
  // In nsys's order: each header after the one before.
  size_t last = 0;
  for (const auto& r : kDefaultSet) {
    if (r == "osrt_sum") continue;
    size_t at = all.out.find("(" + r + "):\n");
    EXPECT_GT(at, last) << r;
    last = at;
  }
}

// The rest of nsys's default set (reports cpprof does not implement) is named, with the nsys
// command, only where the export holds their data: here a SYSCALL table added to a copy.
TEST(StatsOptions, DefaultSetNamesNsysOnlyReportsWithData) {
  CliResult plain = RunCli({"stats", "--format", "csv", RealExport(kExport)});
  ASSERT_EQ(plain.rc, 0) << plain.err;
  EXPECT_EQ(plain.err.find("nsys's default set also has"), std::string::npos) << plain.err;

  const std::string copy = FreshDir("stats-syscall") + "/syscall.sqlite";
  fs::copy_file(RealExport(kExport), copy);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(copy.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE SYSCALL (start INTEGER)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  CliResult r = RunCli({"stats", "--format", "csv", copy});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_NE(r.err.find("cpprof: note: stats: nsys's default set also has syscall_sum, which cpprof does not "
                       "implement, and the export holds its data: run 'nsys stats -r syscall_sum " +
                       copy + "'\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("um_sum"), std::string::npos) << r.err;
  // Named reports: no note.
  CliResult named = RunCli({"stats", "-r", "cuda_api_sum", "--format", "csv", copy});
  ASSERT_EQ(named.rc, 0) << named.err;
  EXPECT_EQ(named.err.find("syscall_sum"), std::string::npos) << named.err;
}

TEST(StatsOptions, ReportsRepeatedAndCommaListsAreTheSame) {
  CliResult a = RunCli({"stats", "-r", "cuda_gpu_kern_sum,cuda_gpu_mem_time_sum", "-r", "nvtx_sum", "--format", "csv",
                        RealExport(kExport)});
  CliResult b = RunCli({"stats", "--report", "cuda_gpu_kern_sum", "--report", "cuda_gpu_mem_time_sum", "--report",
                        "nvtx_sum", "--format", "csv", RealExport(kExport)});
  ASSERT_EQ(a.rc, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n"), std::string::npos);
  CliResult bad = RunCli({"stats", "-r", "cuda_gpu_kern_sum,nope", RealExport(kExport)});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("unknown report 'nope'"), std::string::npos) << bad.err;
}

// The ns columns of nsys's own CSV, renamed and shifted: what --timeunit must print. (Against
// nsys's --timeunit output itself: TimeUnitGolden in tests/golden/stats_golden_test.cc.)
std::string ShiftedGolden(const std::string& csv, render::TimeUnit u) {
  std::istringstream in(csv);
  std::string header;
  std::getline(in, header);
  std::string out;
  std::vector<bool> time_col;
  std::string cell;
  std::istringstream hs(header);
  std::vector<std::string> cells;
  while (std::getline(hs, cell, ',')) cells.push_back(cell);
  for (auto& c : cells) {
    bool t = c.size() > 5 && c.compare(c.size() - 5, 5, " (ns)") == 0;
    time_col.push_back(t);
    if (t) c = c.substr(0, c.size() - 5) + " (" + render::TimeUnitSuffix(u) + ")";
  }
  render::AppendCsvRow(cells, out);
  for (std::string line; std::getline(in, line);) {
    // Numeric cells come first and are never quoted; the name (last) may hold commas.
    std::vector<std::string> row;
    size_t pos = 0;
    for (size_t c = 0; c + 1 < time_col.size(); ++c) {
      size_t comma = line.find(',', pos);
      row.push_back(line.substr(pos, comma - pos));
      pos = comma + 1;
    }
    for (size_t c = 0; c < row.size(); ++c) {
      if (time_col[c]) row[c] = render::ShiftDecimal(row[c], render::TimeUnitDigits(u));
    }
    for (const auto& c : row) out += c + ",";
    out += line.substr(pos) + "\n";
  }
  return out;
}

TEST(StatsOptions, TimeunitRenamesAndShiftsTheTimeColumns) {
  for (const char* unit : {"usec", "msec", "sec"}) {
    auto u = *render::ParseTimeUnit(unit);
    for (const char* report : {"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "nvtx_sum"}) {
      CliResult r = RunCli({"stats", "-r", report, "--format", "csv", "--timeunit", unit, RealExport(kExport)});
      ASSERT_EQ(r.rc, 0) << r.err;
      EXPECT_EQ(r.out, ShiftedGolden(Golden(kExport, report), u)) << report << " " << unit;
    }
  }
  CliResult us =
      RunCli({"stats", "-r", "cuda_gpu_kern_sum", "--format", "csv", "--timeunit", "us", RealExport(kExport)});
  EXPECT_EQ(us.out.substr(0, us.out.find('\n')),
            "Time (%),Total Time (us),Instances,Avg (us),Med (us),Min (us),Max (us),StdDev (us),Name");
  // Sizes are not times.
  CliResult size =
      RunCli({"stats", "-r", "cuda_gpu_mem_size_sum", "--format", "csv", "--timeunit", "sec", RealExport(kExport)});
  EXPECT_EQ(size.out, Golden(kExport, "cuda_gpu_mem_size_sum"));
  // nsec is nsys's default: the CSV byte for byte.
  CliResult ns = RunCli({"stats", "-r", "nvtx_sum", "--format", "csv", "--timeunit", "nsec", RealExport(kExport)});
  EXPECT_EQ(ns.out, Golden(kExport, "nvtx_sum"));
  CliResult bad = RunCli({"stats", "--timeunit", "m", RealExport(kExport)});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--timeunit 'm' is not a unit (or is ambiguous). Use nsec, usec, msec or sec."),
            std::string::npos)
      << bad.err;
}

TEST(StatsOptions, OutputPrefixWritesOneFilePerReportAndKeepsExistingFiles) {
  std::string dir = FreshDir("stats-o");
  CliResult r = RunCli({"stats", RealExport(kExport), "-o", dir + "/run"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");
  std::vector<std::string> want;
  for (const auto& rep : kDefaultSet) want.push_back("run_" + rep + ".csv");
  std::sort(want.begin(), want.end());
  EXPECT_EQ(Files(dir), want);
  for (const auto& rep : kDefaultSet) EXPECT_EQ(ReadFile(dir + "/run_" + rep + ".csv"), Golden(kExport, rep)) << rep;

  // Again: refused before any report runs, naming the first file and --force; the files stay.
  WriteFile(dir + "/run_nvtx_sum.csv", "mine\n");
  CliResult again = RunCli({"stats", RealExport(kExport), "-o", dir + "/run"});
  EXPECT_EQ(again.rc, 2);
  EXPECT_NE(again.err.find("'" + dir + "/run_nvtx_sum.csv' exists; give --force to replace it"), std::string::npos)
      << again.err;
  EXPECT_EQ(ReadFile(dir + "/run_nvtx_sum.csv"), "mine\n");
  CliResult forced = RunCli({"stats", RealExport(kExport), "-o", dir + "/run", "--force", "-r", "nvtx_sum"});
  ASSERT_EQ(forced.rc, 0) << forced.err;
  EXPECT_EQ(ReadFile(dir + "/run_nvtx_sum.csv"), Golden(kExport, "nvtx_sum"));

  // --format picks the extension; --timeunit applies to files too.
  CliResult json = RunCli(
      {"stats", RealExport(kExport), "-o", dir + "/j", "-r", "cuda_gpu_kern_sum", "-f", "json", "--timeunit", "msec"});
  ASSERT_EQ(json.rc, 0) << json.err;
  EXPECT_NE(ReadFile(dir + "/j_cuda_gpu_kern_sum.json").find("\"Total Time (ms)\": "), std::string::npos);

  // '-' is the console.
  CliResult console = RunCli({"stats", RealExport(kExport), "-o", "-", "-r", "cuda_gpu_kern_sum"});
  ASSERT_EQ(console.rc, 0) << console.err;
  EXPECT_NE(console.out.find("Total Time (ns)"), std::string::npos);
}

TEST(StatsOptions, OutputDotIsTheExportsName) {
  std::string dir = FreshDir("stats-o-dot");
  fs::copy_file(RealExport(kExport), dir + "/mine.sqlite");
  CliResult r = RunCli({"stats", dir + "/mine.sqlite", "-o", ".", "-r", "cuda_gpu_kern_sum"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(ReadFile(dir + "/mine_cuda_gpu_kern_sum.csv"), Golden(kExport, "cuda_gpu_kern_sum"));
}

// Exports of one file name in two folders: each set of files named by its folder too (they wrote
// PREFIX_x_<report>.csv twice: the second failed on the first's file, or replaced it with --force).
TEST(StatsOptions, SameNamedExportsInTwoFoldersGetFilesOfTheirOwn) {
  std::string dir = FreshDir("stats-o-same-name");
  fs::create_directories(dir + "/n1");
  fs::create_directories(dir + "/n2");
  fs::copy_file(RealExport(kExport), dir + "/n1/x.sqlite");
  fs::copy_file(RealExport("inline-main"), dir + "/n2/x.sqlite");
  CliResult r =
      RunCli({"stats", dir + "/n1/x.sqlite", dir + "/n2/x.sqlite", "-o", dir + "/m", "-r", "cuda_gpu_kern_sum"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(ReadFile(dir + "/m_n1_x_cuda_gpu_kern_sum.csv"), Golden(kExport, "cuda_gpu_kern_sum"));
  EXPECT_EQ(ReadFile(dir + "/m_n2_x_cuda_gpu_kern_sum.csv"), Golden("inline-main", "cuda_gpu_kern_sum"));
}

// A failing export among several: no file at all, not the reports of the exports before it.
TEST(StatsOptions, OutputFilesAreAllOrNothing) {
  std::string dir = FreshDir("stats-o-all-or-nothing");
  WriteFile(dir + "/bad.sqlite", "not a database");
  CliResult r =
      RunCli({"stats", RealExport(kExport), dir + "/bad.sqlite", "-o", dir + "/m", "-r", "cuda_gpu_kern_sum,nvtx_sum"});
  EXPECT_EQ(r.rc, 4) << r.err;
  EXPECT_EQ(Files(dir), std::vector<std::string>{"bad.sqlite"});
}

// A FIFO at an -o path with nothing reading it is refused, not waited on forever.
TEST(StatsOptions, AFifoThatNothingReadsIsRefused) {
  std::string dir = FreshDir("stats-o-fifo");
  ASSERT_EQ(::mkfifo((dir + "/m_cuda_gpu_kern_sum.csv").c_str(), 0600), 0);
  CliResult r = RunCli({"stats", RealExport(kExport), "-o", dir + "/m", "-r", "cuda_gpu_kern_sum"});
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("FIFO that nothing reads"), std::string::npos) << r.err;
}

TEST(StatsOptions, ReportWithoutDataLeavesAnEmptyFileAsNsys) {
  // inline-main has no memory ops in some captures; osrt-like SKIPPED cases come from a bare export.
  std::string dir = FreshDir("stats-o-empty");
  std::string db = MakeDatabase("stats-o-empty.sqlite", "CREATE TABLE StringIds (id INTEGER, value TEXT);");
  CliResult r = RunCli({"stats", db, "-o", dir + "/e", "-r", "cuda_gpu_kern_sum"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("SKIPPED: "), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(dir + "/e_cuda_gpu_kern_sum.csv"), "");
}

// ---- an .nsys-rep given by mistake -----------------------------------------------------------

// PATH holds only the fake nsys (a link to tests/data/fakes/nsys); HOME is empty. Restored after.
class FakeNsysPath {
 public:
  explicit FakeNsysPath(const std::string& dir, bool with_nsys = true) {
    bin_ = dir + "/bin";
    fs::create_directories(bin_);
    if (with_nsys) fs::create_symlink(DataPath("fakes/nsys"), bin_ + "/nsys");
    fs::create_directories(dir + "/home");
    Save("PATH", bin_);
    Save("HOME", dir + "/home");
    Save("FAKE_NSYS_LOG", dir + "/nsys.log");
    ::unsetenv("CONDA_PREFIX");
  }
  ~FakeNsysPath() {
    for (const auto& [k, v] : saved_) {
      if (v) {
        ::setenv(k.c_str(), v->c_str(), 1);
      } else {
        ::unsetenv(k.c_str());
      }
    }
  }

 private:
  void Save(const std::string& k, const std::string& v) {
    const char* old = std::getenv(k.c_str());
    saved_.emplace_back(k, old ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(k.c_str(), v.c_str(), 1);
  }
  std::string bin_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

std::string FakeReport(const std::string& dir) {
  std::string rep = dir + "/run.nsys-rep";
  WriteFile(rep, "FAKE-NSYS-REP " + RealExport(kExport) + "\n");
  return rep;
}

int Lines(const std::string& path) {
  if (!fs::exists(path)) return 0;
  std::string s = ReadFile(path);
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

TEST(StatsNsysRep, ExportedBesideWithTheFoundNsysThenReused) {
  std::string dir = FreshDir("stats-rep");
  std::string rep = FakeReport(dir);
  std::string log = dir + "/nsys.log";
  FakeNsysPath path(dir);
  CliResult r = RunBinary({"stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", rep});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, Golden(kExport, "cuda_gpu_kern_sum"));
  EXPECT_NE(r.err.find("cpprof: stats: exporting '" + rep + "' to '" + dir + "/run.sqlite' with " + dir +
                       "/bin/nsys (NVIDIA Nsight Systems version 2025.3.1.0)"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::exists(dir + "/run.sqlite"));
  std::string calls = ReadFile(log);
  EXPECT_NE(calls.find("export --type sqlite --force-overwrite true --output " + dir + "/.run.sqlite.cpprof-export-"),
            std::string::npos)
      << calls;
  EXPECT_EQ(Files(dir), (std::vector<std::string>{"bin", "home", "nsys.log", "run.nsys-rep", "run.sqlite"}));

  // The export beside it is used, as nsys stats does: nsys is not run again.
  int before = Lines(log);
  CliResult again = RunBinary({"stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", rep});
  ASSERT_EQ(again.rc, 0) << again.err;
  EXPECT_EQ(again.out, r.out);
  EXPECT_NE(again.err.find("reading '" + dir + "/run.sqlite', the export beside '" + rep + "'"), std::string::npos)
      << again.err;
  EXPECT_EQ(Lines(log), before);

  // --force-export exports again, over it.
  WriteFile(dir + "/run.sqlite", "stale");
  CliResult forced = RunBinary({"stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", "--force-export", rep});
  ASSERT_EQ(forced.rc, 0) << forced.err;
  EXPECT_EQ(forced.out, r.out);
  EXPECT_GT(Lines(log), before);
}

// --merge takes .nsys-rep reports as the single case does: each is exported beside itself (or
// the export beside it read), then all are merged into one table per report.
TEST(StatsNsysRep, MergeExportsEachReportThenMerges) {
  std::string dir = FreshDir("stats-rep-merge");
  std::vector<std::string> parts = SplitPerProcess(RealExport("cpfold-ring-1x2"), dir + "/parts");
  ASSERT_EQ(parts.size(), 2u);
  std::vector<std::string> args = {"stats", "--merge", "-r", "cuda_gpu_kern_sum", "-f", "csv"};
  for (size_t i = 0; i < parts.size(); ++i) {
    args.push_back(dir + "/rep." + std::to_string(i) + ".nsys-rep");
    WriteFile(args.back(), "FAKE-NSYS-REP " + parts[i] + "\n");
  }
  FakeNsysPath path(dir);
  CliResult r = RunBinary(args);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, Golden("cpfold-ring-1x2", "cuda_gpu_kern_sum"));
  for (size_t i = 0; i < parts.size(); ++i) {
    EXPECT_NE(r.err.find("cpprof: stats: exporting '" + dir + "/rep." + std::to_string(i) + ".nsys-rep'"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(fs::exists(dir + "/rep." + std::to_string(i) + ".sqlite"));
  }
}

TEST(StatsNsysRep, AFailedExportLeavesNothingBehind) {
  std::string dir = FreshDir("stats-rep-fail");
  std::string rep = FakeReport(dir);
  FakeNsysPath path(dir);
  ::setenv("FAKE_NSYS_FAIL", "1", 1);
  CliResult r = RunBinary({"stats", rep});
  ::unsetenv("FAKE_NSYS_FAIL");
  EXPECT_EQ(r.rc, 6) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("export --type sqlite " + rep + "' exit 1: Failed to open file: " + rep), std::string::npos)
      << r.err;
  EXPECT_EQ(Files(dir), (std::vector<std::string>{"bin", "home", "nsys.log", "run.nsys-rep"}));
}

TEST(StatsNsysRep, WithoutNsysTheHintAsBefore) {
  std::string dir = FreshDir("stats-rep-none");
  std::string rep = FakeReport(dir);
  FakeNsysPath path(dir, /*with_nsys=*/false);
  CliResult r = RunBinary({"stats", rep});
  EXPECT_EQ(r.rc, 4) << r.err;
  EXPECT_NE(r.err.find("is an nsys report, not its SQLite export, and no nsys was found on this machine"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("'nsys export --type sqlite " + rep + "'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/run.sqlite"));
}

}  // namespace
}  // namespace cpprof::testing
