// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "base/spill_buffer.h"

namespace cpprof {

SpillBuffer::~SpillBuffer() {
  if (file_) std::fclose(file_);
}

bool SpillBuffer::Spill() {
  if (!file_) {
    file_ = std::tmpfile();
    if (!file_) return false;
  }
  if (!mem_.empty() && std::fwrite(mem_.data(), 1, mem_.size(), file_) != mem_.size()) return false;
  std::string().swap(mem_);  // from now on the put area goes straight to the file
  return true;
}

bool SpillBuffer::Drain() {
  if (failed_) return false;
  const auto n = static_cast<size_t>(pptr() - pbase());
  drained_ += n;
  if (file_) {
    if (std::fwrite(pbase(), 1, n, file_) != n) failed_ = true;
  } else {
    // Reserved once (pages are touched only as they fill): no reallocation to double the memory.
    if (mem_.capacity() < limit_ + put_.size()) mem_.reserve(limit_ + put_.size());
    mem_.append(pbase(), n);
    if (mem_.size() > limit_ && !Spill()) failed_ = true;
  }
  setp(put_.data(), put_.data() + put_.size());
  return !failed_;
}

SpillBuffer::int_type SpillBuffer::overflow(int_type ch) {
  if (!Drain()) return traits_type::eof();
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  *pptr() = traits_type::to_char_type(ch);
  pbump(1);
  return ch;
}

bool SpillBuffer::CopyTo(std::ostream& out) {
  if (!Drain()) return false;
  if (file_) {
    if (!Spill() || std::fflush(file_) != 0) return false;
    std::rewind(file_);
    std::vector<char> chunk(size_t{1} << 20);
    size_t got;
    while ((got = std::fread(chunk.data(), 1, chunk.size(), file_)) > 0) {
      out.write(chunk.data(), static_cast<std::streamsize>(got));
    }
    if (std::ferror(file_)) return false;
  } else {
    out.write(mem_.data(), static_cast<std::streamsize>(mem_.size()));
  }
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace cpprof
