// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "base/compressed_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <lzma.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace cpprof {

namespace {

constexpr size_t kChunk = size_t{1} << 20;

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The decompressed bytes into the temporary file.
struct Output {
  int fd;
  const std::string& source;
  const std::string& temp_dir;
  int64_t written = 0;
  Status status;

  bool Write(const uint8_t* p, size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        const int err = w < 0 ? errno : ENOSPC;
        status = Error(ExitCode::kError,
                       fmt::format("cannot decompress '{}' into '{}' ({} after {:.1f} MB): give a folder with room as "
                                   "TMPDIR, or decompress it yourself next to it and give the .sqlite",
                                   source, temp_dir, std::strerror(err), static_cast<double>(written) / 1e6));
        return false;
      }
      p += w;
      n -= static_cast<size_t>(w);
      written += w;
    }
    return true;
  }
};

// Reads the next chunk of `in` into `buf`; false on a read error (status set).
struct Input {
  std::FILE* file;
  const std::string& source;
  std::vector<uint8_t> buf = std::vector<uint8_t>(kChunk);
  Status status;

  size_t Read() {
    const size_t n = std::fread(buf.data(), 1, buf.size(), file);
    if (std::ferror(file)) {
      status = Error(ExitCode::kBadInput, fmt::format("cannot read '{}': {}", source, std::strerror(errno)));
    }
    return n;
  }
  bool AtEnd() const { return std::feof(file) != 0; }
};

Status Damaged(const std::string& source, Compression c, std::string_view detail) {
  const char* tool = c == Compression::kXz ? "xz" : c == Compression::kGzip ? "gzip" : "zstd";
  return Error(ExitCode::kBadInput,
               fmt::format("'{}' is a damaged or truncated {} file ({}). Copy it again; '{} -t {}' tests it.", source,
                           CompressionName(c), detail, tool, source));
}

Status DecompressXz(Input& in, Output& out) {
  lzma_stream s = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
    return Error(ExitCode::kError, "the xz decoder could not start (out of memory?)");
  }
  std::vector<uint8_t> ob(kChunk);
  lzma_action action = LZMA_RUN;
  s.next_out = ob.data();
  s.avail_out = ob.size();
  Status status;
  while (status.ok()) {
    if (s.avail_in == 0 && action == LZMA_RUN) {
      s.next_in = in.buf.data();
      s.avail_in = in.Read();
      if (!in.status.ok()) {
        status = in.status;
        break;
      }
      if (in.AtEnd()) action = LZMA_FINISH;
    }
    const lzma_ret r = lzma_code(&s, action);
    if (s.avail_out == 0 || r == LZMA_STREAM_END) {
      if (!out.Write(ob.data(), ob.size() - s.avail_out)) status = out.status;
      s.next_out = ob.data();
      s.avail_out = ob.size();
    }
    if (r == LZMA_STREAM_END) break;
    if (r != LZMA_OK) {
      status = Damaged(out.source, Compression::kXz,
                       r == LZMA_BUF_ERROR ? "it ends too soon" : fmt::format("xz error {}", static_cast<int>(r)));
    }
  }
  lzma_end(&s);
  return status;
}

Status DecompressGzip(Input& in, Output& out) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return Error(ExitCode::kError, "the gzip decoder could not start");
  std::vector<uint8_t> ob(kChunk);
  Status status;
  bool ended = false;  // the last member ended
  while (status.ok()) {
    if (z.avail_in == 0) {
      if (in.AtEnd()) break;
      z.next_in = in.buf.data();
      z.avail_in = static_cast<uInt>(in.Read());
      if (!in.status.ok()) {
        status = in.status;
        break;
      }
      if (z.avail_in == 0) break;
    }
    z.next_out = ob.data();
    z.avail_out = static_cast<uInt>(ob.size());
    const int r = inflate(&z, Z_NO_FLUSH);
    if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) {
      status = Damaged(out.source, Compression::kGzip, z.msg ? z.msg : fmt::format("zlib error {}", r));
      break;
    }
    if (!out.Write(ob.data(), ob.size() - z.avail_out)) status = out.status;
    ended = r == Z_STREAM_END;
    if (ended && inflateReset(&z) != Z_OK) status = Damaged(out.source, Compression::kGzip, "a member cannot restart");
  }
  inflateEnd(&z);
  if (status.ok() && !ended) status = Damaged(out.source, Compression::kGzip, "it ends too soon");
  return status;
}

