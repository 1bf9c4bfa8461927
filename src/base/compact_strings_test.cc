// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "base/compact_strings.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace cpprof {
namespace {

// Keys of a few bytes each (their numbers vary, the template is one): many per arena chunk.
std::string fmt_op(int i) {
  return "op " + std::to_string(i) + " seq " + std::to_string(i * 3 % 1000) + (i % 5 == 0 ? " sizes [[4, 256]]" : "");
}

// Texts at the edges of the split: empty, leading zeros, a run too long for a number, NULs, the
// template's own escapes, a number alone, no number.
std::vector<std::string> EdgeTexts() {
  return {"",
          "007 and 0 and 10",
          "99999999999999999999 20 digits",
          std::string("nul\0inside 12\0", 14),
          std::string("\0\1\0\0 1", 7),
          "42",
          "x"};
}

TEST(CompactStringSet, GivesBackTheExactBytes) {
  const std::string cases[] = {
      "",
      "aten::view, op_id = 12610, sizes = [[256, 1024], [1024, 4]], input_op_ids = [(12609,0), (0,-1)]",
      "0",
      "00",
      "007 and 0 and 10",
      "9999999999999999999",    // 19 digits: a number
      "99999999999999999999",   // 20 digits: kept in the template
      "18446744073709551615x",  // 2^64 - 1, 20 digits
      std::string("nul\0inside 12\0", 14),
      std::string("\0\1\0\0 1", 7),  // the template's own escapes as text
      "trailing 42",
      "42",
      "\xff\xfe invalid utf-8 3",
  };
  CompactStringSet set;
  std::vector<uint32_t> ids;
  for (const auto& s : cases) ids.push_back(set.Intern(7, s));
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(set.Text(ids[i]), cases[i]) << i;
    EXPECT_EQ(set.Tag(ids[i]), 7u);
  }
  EXPECT_EQ(set.size(), std::size(cases));  // "00", "0" and "007 ..." are all distinct
}

// InternFrom (a string of another set, its numbers copied as they are) gives the id Intern gives
// its text: into an empty set, and into one that holds some of the strings already.
TEST(CompactStringSet, InternFromAnotherSetAsItsText) {
  std::vector<std::string> cases = {
      "aten::view, op_id = 12610, sizes = [[256, 1024], [1024, 4]]",
      "aten::view, op_id = 7, sizes = [[2, 1]]",
  };
  for (const auto& s : EdgeTexts()) cases.push_back(s);
  CompactStringSet from;
  for (const auto& s : cases) from.Intern(3, s);
  for (int warm : {0, 1}) {
    CompactStringSet into, want;
    if (warm) {
      for (const char* s : {"x", "aten::view, op_id = 1, sizes = [[2, 1]]", "42"}) into.Intern(5, s), want.Intern(5, s);
    }
    std::vector<uint32_t> templates;
    CompactStringSet::Cursor cursor(from);
    for (uint32_t id = 0; id < from.size(); ++id) {
      const uint32_t got = into.InternFrom(cursor, id, 5, templates);
      EXPECT_EQ(got, want.Intern(5, from.Text(id))) << id;
      EXPECT_EQ(into.Text(got), cases[id]) << id;
      EXPECT_EQ(into.Tag(got), 5u);
    }
    EXPECT_EQ(into.size(), want.size());
    EXPECT_EQ(into.InternFrom(cursor, 0, 5, templates), want.Intern(5, cases[0]));  // again: the same id
  }
}

// Split then InternSplit (split forms made ahead, back to back in one buffer, as a pipeline
// hands them over) gives the ids Intern gives, for new and repeated strings, past the lookup
// table's growth.
TEST(CompactStringSet, SplitThenInternIsIntern) {
  std::vector<std::string> texts = EdgeTexts();
  texts.push_back("0");
  texts.push_back("00");
  for (int i = 0; i < 5000; ++i) texts.push_back(fmt_op(i % 3000));  // repeats past the first 3000
  std::string forms;
  std::vector<size_t> begins;
  for (const auto& t : texts) {
    begins.push_back(forms.size());
    CompactStringSet::Split(t, forms);
  }
  begins.push_back(forms.size());
  CompactStringSet split, whole;
  for (size_t i = 0; i < texts.size(); ++i) {
    const uint32_t tag = static_cast<uint32_t>(i % 3);
    const std::string_view form(forms.data() + begins[i], begins[i + 1] - begins[i]);
    const uint32_t id = split.InternSplit(tag, form);
    ASSERT_EQ(id, whole.Intern(tag, texts[i])) << i;
    ASSERT_EQ(split.Text(id), texts[i]) << i;
  }
  EXPECT_EQ(split.size(), whole.size());
}

