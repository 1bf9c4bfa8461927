// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// SpillBuffer: a command's whole output, held until the command has succeeded, so that on an
// error stdout stays empty (all-or-nothing output). Memory up to a limit (8 MiB: the commands'
// own memory is what the benchmark's bounds are about), then an unnamed temporary file
// (tmpfile(3)), so a multi-GB trace or a million-row table does not have to fit in RAM.
#pragma once

#include <cstdio>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace cpprof {

class SpillBuffer : public std::streambuf {
 public:
  explicit SpillBuffer(size_t memory_limit = size_t{8} << 20) : limit_(memory_limit), put_(size_t{1} << 16) {
    setp(put_.data(), put_.data() + put_.size());
  }
  ~SpillBuffer() override;
  SpillBuffer(const SpillBuffer&) = delete;
  SpillBuffer& operator=(const SpillBuffer&) = delete;

  // Writes everything held to `out`; false when writing (or spilling earlier) failed.
  bool CopyTo(std::ostream& out);
  bool failed() const { return failed_; }
  // Bytes written so far (held in memory, spilled, or waiting in the put area).
  size_t size() const { return drained_ + static_cast<size_t>(pptr() - pbase()); }

 protected:
  int_type overflow(int_type ch) override;
  int sync() override { return Drain() ? 0 : -1; }

 private:
  bool Drain();  // the put area into mem_ (and mem_ into the file past the limit)
  bool Spill();

  size_t limit_;
  std::vector<char> put_;
  std::string mem_;
  std::FILE* file_ = nullptr;
  bool failed_ = false;
  size_t drained_ = 0;
};

}  // namespace cpprof