Status DecompressZstd(Input& in, Output& out) {
  ZSTD_DStream* d = ZSTD_createDStream();
  if (!d) return Error(ExitCode::kError, "the zstd decoder could not start");
  std::vector<uint8_t> ob(kChunk);
  Status status;
  size_t pending = 1;  // 0 once a frame is whole
  while (status.ok()) {
    const size_t n = in.Read();
    if (!in.status.ok()) {
      status = in.status;
      break;
    }
    if (n == 0) break;
    ZSTD_inBuffer ib{in.buf.data(), n, 0};
    bool full = false;
    while (status.ok() && (ib.pos < ib.size || full)) {
      ZSTD_outBuffer o{ob.data(), ob.size(), 0};
      pending = ZSTD_decompressStream(d, &o, &ib);
      if (ZSTD_isError(pending)) {
        status = Damaged(out.source, Compression::kZstd, ZSTD_getErrorName(pending));
        break;
      }
      if (!out.Write(ob.data(), o.pos)) status = out.status;
      full = o.pos == o.size;
    }
  }
  ZSTD_freeDStream(d);
  if (status.ok() && pending != 0) status = Damaged(out.source, Compression::kZstd, "it ends too soon");
  return status;
}

}  // namespace

Compression SniffCompression(std::string_view head) {
  auto starts = [&](std::string_view magic) { return head.substr(0, magic.size()) == magic; };
  if (starts(std::string_view("\xFD"
                              "7zXZ\x00",
                              6)))
    return Compression::kXz;
  if (starts("\x1F\x8B")) return Compression::kGzip;
  if (starts("\x28\xB5\x2F\xFD")) return Compression::kZstd;
  return Compression::kNone;
}

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kXz:
      return "xz";
    case Compression::kGzip:
      return "gzip";
    case Compression::kZstd:
      return "zstd";
    case Compression::kNone:
      break;
  }
  return "uncompressed";
}

std::string WithoutCompressionSuffix(const std::string& path) {
  for (std::string_view suffix : {".xz", ".gz", ".zst"}) {
    if (EndsWith(path, suffix)) return path.substr(0, path.size() - suffix.size());
  }
  return path;
}

StatusOr<std::shared_ptr<const DecompressedFile>> DecompressedFile::Make(const std::string& source, Compression c,
                                                                         const std::string& temp_dir) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(source.c_str(), "rb"), std::fclose);
  if (!file) {
    return Error(ExitCode::kBadInput, fmt::format("cannot read '{}': {}", source, std::strerror(errno)));
  }
  std::string name = temp_dir + "/cpprof-export-XXXXXX";
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) {
    return Error(ExitCode::kError, fmt::format("cannot make a temporary file in '{}' to decompress '{}' into: {}. Give "
                                               "a writable folder as TMPDIR.",
                                               temp_dir, source, std::strerror(errno)));
  }
  Input in{file.get(), source, std::vector<uint8_t>(kChunk), OkStatus()};
  Output out{fd, source, temp_dir, 0, OkStatus()};
  Status status = c == Compression::kXz     ? DecompressXz(in, out)
                  : c == Compression::kGzip ? DecompressGzip(in, out)
                                            : DecompressZstd(in, out);
  if (::close(fd) != 0 && status.ok())
    status = out.status.ok()
                 ? Error(ExitCode::kError, fmt::format("cannot finish the decompressed copy of '{}' in '{}': {}",
                                                       source, temp_dir, std::strerror(errno)))
                 : out.status;
  if (!status.ok()) {
    ::unlink(name.c_str());
    return status;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::shared_ptr<const DecompressedFile>(new DecompressedFile(name, out.written, seconds));
}

DecompressedFile::DecompressedFile(std::string path, int64_t bytes, double seconds)
    : path_(std::move(path)), bytes_(bytes), seconds_(seconds) {}

DecompressedFile::~DecompressedFile() { ::unlink(path_.c_str()); }

StatusOr<std::shared_ptr<const DecompressedFile>> DecompressedFiles::Get(const std::string& source, Compression c,
                                                                         const std::string& temp_dir, bool* made) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::shared_ptr<Entry>& e = files_[source];
    if (!e) e = std::make_shared<Entry>();
    entry = e;
  }
  std::lock_guard<std::mutex> lock(entry->mu);  // other sources decompress meanwhile
  *made = false;
  if (entry->file) return entry->file;
  CPPROF_ASSIGN_OR_RETURN(entry->file, DecompressedFile::Make(source, c, temp_dir));
  *made = true;
  return entry->file;
}

}  // namespace cpprof
