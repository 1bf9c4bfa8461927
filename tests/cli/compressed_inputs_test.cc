// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Compressed exports given to the commands as they are (issue 38): the bundled .sqlite.xz files
// read exactly as their decompressed copies, gzip and zstd too, with a note that says what was
// done; a damaged one is refused as such; nothing is left in TMPDIR.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/status.h"
#include "test_support.h"

namespace cpprof::testing {
namespace {

namespace fs = std::filesystem;

void Shell(const std::string& cmd) { EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd; }

TEST(CompressedInputs, ReadAsTheirDecompressedCopies) {
  const std::string name = "cpwork-train";
  const std::string xz = DataPath("real/" + name + "/" + name + ".sqlite.xz");
  const std::string plain = RealExport(name);  // the test support's decompressed copy
  const std::string dir = TempDir() + "/compressed-inputs";
  fs::remove_all(dir);
  fs::create_directories(dir + "/tmp");
  Shell("gzip -c '" + plain + "' > '" + dir + "/run.sqlite.gz'");
  ::setenv("TMPDIR", (dir + "/tmp").c_str(), 1);
  const CliResult want = RunCli({"report", plain, "--format", "json"});
  ASSERT_EQ(want.rc, 0) << want.err;
  const CliResult from_xz = RunCli({"report", xz, "--format", "json"});
  EXPECT_EQ(from_xz.rc, 0) << from_xz.err;
  EXPECT_NE(from_xz.err.find("is xz-compressed: decompressed it"), std::string::npos) << from_xz.err;
  const CliResult stats_plain = RunCli({"stats", "--format", "csv", "-r", "cuda_gpu_kern_sum", plain});
  const CliResult stats_gz = RunCli({"stats", "--format", "csv", "-r", "cuda_gpu_kern_sum", dir + "/run.sqlite.gz"});
  EXPECT_EQ(stats_gz.rc, 0) << stats_gz.err;
  EXPECT_EQ(stats_gz.out, stats_plain.out);
  const CliResult export_xz = RunCli({"export", xz});
  EXPECT_EQ(export_xz.rc, 0) << export_xz.err;
  EXPECT_EQ(export_xz.out, RunCli({"export", plain}).out);
  // Read once per command: the export's trace and its CP view share one decompressed copy.
  size_t notes = 0;
  for (size_t at = export_xz.err.find("decompressed it"); at != std::string::npos;
       at = export_xz.err.find("decompressed it", at + 1)) {
    ++notes;
  }
  EXPECT_EQ(notes, 1u) << export_xz.err;
  ::unsetenv("TMPDIR");
  // The readout is the plain one's, bar the file's own name.
  std::string got = from_xz.out, expected = want.out;
  for (std::string* s : {&got, &expected}) {
    for (const std::string& p : {xz, plain}) {
      for (size_t at = s->find(p); at != std::string::npos; at = s->find(p)) s->replace(at, p.size(), "FILE");
    }
  }
  EXPECT_TRUE(got == expected) << "the readout of the .xz differs from its decompressed copy's";
  EXPECT_TRUE(fs::is_empty(dir + "/tmp")) << "a decompressed copy was left in TMPDIR";
  fs::remove_all(dir);
}

TEST(CompressedInputs, ADamagedOneIsSaidToBeDamaged) {
  const std::string dir = TempDir() + "/compressed-damaged";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string xz = DataPath("real/cpwork-train/cpwork-train.sqlite.xz");
  Shell("head -c 20000 '" + xz + "' > '" + dir + "/cut.sqlite.xz'");
  const CliResult r = RunCli({"report", dir + "/cut.sqlite.xz"});
  EXPECT_EQ(r.rc, static_cast<int>(ExitCode::kBadInput)) << r.err;
  EXPECT_NE(r.err.find("is a damaged or truncated xz file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("xz -t"), std::string::npos) << r.err;
  // Whole, but not an export inside: said as that, not as damage.
  Shell("echo 'not a database' | xz -c > '" + dir + "/text.sqlite.xz'");
  const CliResult text = RunCli({"stats", dir + "/text.sqlite.xz"});
  EXPECT_EQ(text.rc, static_cast<int>(ExitCode::kBadInput)) << text.err;
  EXPECT_NE(text.err.find("decompressed (xz) is not an SQLite database"), std::string::npos) << text.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cpprof::testing
