// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Compressed exports decompressed into private temporary files: each format round-trips, damage
// and truncation are said as such, nothing is left in the temporary folder, a command's cache
// decompresses a file once.
#include "base/compressed_file.h"

#include <gtest/gtest.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cpprof {
namespace {

namespace fs = std::filesystem;

std::string Xz(const std::string& data) {
  std::string out(lzma_stream_buffer_bound(data.size()), '\0');
  size_t pos = 0;
  EXPECT_EQ(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(data.data()),
                                    data.size(), reinterpret_cast<uint8_t*>(out.data()), &pos, out.size()),
            LZMA_OK);
  out.resize(pos);
  return out;
}

std::string Gzip(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);  // 16: a gzip header
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string Zstd(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

// Bytes that compress but are not trivial: 3 MB, more than the 1 MB chunks read and written.
std::string Payload() {
  std::string s;
  for (int64_t i = 0; s.size() < (3u << 20); ++i) s += "row " + std::to_string(i * 7919 % 100003) + "\n";
  return s;
}

class CompressedFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("cpprof-compressed-test-" + std::to_string(::getpid()))).string();
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/tmp");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << bytes;
    return dir_ + "/" + name;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  size_t TempFilesLeft() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir_ + "/tmp"), fs::directory_iterator()));
  }
  std::string dir_;
};

TEST_F(CompressedFile, EachFormatRoundTripsAndLeavesNothingBehind) {
  const std::string data = Payload();
  const struct {
    Compression c;
    std::string bytes;
    const char* name;
  } cases[] = {{Compression::kXz, Xz(data), "a.sqlite.xz"},
               {Compression::kGzip, Gzip(data), "a.sqlite.gz"},
               {Compression::kZstd, Zstd(data), "a.sqlite.zst"}};
  for (const auto& c : cases) {
    const std::string path = Write(c.name, c.bytes);
    EXPECT_EQ(SniffCompression(c.bytes.substr(0, 16)), c.c) << c.name;
    {
      auto file = DecompressedFile::Make(path, c.c, dir_ + "/tmp");
      ASSERT_TRUE(file.ok()) << file.status().message();
      EXPECT_EQ((*file)->bytes(), static_cast<int64_t>(data.size())) << c.name;
      EXPECT_TRUE(Read((*file)->path()) == data) << c.name;
      EXPECT_EQ(fs::status((*file)->path()).permissions() & fs::perms::all,
                fs::perms::owner_read | fs::perms::owner_write)
          << "private to its owner";
    }
    EXPECT_EQ(TempFilesLeft(), 0u) << "the temporary file goes with its last reader";
  }
  EXPECT_EQ(SniffCompression("SQLite format 3"), Compression::kNone);
  EXPECT_EQ(WithoutCompressionSuffix("run/a.sqlite.zst"), "run/a.sqlite");
  EXPECT_EQ(WithoutCompressionSuffix("run/a.sqlite"), "run/a.sqlite");
}

TEST_F(CompressedFile, DamageAndTruncationAreSaid) {
  const std::string data = Payload();
  for (auto [c, bytes] : {std::pair{Compression::kXz, Xz(data)}, std::pair{Compression::kGzip, Gzip(data)},
                          std::pair{Compression::kZstd, Zstd(data)}}) {
    const std::string name = std::string("cut.") + CompressionName(c);
    auto cut = DecompressedFile::Make(Write(name, bytes.substr(0, bytes.size() / 2)), c, dir_ + "/tmp");
    ASSERT_FALSE(cut.ok()) << name;
    EXPECT_EQ(cut.status().code(), ExitCode::kBadInput) << name;
    EXPECT_NE(cut.status().message().find("damaged or truncated"), std::string::npos) << cut.status().message();
    std::string garbled = bytes;
    for (size_t i = 32; i < garbled.size(); i += 97) garbled[i] = static_cast<char>(garbled[i] ^ 0x5A);
    auto bad = DecompressedFile::Make(Write("bad." + name, garbled), c, dir_ + "/tmp");
    ASSERT_FALSE(bad.ok()) << name;
    EXPECT_EQ(bad.status().code(), ExitCode::kBadInput) << name << ": " << bad.status().message();
    EXPECT_NE(bad.status().message().find(std::string("damaged or truncated ") + CompressionName(c)), std::string::npos)
        << bad.status().message();
  }
  EXPECT_EQ(TempFilesLeft(), 0u);
}

TEST_F(CompressedFile, NoTemporaryFolderSaysWhatToDo) {
  auto file = DecompressedFile::Make(Write("a.xz", Xz("x")), Compression::kXz, dir_ + "/missing");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), ExitCode::kError);
  EXPECT_NE(file.status().message().find("TMPDIR"), std::string::npos) << file.status().message();
}

TEST_F(CompressedFile, ACommandDecompressesAFileOnce) {
  const std::string path = Write("a.xz", Xz(Payload()));
  DecompressedFiles files;
  bool made = false;
  auto first = files.Get(path, Compression::kXz, dir_ + "/tmp", &made);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(made);
  auto second = files.Get(path, Compression::kXz, dir_ + "/tmp", &made);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(made);
  EXPECT_EQ(first->get(), second->get());
}

}  // namespace
}  // namespace cpprof
