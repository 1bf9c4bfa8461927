#include "base/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <streambuf>

namespace cpprof {

namespace {

// Temporary names removed, and a file cut back, on SIGINT/SIGTERM (the handler may only make
// async-signal-safe calls: it unlinks fixed buffers and truncates, then hands the signal to
// whatever handler was there before).
constexpr int kSlots = 8;
struct Slot {
  std::atomic<bool> used{false};
  char path[4096] = {};
};
Slot g_slots[kSlots];
std::atomic<int> g_truncate_fd{-1};  // TruncateOnSignal's
std::atomic<off_t> g_truncate_at{0};
std::mutex g_mu;  // guards g_depth and the saved handlers
int g_depth = 0;
struct sigaction g_old_int {
}, g_old_term{};

extern "C" void UndoOnSignal(int sig, siginfo_t* info, void* uctx) {
  for (auto& s : g_slots) {
    if (s.used.load()) ::unlink(s.path);
  }
  if (const int fd = g_truncate_fd.load(); fd >= 0) (void)::ftruncate(fd, g_truncate_at.load());
  const struct sigaction& old = sig == SIGINT ? g_old_int : g_old_term;
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction) old.sa_sigaction(sig, info, uctx);
  } else if (old.sa_handler == SIG_IGN) {
    return;
  } else if (old.sa_handler == SIG_DFL) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);  // delivered when this handler returns: the process ends by the signal, as it would have
  } else {
    old.sa_handler(sig);
  }
}

// UndoOnSignal installed while at least one of these lives.
class SignalHandlerRef {
 public:
  SignalHandlerRef() {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_depth++ == 0) {
      struct sigaction sa {};
      sa.sa_sigaction = UndoOnSignal;
      sa.sa_flags = SA_SIGINFO;
      sigemptyset(&sa.sa_mask);
      ::sigaction(SIGINT, &sa, &g_old_int);
      ::sigaction(SIGTERM, &sa, &g_old_term);
    }
  }
  ~SignalHandlerRef() {
    std::lock_guard<std::mutex> lock(g_mu);
    if (--g_depth == 0) {
      ::sigaction(SIGINT, &g_old_int, nullptr);
      ::sigaction(SIGTERM, &g_old_term, nullptr);
    }
  }
  SignalHandlerRef(const SignalHandlerRef&) = delete;
  SignalHandlerRef& operator=(const SignalHandlerRef&) = delete;
};

// Registers `path` for removal on SIGINT/SIGTERM until the returned guard is destroyed.
class TempGuard {
 public:
  explicit TempGuard(const std::string& path) {
    if (path.size() >= sizeof(Slot::path)) return;
    std::lock_guard<std::mutex> lock(g_mu);
    for (auto& s : g_slots) {
      if (!s.used.load()) {
        std::memcpy(s.path, path.c_str(), path.size() + 1);
        s.used.store(true);
        slot_ = &s;
        break;
      }
    }
  }
  ~TempGuard() {
    if (slot_) slot_->used.store(false);
  }
  TempGuard(const TempGuard&) = delete;
  TempGuard& operator=(const TempGuard&) = delete;

 private:
  Slot* slot_ = nullptr;
  SignalHandlerRef handler_;
};

// An ostream buffer over a file descriptor (no second open by name, which a planted link could
// redirect).
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd), buf_(1 << 16) { setp(buf_.data(), buf_.data() + buf_.size()); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!Flush()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return Flush() ? 0 : -1; }

 private:
  bool Flush() {
    const char* p = pbase();
    while (p < pptr()) {
      ssize_t w = ::write(fd_, p, static_cast<size_t>(pptr() - p));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        error_ = w < 0 ? errno : EIO;
        return false;
      }
      p += w;
    }
    setp(buf_.data(), buf_.data() + buf_.size());
    return true;
  }

  int fd_;
  std::vector<char> buf_;
  int error_ = 0;
};

std::string Dir(const std::string& path) {
  std::filesystem::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : ".";
}

std::string RandomSuffix() {
  static std::mt19937_64 gen{std::random_device{}()};
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string s(8, 'x');
  for (auto& c : s) c = kChars[gen() % (sizeof kChars - 1)];
  return s;
}

