// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace cpprof::render {
namespace {

size_t LongestLine(const std::string& text) {
  size_t longest = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    longest = std::max(longest, end - start);
    start = end + 1;
  }
  return longest;
}

TEST(WrapLines, WrapsLongLinesUnderTheirTextAndKeepsTheRest) {
  EXPECT_EQ(WrapLines("short\n", 20), "short\n");
  EXPECT_EQ(WrapLines("one two three four five\n", 11), "one two\n  three\n  four five\n");
  EXPECT_EQ(WrapLines("  1. alpha beta gamma delta\n", 16), "  1. alpha beta\n     gamma delta\n");
  EXPECT_EQ(WrapLines("  warning: alpha beta gamma\n", 24), "  warning: alpha beta\n           gamma\n");
  // A hanging indent never takes more than half the line.
  EXPECT_EQ(WrapLines("  warning: alpha beta gamma\n", 20), "  warning: alpha\n          beta gamma\n");
  EXPECT_EQ(WrapLines("a verylongwordthatdoesnotfit b\n", 10), "a\n  verylongwordthatdoesnotfit\n  b\n");
  EXPECT_EQ(WrapLines("no newline at the end", 12), "no newline\n  at the end");
  EXPECT_EQ(WrapLines("width zero keeps everything\n", 0), "width zero keeps everything\n");
  // UTF-8 counts by characters: "∩" is one column.
  EXPECT_EQ(WrapLines("a ∩ b ∩ c\n", 9), "a ∩ b ∩ c\n");
}

TextTable ModuleLike() {
  TextTable t({{"module", TextTable::Align::kLeft, 60},
               {"mean"},
               {"comm by kind (mean)", TextTable::Align::kLeft, 0, TextTable::Overflow::kStack}});
  t.AddRow({"TriangleMultiplicationOutgoing.forward", "6.295", "SendRecv 5.800, AllGather 1.000"});
  t.AddRule();
  t.AddRow({"[unattributed]", "0.147", ""});
  return t;
}

TEST(TextTable, UnlimitedWidthPrintsEveryColumnInLine) {
  std::ostringstream out;
  ModuleLike().Print(out, "  ");
  EXPECT_EQ(out.str(),
            "  module                                   mean  comm by kind (mean)\n"
            "  ------------------------------------------------------------------------------\n"
            "  TriangleMultiplicationOutgoing.forward  6.295  SendRecv 5.800, AllGather 1.000\n"
            "  ------------------------------------------------------------------------------\n"
            "  [unattributed]                          0.147\n");
}

TEST(TextTable, NarrowLineStacksTheFreeTextColumnUnderItsRow) {
  std::ostringstream out;
  {
    TextWidthScope width(50);
    ModuleLike().Print(out, "  ");
  }
  EXPECT_EQ(out.str(),
            "  module                                   mean\n"
            "  ---------------------------------------------\n"
            "  TriangleMultiplicationOutgoing.forward  6.295\n"
            "      comm by kind (mean): SendRecv 5.800,\n"  // a hanging indent past half the line is not kept
            "        AllGather 1.000\n"
            "  ---------------------------------------------\n"
            "  [unattributed]                          0.147\n");
  EXPECT_EQ(TextWidthScope::Current(), 0u) << "the scope ends with its block";
}

TEST(TextTable, StackedValueIndentsPastANestedRowAndNamesItsColumn) {
  TextTable t = ModuleLike();
  t.AddRow({"    TriMul.ring_shift", "3.100", "SendRecv 3.100"});
  std::ostringstream out;
  {
    TextWidthScope width(50);
    t.Print(out, "  ");
  }
  // The nested row's own indentation (4) plus 4: never at the depth of a sibling module name.
  EXPECT_NE(out.str().find("\n      TriMul.ring_shift                   3.100\n"
                           "          comm by kind (mean): SendRecv 3.100\n"),
            std::string::npos)
      << out.str();
}

