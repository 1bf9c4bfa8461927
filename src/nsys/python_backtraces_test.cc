// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Python backtrace payloads as `nsys export --include-json true` writes them (the shapes of
// tests/data/real-bt/cpfold-bt-1x1's NVTX_EVENTS.jsonText and StringIds).
#include "nsys/python_backtraces.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace cpprof::nsys {
namespace {

constexpr std::string_view kBacktrace =
    R"({"Python Backtrace on CUDA":{"Thread state ID":1,"Thread state":"Running","Frames count":2,)"
    R"("Frames":[{"Function":44,"File":45,"Line":95},{"Function":46,"File":47,"Line":368}]}})";

TEST(PythonBacktraceDecoder, OnlyBacktracePayloadsAreKeptAndDamagedOnesCounted) {
  PythonBacktraceDecoder d;
  EXPECT_FALSE(d.Add(1, 7, R"({"NCCL communicator ID":4388718544744322600,"Rank":0,"No. of ranks":1})"));
  EXPECT_FALSE(d.Add(1, 7, ""));
  EXPECT_FALSE(d.Add(1, 7, "\x01\x02 binary"));
  EXPECT_TRUE(d.Add(100, 7, kBacktrace));
  // Backtraces whose frames cannot be read: counted, not kept.
  EXPECT_TRUE(d.Add(200, 7, R"({"Python Backtrace on CUDA":{"Frames":[{"Function":-1,"File":45,"Line":9}]}})"));
  EXPECT_TRUE(d.Add(300, 7, R"({"Python Backtrace on CUDA":{"Frames":"none"}})"));
  EXPECT_TRUE(d.Add(400, 7, R"({"Python Backtrace on CUDA":{"Frames":[{"Function":44,"File":45,"Line":9})"));

  const std::string path =
      testing::MakeDatabase("python-backtraces",
                            "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
                            "INSERT INTO StringIds VALUES (44, '_forward'), (45, '/w/cpfold/model/pairformer.py'),"
                            "(46, '&lt;module&gt;'), (47, '/w/cpfold/run.py');");
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().message();
  auto bt = d.Finish(*db);
  ASSERT_TRUE(bt.ok()) << bt.status().message();
  EXPECT_EQ(bt->damaged, 3);
  ASSERT_EQ(bt->marks.size(), 1u);
  const model::PythonBacktrace& m = bt->marks[0];
  EXPECT_EQ(m.start, 100);
  EXPECT_EQ(m.global_tid, 7);
  ASSERT_EQ(m.count, 2u);
  const model::PythonFrame& inner = bt->frames[m.first];
  const model::PythonFrame& outer = bt->frames[m.first + 1];
  EXPECT_EQ(bt->strings[inner.function], "_forward");  // innermost first
  EXPECT_EQ(bt->strings[inner.file], "/w/cpfold/model/pairformer.py");
  EXPECT_EQ(inner.line, 95);
  EXPECT_EQ(bt->strings[outer.function], "<module>");  // HTML entities undone
  EXPECT_EQ(outer.line, 368);
}

TEST(PythonBacktraceDecoder, UnescapeHtml) {
  EXPECT_EQ(UnescapeHtml("&lt;listcomp&gt; a&amp;b &quot;q&quot; &#39;s&apos; &unknown; &"),
            "<listcomp> a&b \"q\" 's' &unknown; &");
}

}  // namespace
}  // namespace cpprof::nsys