// Written in place, never renamed onto: a FIFO or device (/dev/null, /dev/stdout).
bool WriteInPlace(const std::string& path) {
  if (path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0) return true;
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

Status WriteToFd(int fd, const std::string& path, const std::function<Status(std::ostream&)>& write) {
  FdBuf buf(fd);
  std::ostream os(&buf);
  CPPROF_RETURN_IF_ERROR(write(os));
  os.flush();
  if (!os) {
    return Error(ExitCode::kError, fmt::format("could not write '{}': {} (disk full?); it was left as it was.", path,
                                               std::strerror(buf.error() ? buf.error() : EIO)));
  }
  return OkStatus();
}

mode_t NewFileMode(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
  std::lock_guard<std::mutex> lock(g_mu);
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

Status SysError(const std::string& what, const std::string& path, int err) {
  return Error(ExitCode::kError, fmt::format("cannot write '{}': {} failed: {}. Check that its folder exists and is "
                                             "writable; the file was left as it was.",
                                             path, what, std::strerror(err)));
}

}  // namespace

Status CheckOutputPath(const std::string& path, const WriteFileOptions& o) {
  struct stat out {};
  bool exists = ::stat(path.c_str(), &out) == 0;
  if (exists) {
    for (const auto& in : o.inputs) {
      struct stat st {};
      if (::stat(in.c_str(), &st) == 0 && st.st_dev == out.st_dev && st.st_ino == out.st_ino) {
        return Error(ExitCode::kUsage, fmt::format("{} '{}' is the input '{}': writing there would destroy it. Give "
                                                   "another output file.",
                                                   o.what, path, in));
      }
    }
    if (S_ISDIR(out.st_mode)) {
      return Error(ExitCode::kUsage,
                   fmt::format("{} '{}' is a directory; give a file name (e.g. '{}/out').", o.what, path, path));
    }
  }
  if (WriteInPlace(path)) return OkStatus();
  struct stat l {};
  if (!o.replace_existing && ::lstat(path.c_str(), &l) == 0) {
    return Error(ExitCode::kUsage, fmt::format("{} '{}' exists; give {} to replace it, or another file name.", o.what,
                                               path, o.force_flag));
  }
  return OkStatus();
}

namespace {

// A FIFO or device: opened and written in place. A FIFO is opened without waiting: with no
// reader at its other end it is refused (the open would wait for one forever).
Status WriteOver(const std::string& path, const std::function<Status(std::ostream&)>& write) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0 && errno == ENXIO) {
    return Error(ExitCode::kUsage, fmt::format("'{}' is a FIFO that nothing reads: writing there would wait forever. "
                                               "Start its reader first, or give a regular file.",
                                               path));
  }
  if (fd < 0) return SysError("open", path, errno);
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);  // then written as any file
  Status s = WriteToFd(fd, path, write);
  ::close(fd);
  return s;
}

// The temporary file beside the output: its descriptor, its name once it has one, and the guard
// that removes that name on SIGINT/SIGTERM.
struct TempFile {
  int fd = -1;
  bool unnamed = false;
  std::string name;  // the named temporary, once there is one
  std::unique_ptr<TempGuard> guard;
};

// An unnamed file first (O_TMPFILE): nothing to clean up, whatever ends the process. Else a
// named one (stem + random), guarded.
Status OpenTemp(const std::string& dir, const std::string& stem, const std::string& path, const WriteFileOptions& o,
                TempFile& t) {
#ifdef O_TMPFILE
  if (o.unnamed_temp && ::access("/proc/self/fd", X_OK) == 0)
    t.fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
#endif
  t.unnamed = t.fd >= 0;
  if (!t.unnamed) {
    std::string temp = stem + "XXXXXX";
    t.fd = ::mkstemp(temp.data());
    if (t.fd < 0) return SysError("creating a temporary file in '" + dir + "'", path, errno);
    t.name = std::move(temp);
    t.guard = std::make_unique<TempGuard>(t.name);
  }
  return OkStatus();
}

// The unnamed temporary, once complete, gets a name (linkat through /proc), guarded.
Status NameTemp(const std::string& stem, const std::string& path, TempFile& t) {
  std::string proc = fmt::format("/proc/self/fd/{}", t.fd);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = stem + RandomSuffix();
    t.guard = std::make_unique<TempGuard>(name);
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      t.name = name;
      break;
    }
    int err = errno;
    t.guard.reset();
    if (err != EEXIST) return SysError("linkat", path, err);
  }
  if (t.name.empty()) return SysError("linkat", path, EEXIST);
  return OkStatus();
}

