#include "runner/process_runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace cpprof::runner {

namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Closes a file descriptor once.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Close(); }
  int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void Reset(int fd) {
    Close();
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

bool MakePipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end.Reset(fds[0]);
  write_end.Reset(fds[1]);
  return true;
}

// Writes without SIGPIPE when the child has closed its stdin (it may exit before reading it
// all): SIGPIPE is blocked for the call and a pending one is consumed.
ssize_t WriteNoSigpipe(int fd, const void* data, size_t size) {
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  ssize_t w = ::write(fd, data, size);
  int saved = errno;
  if (w < 0 && errno == EPIPE) {
    timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  errno = saved;
  return w;
}

}  // namespace

std::string ProcessResult::Describe() const {
  if (timed_out) return "timed out";
  if (term_signal != 0) return fmt::format("killed by signal {}", term_signal);
  return fmt::format("exit {}", exit_code);
}

std::optional<std::string> FindProgram(const std::string& name, const std::string& path_var) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    if (IsExecutableFile(name)) return name;
    return std::nullopt;
  }
  size_t start = 0;
  while (start <= path_var.size()) {
    size_t end = path_var.find(':', start);
    if (end == std::string::npos) end = path_var.size();
    std::string dir = path_var.substr(start, end - start);
    if (dir.empty()) dir = ".";  // POSIX: an empty PATH entry is the current directory
    std::string candidate = dir + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

StatusOr<ProcessResult> RealProcessRunner::Run(const std::vector<std::string>& argv, const RunOptions& options) {
  if (argv.empty()) return Error(ExitCode::kError, "internal: empty command");

  // Everything the child needs is built before fork(): after it only async-signal-safe calls.
  std::vector<std::string> env_strings;
  std::string path_var;
  if (options.env) {
    for (const auto& [k, v] : *options.env) env_strings.push_back(k + "=" + v);
    auto it = options.env->find("PATH");
    path_var = it == options.env->end() ? "" : it->second;
  } else {
    for (char** e = environ; e && *e; ++e) env_strings.emplace_back(*e);
    const char* p = std::getenv("PATH");
    path_var = p ? p : "";
  }
  std::optional<std::string> program = FindProgram(argv[0], path_var);
  if (!program) {
    return Error(ExitCode::kExternal, argv[0].find('/') == std::string::npos
                                          ? fmt::format("'{}' not found on PATH", argv[0])
                                          : fmt::format("'{}' does not exist or is not executable", argv[0]));
  }
  std::vector<char*> cargv, cenv;
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : env_strings) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  Fd in_r, in_w, out_r, out_w, err_r, err_w, exec_r, exec_w;
  if (!MakePipe(in_r, in_w) || !MakePipe(out_r, out_w) || !MakePipe(err_r, err_w) || !MakePipe(exec_r, exec_w)) {
    return Error(ExitCode::kError, fmt::format("cannot create pipes: {}", std::strerror(errno)));
  }
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();

  pid_t pid = ::fork();
  if (pid < 0) return Error(ExitCode::kError, fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGPIPE, SIG_DFL);
    if (options.stdin_data) {
      ::dup2(in_r.get(), 0);
    } else {
      int devnull = ::open("/dev/null", O_RDONLY);
      if (devnull >= 0) ::dup2(devnull, 0);
    }
    ::dup2(out_w.get(), 1);
    ::dup2(err_w.get(), 2);
    if (cwd && ::chdir(cwd) != 0) {
      int e = errno;
      (void)!::write(exec_w.get(), &e, sizeof e);
      ::_exit(127);
    }
    ::execve(program->c_str(), cargv.data(), cenv.data());
    int e = errno;
    (void)!::write(exec_w.get(), &e, sizeof e);
    ::_exit(127);
  }
  in_r.Close();
  out_w.Close();
  err_w.Close();
  exec_w.Close();

  // Did execve (or chdir) fail? The pipe closes on a successful exec (O_CLOEXEC).
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(exec_r.get(), &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return Error(ExitCode::kExternal,
                 fmt::format("cannot run '{}'{}: {}", *program, cwd ? fmt::format(" in '{}'", options.cwd) : "",
                             std::strerror(child_errno)));
  }

  ProcessResult result;
  std::string_view to_write = options.stdin_data ? std::string_view(*options.stdin_data) : "";
  if (options.stdin_data) {
    ::fcntl(in_w.get(), F_SETFL, ::fcntl(in_w.get(), F_GETFL) | O_NONBLOCK);
    if (to_write.empty()) in_w.Close();
  } else {
    in_w.Close();
  }
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(options.timeout_s * 1000));
  char buf[65536];
  while (out_r.get() >= 0 || err_r.get() >= 0) {
    std::vector<pollfd> fds;
    if (out_r.get() >= 0) fds.push_back({out_r.get(), POLLIN, 0});
    if (err_r.get() >= 0) fds.push_back({err_r.get(), POLLIN, 0});
    if (in_w.get() >= 0) fds.push_back({in_w.get(), POLLOUT, 0});
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (rc < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (const auto& p : fds) {
      if (p.revents == 0) continue;
      if (p.fd == in_w.get()) {
        ssize_t w = WriteNoSigpipe(in_w.get(), to_write.data(), to_write.size());
        if (w > 0) to_write.remove_prefix(static_cast<size_t>(w));
        if (w < 0 && errno != EAGAIN && errno != EINTR) to_write = {};
        if (to_write.empty()) in_w.Close();
        continue;
      }
      Fd& src = p.fd == out_r.get() ? out_r : err_r;
      std::string& dst = p.fd == out_r.get() ? result.out : result.err;
      ssize_t r = ::read(src.get(), buf, sizeof buf);
      if (r > 0) {
        if (options.on_output) options.on_output(p.fd == err_r.get(), std::string_view(buf, static_cast<size_t>(r)));
        size_t room = options.max_output > dst.size() ? options.max_output - dst.size() : 0;
        if (static_cast<size_t>(r) > room) result.truncated = true;
        dst.append(buf, std::min(room, static_cast<size_t>(r)));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        src.Close();
      }
    }
  }
  in_w.Close();
  int status = 0;
  if (result.timed_out) {
    ::kill(-pid, SIGKILL);  // the whole process group: nsys and torchrun leave children
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return result;
  }
  // Output closed; the child may still run (it closed its stdout): wait within the deadline.
  while (true) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return result;
    }
    ::usleep(2000);
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace cpprof::runner