TEST(CompactStringSet, EqualStringsOneIdTagsApart) {
  CompactStringSet set;
  uint32_t a = set.Intern(0, "x 1");
  EXPECT_EQ(set.Intern(0, "x 1"), a);
  EXPECT_NE(set.Intern(1, "x 1"), a);
  EXPECT_NE(set.Intern(0, "x 01"), a);
  EXPECT_NE(set.Intern(0, "x 10"), a);
  EXPECT_EQ(set.size(), 4u);
  EXPECT_EQ(set.Intern(0, "x 10"), 3u);  // ids in order of first appearance
}

TEST(CompactStringSet, ManyStringsAgainstAMap) {
  std::mt19937_64 rng(42);
  const char alphabet[] = "ab0123456789, =[]()";
  CompactStringSet set;
  std::map<std::pair<uint32_t, std::string>, uint32_t> reference;
  for (int i = 0; i < 200000; ++i) {
    std::string s;
    size_t len = rng() % 40;
    for (size_t k = 0; k < len; ++k) s += alphabet[rng() % (sizeof alphabet - 1)];
    uint32_t tag = static_cast<uint32_t>(rng() % 3);
    uint32_t id = set.Intern(tag, s);
    auto [it, inserted] = reference.try_emplace({tag, s}, id);
    ASSERT_EQ(it->second, id) << s;
    if (inserted) {
      ASSERT_EQ(id, reference.size() - 1);
    }
  }
  EXPECT_EQ(set.size(), reference.size());
  for (const auto& [key, id] : reference) {
    ASSERT_EQ(set.Text(id), key.second);
    ASSERT_EQ(set.Tag(id), key.first);
  }
  set.FreezeLookup();
  EXPECT_EQ(set.Text(reference.begin()->second), reference.begin()->first.second);
}

TEST(CompactStringSet, KeysLongerThanAnArenaChunk) {
  CompactStringSet set;
  std::string big(5 << 20, 'x');
  big += " 123";
  uint32_t small = set.Intern(0, "before 1");
  uint32_t id = set.Intern(0, big);
  uint32_t after = set.Intern(0, "after 2");
  EXPECT_EQ(set.Text(id), big);
  EXPECT_EQ(set.Intern(0, big), id);
  EXPECT_EQ(set.Text(small), "before 1");
  EXPECT_EQ(set.Text(after), "after 2");
}

// Ids are found from every 16th one by walking the keys after it, across the arena's chunks
// (4 MiB each; a key that does not fit starts the next one) and chunks of one big key each.
TEST(CompactStringSet, EveryIdAcrossArenaChunks) {
  CompactStringSet set;
  std::vector<std::string> texts;
  for (int i = 0; i < 900000; ++i) {
    if (i % 300007 == 5) {
      texts.push_back(std::string(static_cast<size_t>(5 << 20) + static_cast<size_t>(i), 'y'));  // its own chunk
    } else {
      texts.push_back(fmt_op(i));
    }
    ASSERT_EQ(set.Intern(1, texts.back()), static_cast<uint32_t>(i));
  }
  for (uint32_t id = 0; id < texts.size(); ++id) ASSERT_EQ(set.Text(id), texts[id]) << id;
  // A cursor: every id in order, then with gaps shorter and longer than the sampling, then back.
  for (uint32_t step : {1u, 3u, 17u, 40u}) {
    CompactStringSet::Cursor cursor(set);
    std::string text;
    for (uint32_t id = step - 1; id < texts.size(); id += step) {
      text.clear();
      ASSERT_EQ(cursor.AppendText(id, text), 1u);
      ASSERT_EQ(text, texts[id]) << id;
      if (id % 100003 == 0) {
        text.clear();
        cursor.AppendText(id / 2, text);  // backwards
        ASSERT_EQ(text, texts[id / 2]) << id;
      }
    }
  }
  for (uint32_t id = 0; id < texts.size(); id += 7) ASSERT_EQ(set.Intern(1, texts[id]), id);  // after every growth
  set.FreezeLookup();
  for (uint32_t id = 0; id < texts.size(); id += 13) {
    set.Prefetch(id, false), set.Prefetch(id, true);
    ASSERT_EQ(set.Text(id), texts[id]) << id;
  }
}

}  // namespace
}  // namespace cpprof
