// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The man page and completions come from the command table and each command's CLI11 flags
// (src/cli/cli_docs.cc): every command and every flag is in each, with the choices of flags
// that have them; install_into_destdir checks the installed copies against the binary.
#include <gtest/gtest.h>

#include "cli/command.h"
#include "test_support.h"

namespace cpprof::cli {
namespace {

std::string RoffName(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

TEST(CliDocs, EveryCommandAndFlagIsInTheManPageAndCompletions) {
  std::string man = ManPage(), bash = BashCompletion(), zsh = ZshCompletion();
  int flags = 0;
  for (const auto& def : Commands()) {
    EXPECT_NE(man.find(".SS \"cpprof " + std::string(def.name) + "\""), std::string::npos) << def.name;
    EXPECT_NE(bash.find("    " + std::string(def.name) + ") opts='"), std::string::npos) << def.name;
    EXPECT_NE(zsh.find("    " + std::string(def.name) + ")\n      _arguments"), std::string::npos) << def.name;
    auto cmd = def.make();
    auto app = MakeApp(def, *cmd);
    for (const CLI::Option* o : app->get_options()) {
      for (const auto& l : o->get_lnames()) {
        ++flags;
        EXPECT_NE(man.find("\\fB" + RoffName("--" + l) + "\\fR"), std::string::npos) << def.name << " --" << l;
        EXPECT_NE(bash.find(" --" + l), std::string::npos) << def.name << " --" << l;
        EXPECT_NE(zsh.find("--" + l), std::string::npos) << def.name << " --" << l;
      }
    }
  }
  EXPECT_GT(flags, 50);
  // Choices come from CLI::IsMember.
  EXPECT_NE(bash.find("report:--format) COMPREPLY=($(compgen -W 'text md json csv html' -- \"$cur\")); return;;"),
            std::string::npos);
  EXPECT_NE(zsh.find("'--format[Output format"), std::string::npos);
  EXPECT_NE(man.find(".TH CPPROF 1 \"\" \"cpprof " CPPROF_VERSION "\""), std::string::npos);
}

TEST(CliDocs, HelpPrintsThemAndRefusesAnUnknownShell) {
  auto man = testing::RunCli({"help", "--man"});
  EXPECT_EQ(man.rc, 0);
  EXPECT_EQ(man.out, ManPage());
  auto bash = testing::RunCli({"help", "--completion", "bash"});
  EXPECT_EQ(bash.out, BashCompletion());
  auto fish = testing::RunCli({"help", "--completion", "fish"});
  EXPECT_EQ(fish.rc, 2);
  EXPECT_NE(fish.err.find("--completion takes bash or zsh"), std::string::npos) << fish.err;
}

// The man page shows the flags as --help does: a flag (boolean) with no value after it, an option
// with its value's type or its choices.
TEST(CliDocs, ManPageFlagsTakeNoValue) {
  const std::string man = ManPage();
  EXPECT_EQ(man.find("\\fB\\-\\-wide\\fR \\fI"), std::string::npos) << "--wide takes no value";
  EXPECT_NE(man.find("\\fB\\-\\-wide\\fR\n"), std::string::npos);
  EXPECT_NE(man.find("\\fB\\-\\-force\\fR\n"), std::string::npos);
  EXPECT_NE(man.find("\\fB\\-\\-top\\fR \\fIUINT\\fR\n"), std::string::npos);
  EXPECT_NE(man.find("\\fB\\-\\-format\\fR \\fItext|md|json|csv|html\\fR\n"), std::string::npos);
  EXPECT_EQ(man.find("\\fIVALUE\\fR"), std::string::npos);
}

// The synopsis names each command's file arguments as --help's usage line does.
TEST(CliDocs, ManSynopsisHasTheFileArguments) {
  const std::string man = ManPage();
  EXPECT_NE(man.find(".B cpprof report\n[\\fIoptions\\fR] \\fI[exports...]\\fR\n.br\n"), std::string::npos) << man;
  EXPECT_NE(man.find(".B cpprof diff\n[\\fIoptions\\fR] \\fIa\\fR \\fIb\\fR\n.br\n"), std::string::npos);
  EXPECT_NE(man.find(".B cpprof merge\n[\\fIoptions\\fR] \\fI[partials...]\\fR\n"), std::string::npos);
  EXPECT_NE(man.find(".B cpprof doctor\n[\\fIoptions\\fR]\n"), std::string::npos);
}

// No line of the man page starts with a roff control character by accident (a description or an
// example beginning with '.' or '\'' would be swallowed by man).
TEST(CliDocs, ManPageLinesAreRoff) {
  std::string man = ManPage();
  size_t pos = 0;
  while (pos < man.size()) {
    size_t end = man.find('\n', pos);
    std::string line = man.substr(pos, end - pos);
    if (!line.empty() && (line[0] == '.' || line[0] == '\'')) {
      EXPECT_TRUE(line.rfind(".\\\"", 0) == 0 || (line.size() >= 2 && isupper(static_cast<unsigned char>(line[1]))) ||
                  line == ".br" || line == ".nf" || line == ".fi")
          << line;
    }
    pos = end == std::string::npos ? man.size() : end + 1;
  }
}

}  // namespace
}  // namespace cpprof::cli
