// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Exports given compressed (run.sqlite.xz, .gz, .zst: how they are kept and shipped) are read as
// they are: decompressed into a private temporary file (mode 0600, in TMPDIR) that is removed when
// the last reader is done with it. SQLite needs a name to open (it resolves /proc/self/fd links to
// the unlinked name), so the file keeps its name until then: a cpprof killed by SIGKILL leaves
// it behind as TMPDIR/cpprof-export-*.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cpprof {

enum class Compression { kNone, kXz, kGzip, kZstd };

// The compression `head` (a file's first bytes, 6 or more) starts with, by its magic bytes.
Compression SniffCompression(std::string_view head);
const char* CompressionName(Compression c);  // "xz", "gzip", "zstd"

// `path` without a compression suffix (".xz", ".gz", ".zst"): the name the export had.
std::string WithoutCompressionSuffix(const std::string& path);

class DecompressedFile {
 public:
  // Decompresses `source` (compressed as `c`) into a new file in `temp_dir`, removed by the destructor.
  // kBadInput when the data is damaged or truncated; kError when `temp_dir` has no room (the
  // message says how much was needed and what to do).
  static StatusOr<std::shared_ptr<const DecompressedFile>> Make(const std::string& source, Compression c,
                                                                const std::string& temp_dir);
  ~DecompressedFile();
  DecompressedFile(const DecompressedFile&) = delete;
  DecompressedFile& operator=(const DecompressedFile&) = delete;

  const std::string& path() const { return path_; }  // the temporary file: there while this lives
  int64_t bytes() const { return bytes_; }           // decompressed size
  double seconds() const { return seconds_; }        // how long decompressing took

 private:
  DecompressedFile(std::string path, int64_t bytes, double seconds);
  std::string path_;
  int64_t bytes_;
  double seconds_;
};

// The files one command decompressed, by source path: an export read twice by a command (by
// several threads, or a second connection) is decompressed once. Given to the readers in the
// command's ExecContext (the CLI makes one per command); the files go when the command ends.
class DecompressedFiles {
 public:
  // The decompressed copy of `source`, made now (`made` set true) or earlier by this command.
  StatusOr<std::shared_ptr<const DecompressedFile>> Get(const std::string& source, Compression c,
                                                        const std::string& temp_dir, bool* made);

 private:
  struct Entry {
    std::mutex mu;  // held while the file is made: a second reader of the same source waits
    std::shared_ptr<const DecompressedFile> file;
  };
  std::mutex mu_;  // for files_
  std::map<std::string, std::shared_ptr<Entry>> files_;
};

}  // namespace cpprof
