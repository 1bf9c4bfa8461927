// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "base/input_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace cpprof {
namespace {

TEST(InputFiles, NaturalOrder) {
  EXPECT_TRUE(NaturalLess("rep.2.sqlite", "rep.10.sqlite"));
  EXPECT_FALSE(NaturalLess("rep.10.sqlite", "rep.2.sqlite"));
  EXPECT_TRUE(NaturalLess("rep.02", "rep.2x"));
  EXPECT_TRUE(NaturalLess("rep.2", "rep.02")) << "equal numbers: fewer leading zeros first";
  EXPECT_TRUE(NaturalLess("a", "b"));
  EXPECT_TRUE(NaturalLess("node1/rep", "node1/rep.0"));
  EXPECT_FALSE(NaturalLess("same", "same"));
  EXPECT_TRUE(NaturalLess("x99999999999999999999", "x100000000000000000000")) << "past 64 bits";
}

class InputFilesDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cpprof-inputs-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "run");
    for (const char* n : {"rep.10.sqlite", "rep.2.sqlite", "rep.1.sqlite", "notes.txt", "rep.3.nsys-rep"}) {
      std::ofstream(dir_ / "run" / n) << "x";
    }
    std::filesystem::create_directories(dir_ / "empty");
    std::ofstream(dir_ / "empty" / "a.nsys-rep") << "x";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string P(const std::string& rel) { return (dir_ / rel).string(); }
  std::filesystem::path dir_;
};

TEST(InputFiles, DistinctNamesTellSameNamedExportsApart) {
  EXPECT_EQ(DistinctNames({"run/rep.0.sqlite", "run/rep.1.sqlite"}),
            (std::vector<std::string>{"rep.0.sqlite", "rep.1.sqlite"}));
  EXPECT_EQ(DistinctNames({"r/node0/inference/t.sqlite", "r/node1/inference/t.sqlite"}),
            (std::vector<std::string>{"node0/inference/t.sqlite", "node1/inference/t.sqlite"}));
  EXPECT_EQ(DistinctNames({"a/x.sqlite", "./b//x.sqlite", "c/y.sqlite"}),
            (std::vector<std::string>{"a/x.sqlite", "b/x.sqlite", "y.sqlite"}));
  // A path that is the tail of another keeps all it has; the other gets one component more.
  EXPECT_EQ(DistinctNames({"x.sqlite", "/d/x.sqlite"}), (std::vector<std::string>{"x.sqlite", "d/x.sqlite"}));
  EXPECT_EQ(DistinctNames({"only.sqlite"}), (std::vector<std::string>{"only.sqlite"}));
  EXPECT_TRUE(DistinctNames({}).empty());
}

TEST_F(InputFilesDir, DirectoriesAndPatternsExpandInNaturalOrder) {
  auto dir = ExpandInputs({P("run")});
  ASSERT_TRUE(dir.ok()) << dir.status().message();
  EXPECT_EQ(*dir, (std::vector<std::string>{P("run/rep.1.sqlite"), P("run/rep.2.sqlite"), P("run/rep.10.sqlite")}));
  auto glob = ExpandInputs({P("run/rep.*.sqlite")});
  ASSERT_TRUE(glob.ok());
  EXPECT_EQ(*glob, *dir);
  auto plain = ExpandInputs({P("run/rep.2.sqlite"), P("missing.sqlite")});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, (std::vector<std::string>{P("run/rep.2.sqlite"), P("missing.sqlite")}))
      << "a missing file is the reader's to report";
}

TEST_F(InputFilesDir, SaysWhatIsWrong) {
  auto empty = ExpandInputs({P("empty")});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), ExitCode::kUsage);
  EXPECT_NE(empty.status().message().find("nsys export --type sqlite"), std::string::npos) << empty.status().message();
  auto none = ExpandInputs({P("run/*.json")});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("matches no file"), std::string::npos);
  auto twice = ExpandInputs({P("run/rep.1.sqlite"), P("run")});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("given twice"), std::string::npos);
}

}  // namespace
}  // namespace cpprof
