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
  // Nothing can fit 20 columns: the text columns stop at 24 and the table stays wider.
  std::ostringstream narrow;
  {
    TextWidthScope width(20);
    t.Print(narrow, "");
  }
  EXPECT_EQ(LongestLine(narrow.str()), std::string("133.147  AllGather  ").size() + 24) << narrow.str();
}

}  // namespace
}  // namespace cpprof::render
