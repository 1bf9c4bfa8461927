// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "base/utf8.h"

#include <gtest/gtest.h>

namespace cpprof {
namespace {

TEST(Utf8, ValidTextPassesUnchanged) {
  for (std::string s : {"", "plain ascii kernel name longer than eight bytes", "\xC3\xA9t\xC3\xA9", "\xE2\x82\xAC",
                        "\xF0\x9F\x98\x80", "\xEF\xBF\xBD"}) {
    EXPECT_TRUE(IsValidUtf8(s)) << s;
    EXPECT_EQ(ToValidUtf8(s), s);
  }
}

TEST(Utf8, EachBadByteBecomesOneReplacementCharacter) {
  EXPECT_FALSE(IsValidUtf8("b\xFF"));
  EXPECT_EQ(ToValidUtf8("b\xFF"), "b\xEF\xBF\xBD");
  EXPECT_EQ(ToValidUtf8("\xC3"), "\xEF\xBF\xBD");                                    // truncated sequence
  EXPECT_EQ(ToValidUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                    // overlong '/'
  EXPECT_EQ(ToValidUtf8("\xED\xA0\x80x"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDx");  // a surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));                                     // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8(std::string("abcdefgh\x80", 9)));                         // after the ASCII fast path
  EXPECT_TRUE(IsValidUtf8(ToValidUtf8("\xFE\xFF\xC3(\xE2\x82")));
}

}  // namespace
}  // namespace cpprof
