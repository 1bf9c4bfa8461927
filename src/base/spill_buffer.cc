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
  mem_.clear();
  return true;
}

bool SpillBuffer::Drain() {
  if (failed_) return false;
  mem_.append(pbase(), static_cast<size_t>(pptr() - pbase()));
  setp(put_.data(), put_.data() + put_.size());
  if (mem_.size() > limit_ && !Spill()) failed_ = true;
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