// The content into the temporary, with the output's mode, on disk, named.
Status FillTemp(const std::string& stem, const std::string& path, const std::function<Status(std::ostream&)>& write,
                mode_t mode, TempFile& t) {
  CPPROF_RETURN_IF_ERROR(WriteToFd(t.fd, path, write));
  if (::fchmod(t.fd, mode) != 0) return SysError("fchmod", path, errno);
  if (::fsync(t.fd) != 0) return SysError("fsync", path, errno);
  if (t.unnamed) return NameTemp(stem, path, t);
  return OkStatus();
}

// The closed, complete temporary verified and renamed onto the output (removed on failure); the
// rename synced to disk.
Status ReplaceWithTemp(const std::string& dir, const std::string& path, const WriteFileOptions& o, TempFile& t) {
  if (o.verify) {
    Status v = o.verify(t.name);
    if (!v.ok()) {
      ::unlink(t.name.c_str());
      return v;
    }
  }
  if (!o.replace_existing) {
    // Not onto a file that appeared since the check (another cpprof writing the same -o): the
    // second of two writers refuses rather than replacing the first one's file.
    int rc = ::renameat2(AT_FDCWD, t.name.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && errno == EINVAL) {  // a file system without it: link, which never replaces
      rc = ::link(t.name.c_str(), path.c_str());
      if (rc == 0) ::unlink(t.name.c_str());
    }
    if (rc != 0) {
      int err = errno;
      ::unlink(t.name.c_str());
      if (err == EEXIST) {
        return Error(ExitCode::kUsage,
                     fmt::format("{} '{}' appeared while cpprof was writing it (another command writing the same "
                                 "file?); it was left as it was. Give {} to replace it, or another file name.",
                                 o.what, path, o.force_flag));
      }
      return SysError("rename", path, err);
    }
  } else if (::rename(t.name.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(t.name.c_str());
    return SysError("rename", path, err);
  }
  t.guard.reset();
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);  // the rename itself on disk; best effort
    ::close(dfd);
  }
  return OkStatus();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, const std::function<Status(std::ostream&)>& write,
                           const WriteFileOptions& o) {
  CPPROF_RETURN_IF_ERROR(CheckOutputPath(path, o));
  if (WriteInPlace(path)) return WriteOver(path, write);
  const std::string dir = Dir(path);
  const std::string stem = dir + "/." + std::filesystem::path(path).filename().string() + ".tmp-";
  const mode_t mode = NewFileMode(path);
  // It gets a name only once it is complete, just before the rename.
  TempFile t;
  CPPROF_RETURN_IF_ERROR(OpenTemp(dir, stem, path, o, t));
  if (Status s = FillTemp(stem, path, write, mode, t); !s.ok()) {
    ::close(t.fd);
    if (!t.name.empty()) ::unlink(t.name.c_str());
    return s;
  }
  if (::close(t.fd) != 0) {
    int err = errno;
    ::unlink(t.name.c_str());
    return SysError("close", path, err);
  }
  return ReplaceWithTemp(dir, path, o, t);
}

Status WriteFileAtomically(const std::string& path, std::string_view content, const WriteFileOptions& o) {
  return WriteFileAtomically(
      path,
      [&](std::ostream& out) {
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        return OkStatus();
      },
      o);
}

struct TruncateOnSignal::Handler {
  SignalHandlerRef ref;
};

TruncateOnSignal::TruncateOnSignal(int fd, off_t length) : handler_(std::make_unique<Handler>()) {
  g_truncate_at.store(length);
  g_truncate_fd.store(fd);
}

TruncateOnSignal::~TruncateOnSignal() { g_truncate_fd.store(-1); }

namespace {

// The files from paths[i] on, their streams appended to `streams`: each one's write nests the next.
Status WriteFilesFrom(size_t i, const std::vector<std::string>& paths, std::vector<std::ostream*>& streams,
                      const std::function<Status(const std::vector<std::ostream*>&)>& write,
                      const WriteFileOptions& o) {
  if (i == paths.size()) return write(streams);
  return WriteFileAtomically(
      paths[i],
      [&](std::ostream& out) -> Status {
        streams.push_back(&out);
        Status s = WriteFilesFrom(i + 1, paths, streams, write, o);
        streams.pop_back();
        return s;
      },
      o);
}

}  // namespace

Status WriteFilesAtomically(const std::vector<std::string>& paths,
                            const std::function<Status(const std::vector<std::ostream*>&)>& write,
                            const WriteFileOptions& o) {
  std::vector<std::ostream*> streams;
  return WriteFilesFrom(0, paths, streams, write, o);
}

}  // namespace cpprof