TEST(TextTable, NarrowerStillShortensTextColumnsNeverNumbers) {
  TextTable t({{"time"}, {"class", TextTable::Align::kLeft}, {"name", TextTable::Align::kLeft}});
  t.AddRow({"133.147", "AllGather", std::string(200, 'k')});
  std::ostringstream out;
  {
    TextWidthScope width(60);
    t.Print(out, "  ");
  }
  EXPECT_EQ(LongestLine(out.str()), 60u) << out.str();
  EXPECT_NE(out.str().find("133.147  AllGather  kkk"), std::string::npos) << out.str();
  // Nothing fits 20 columns in one block: the name wraps into a second block with the key column
  // (time), shortened to 16; that block stays wider than the line.
  std::ostringstream narrow;
  {
    TextWidthScope width(20);
    t.Print(narrow, "");
  }
  EXPECT_EQ(narrow.str(),
            "   time  class\n"
            "------------------\n"
            "133.147  AllGather\n"
            "\n"
            "   time  name\n"
            "-------------------------\n"
            "133.147  kkkkkkk...kkkkkk\n");
}

// The rank table of the readout at 40 columns: the columns that do not fit wrap whole into a second
// block that repeats the key column; every line keeps its alignment and fits.
TEST(TextTable, ColumnsThatDoNotFitWrapWholeUnderTheKeyColumns) {
  TextTable t({{"rank"}, {"device", TextTable::Align::kLeft}, {"span"}, {"busy"}, {"comm % of busy"}});
  t.AddRow({"0", "cuda:0", "425.906", "319.234", "83.1"});
  t.AddRow({"1", "cuda:1", "425.906", "403.730", "86.7"});
  std::ostringstream out;
  {
    TextWidthScope width(40);
    t.Print(out, "  ");
  }
  EXPECT_EQ(out.str(),
            "  rank  device     span     busy\n"
            "  ------------------------------\n"
            "     0  cuda:0  425.906  319.234\n"
            "     1  cuda:1  425.906  403.730\n"
            "\n"
            "  rank  comm % of busy\n"
            "  --------------------\n"
            "     0            83.1\n"
            "     1            86.7\n");
  // Marked key columns are repeated wherever they are (here a name at the end, as in diff's tables).
  TextTable k({{"A ms"}, {"B ms"}, {"delta"}, {"name", TextTable::Align::kLeft, 0, TextTable::Overflow::kElide, true}});
  k.AddRow({"80.941", "326.657", "+245.715", "ncclDevKernel_SendRecv"});
  std::ostringstream keyed;
  {
    TextWidthScope width(40);
    k.Print(keyed, "");
  }
  EXPECT_EQ(keyed.str(),
            "  A ms     B ms  name\n"
            "---------------------------------------\n"
            "80.941  326.657  ncclDevKernel_SendRecv\n"
            "\n"
            "   delta  name\n"
            "--------------------------------\n"
            "+245.715  ncclDevKernel_SendRecv\n");
}

// Siblings that the middle elision would print alike stay distinct: the two modules
// that both printed as `Trian...ng.forward`.
TEST(ElideDistinct, ValuesThatDifferStayDifferent) {
  std::vector<std::string> v{"        TriangleAttentionStartingNode.forward",
                             "        TriangleAttentionEndingNode.forward",
                             "        TriangleMultiplicationOutgoing.forward",
                             "        TriangleMultiplicationIncoming.forward", "        Transition.forward"};
  std::vector<std::string> s = ElideDistinct(v, 32);
  EXPECT_EQ(s, (std::vector<std::string>{"        T...StartingNode.forward", "        Tri...EndingNode.forward",
                                         "        Trian...Outgoing.forward", "        Trian...Incoming.forward",
                                         "        Transition.forward"}));
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_LE(s[i].size(), 32u) << s[i];
    for (size_t j = 0; j < i; ++j) EXPECT_NE(s[i], s[j]);
  }
  // Without a clash the middle goes, as ElideMiddle does, and the indentation stays.
  EXPECT_EQ(ElideDistinct({"    PairformerModule.forward"}, 20), std::vector<std::string>{"    Pairfor...orward"});
}

TEST(WrapLines, KeepsTableRowsWhole) {
  // A line with a run of spaces after its indentation is a table row: wrapping it would collapse
  // its columns into single spaces.
  const std::string row = "     0  cuda:0  425.906  319.234        53.913\n";
  EXPECT_EQ(WrapLines(row, 30), row);
}

}  // namespace
}  // namespace cpprof::render
