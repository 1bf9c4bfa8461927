// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Terminal manners of the command line: a mistyped flag of any command gets "did you mean" (as a
// mistyped command does), and output meant for files is refused on a terminal with a hint.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <sstream>

#include "cli/cli.h"
#include "cli/command.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

struct Typo {
  const char* command;
  const char* typed;
  const char* meant;
};

class FlagTypo : public ::testing::TestWithParam<Typo> {};

TEST_P(FlagTypo, GetsTheClosestFlag) {
  const Typo& t = GetParam();
  CliResult r = RunCli({t.command, t.typed, "x.sqlite"});
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, std::string("cpprof: error: ") + t.command + ": unknown flag '" + t.typed + "'. Did you mean '" +
                       t.meant + "'? See 'cpprof help " + t.command + "'.\n");
}

INSTANTIATE_TEST_SUITE_P(
    EveryCommand, FlagTypo,
    ::testing::Values(Typo{"report", "--fromat", "--format"}, Typo{"stats", "--timeunti", "--timeunit"},
                      Typo{"stats", "--time", "--timeunit"}, Typo{"export", "--flow", "--flows"},
                      Typo{"doctor", "--jsno", "--json"}, Typo{"trace-json", "--fucntion", "--function"},
                      Typo{"profile", "--dry-rn", "--dry-run"}, Typo{"diff", "--sanit", "--sanity"}),
    [](const ::testing::TestParamInfo<Typo>& p) {
      std::string n = std::string(p.param.command) + "_" + p.param.typed;
      for (char& c : n) {
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return n;
    });

TEST(FlagTypo, EveryCommandNamesAnUnknownFlagWithoutAWildGuess) {
  for (const auto& def : cli::Commands()) {
    CliResult r = RunCli({def.name, "--zzzzzzzzzz", "x.sqlite"});
    EXPECT_EQ(r.rc, 2) << def.name;
    EXPECT_EQ(r.err, std::string("cpprof: error: ") + def.name + ": unknown flag '--zzzzzzzzzz'. See 'cpprof help " +
                         def.name + "'.\n");
  }
  // A known flag with a bad value keeps CLI11's message.
  CliResult r = RunCli({"report", "--format", "xml", "x.sqlite"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("xml not in {text,md,json,csv,html}"), std::string::npos) << r.err;
  // Flags after -- belong to the workload.
  CliResult p = RunCli({"profile", "--dry-run", "--", "-m", "pkg.entry", "--fromat"});
  EXPECT_EQ(p.err.find("unknown flag"), std::string::npos) << p.err;
}

CliResult RunOnTerminal(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliResult r;
  r.rc = cli::Run(args, out, err, /*out_is_terminal=*/true);
  r.out = out.str();
  r.err = err.str();
  return r;
}

TEST(Terminal, ChromeTraceRefusedWithTheHint) {
  std::string db = RealExport("cpwork-train");
  CliResult r = RunOnTerminal({"export", db});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "cpprof: error: export: a Chrome trace is megabytes of JSON, not for a terminal: give -o OUT.json "
            "(or redirect stdout: cpprof export " +
                db + " > OUT.json)\n");
  std::string path = TempDir() + "/terminal-trace.json";
  CliResult to_file = RunOnTerminal({"export", db, "-o", path});
  EXPECT_EQ(to_file.rc, 0) << to_file.err;
}

TEST(Terminal, MultiMegabyteOutputRefusedSmallOutputPrinted) {
  std::string db = RealExport("cpfold-train-1x2");
  CliResult big = RunOnTerminal({"stats", "-r", "nvtx_sum", "-f", "csv", db});
  EXPECT_EQ(big.rc, 2);
  EXPECT_EQ(big.out, "");
  EXPECT_NE(big.err.find("cpprof: error: stats: the output is "), std::string::npos) << big.err;
  EXPECT_NE(big.err.find(" MiB, too much for a terminal; nothing was printed. Write it to a file with -o FILE (or "
                         "redirect stdout: cpprof stats ... > FILE).\n"),
            std::string::npos)
      << big.err;
  CliResult piped = RunCli({"stats", "-r", "nvtx_sum", "-f", "csv", db});
  EXPECT_EQ(piped.rc, 0);
  EXPECT_GT(piped.out.size(), size_t{4} << 20);
  CliResult small = RunOnTerminal({"stats", "-r", "cuda_gpu_kern_sum", db});
  EXPECT_EQ(small.rc, 0) << small.err;
  EXPECT_NE(small.out.find("Total Time (ns)"), std::string::npos);
}

// --version names the commit the binary was built from (benchmark logs and bug reports quote it).
TEST(Version, NamesTheCommit) {
  CliResult r = RunBinary({"--version"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_TRUE(RE2::FullMatch(r.out, R"(cpprof [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{7,}(\+changes)?|unknown)\)\n)"))
      << r.out;
}

}  // namespace
}  // namespace cpprof::testing
