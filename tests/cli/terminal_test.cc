// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The text readouts on an 80-column line, as a person reads them (issue 36, item 4): `report` and
// `diff` piped with COLUMNS=80 fit it, their tables keep their columns, and module names stay
// distinct.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace cpprof::testing {
namespace {

// COLUMNS set for one test (piped output honours it).
class Columns {
 public:
  explicit Columns(const char* n) {
    if (const char* old = std::getenv("COLUMNS")) old_ = old;
    ::setenv("COLUMNS", n, 1);
  }
  ~Columns() { old_.empty() ? ::unsetenv("COLUMNS") : ::setenv("COLUMNS", old_.c_str(), 1); }

 private:
  std::string old_;
};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// --help of every command (and the overview) fits 80 columns, or COLUMNS when set; the text is
// the same words, wrapped.
TEST(Terminal, HelpFitsTheTerminal) {
  std::vector<std::string> commands = {"report", "merge",    "stats",   "export", "doctor",
                                       "diff",   "scaffold", "profile", "sweep",  "trace-json"};
  for (const char* width : {"80", "120"}) {
    Columns columns(width);
    const size_t n = std::stoul(width);
    size_t longest = 0;
    for (const auto& c : commands) {
      CliResult r = RunCli({c, "--help"});
      ASSERT_EQ(r.rc, 0) << c << r.err;
      for (const auto& line : Lines(r.out)) {
        EXPECT_LE(line.size(), n) << c << ": " << line;
        longest = std::max(longest, line.size());
      }
      EXPECT_NE(r.out.find("Examples:\n  cpprof "), std::string::npos) << c;
    }
    EXPECT_GT(longest, n - 10) << "the width is used, not a fixed one";
    for (const auto& line : Lines(RunCli({"--help"}).out)) EXPECT_LE(line.size(), n) << line;
  }
  // A long example is continued with ' \' (a command a shell takes as one), its comment beside
  // it where it fits.
  Columns columns("80");
  CliResult sweep = RunCli({"sweep", "--help"});
  EXPECT_NE(sweep.out.find("\n      --step 256 --out s   # + largest N\n"), std::string::npos) << sweep.out;
  EXPECT_NE(sweep.out.find(" \\\n      '-m pkg.run --n {n} --cp0 {cp0} --cp1 {cp1} --iters {iters}'\n"),
            std::string::npos)
      << sweep.out;
}

TEST(Terminal, ReportAt80ColumnsFitsAndKeepsItsTablesAligned) {
  Columns columns("80");
  CliResult r = RunCli({"report", RealExport("cpfold-trunk-2x2")});
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  for (const auto& line : lines) EXPECT_LE(line.size(), 80u) << line;
  // The rank table's header with its columns two spaces apart, never collapsed into one.
  EXPECT_NE(r.out.find("\n  rank  device     span     busy  compute-only"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("rank device span"), std::string::npos) << r.out;
  // The module table's names (first column, up to the two spaces before split) are all different:
  // the two `Trian...ng.forward`.
  size_t at = 0;
  while (at < lines.size() && lines[at].rfind("  module ", 0) != 0) ++at;
  ASSERT_LT(at, lines.size()) << r.out;
  std::set<std::string> names;
  size_t rows = 0;
  for (size_t i = at + 2; i < lines.size() && lines[i].rfind("  ---", 0) != 0; ++i) {
    if (lines[i].find("comm by kind") != std::string::npos) continue;
    const std::string name = lines[i].substr(0, lines[i].find("  ", lines[i].find_first_not_of(' ')));
    names.insert(name);
    ++rows;
  }
  EXPECT_GT(rows, 20u);
  EXPECT_EQ(names.size(), rows) << r.out;
}

TEST(Terminal, DiffFitsTheWidthLikeReport) {
  const std::string a = RealExport("cpfold-ring-1x2"), b = RealExport("cpfold-ring-1x2-delay");
  {
    Columns columns("80");
    CliResult r = RunCli({"diff", a, b});
    ASSERT_EQ(r.rc, 0) << r.err;
    for (const auto& line : Lines(r.out)) EXPECT_LE(line.size(), 80u) << line;
  }
  // --wide keeps every line whole, as report's.
  CliResult wide = RunCli({"diff", a, b, "--wide"});
  size_t longest = 0;
  for (const auto& line : Lines(wide.out)) longest = std::max(longest, line.size());
  EXPECT_GT(longest, 120u);
}

}  // namespace
}  // namespace cpprof::testing
