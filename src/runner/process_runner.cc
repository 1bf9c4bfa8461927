// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
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

namespace {

// What the child runs, built before fork(): after it only async-signal-safe calls.
struct ChildCommand {
  std::string program;  // argv[0] found on the child's PATH
  std::vector<std::string> argv, env;
};

StatusOr<ChildCommand> PrepareChild(const std::vector<std::string>& argv, const RunOptions& options) {
  ChildCommand c;
  c.argv = argv;
  std::string path_var;
  if (options.env) {
    for (const auto& [k, v] : *options.env) c.env.push_back(k + "=" + v);
    auto it = options.env->find("PATH");
    path_var = it == options.env->end() ? "" : it->second;
  } else {
    for (char** e = environ; e && *e; ++e) c.env.emplace_back(*e);
    const char* p = std::getenv("PATH");
    path_var = p ? p : "";
  }
  std::optional<std::string> program = FindProgram(argv[0], path_var);
  if (!program) {
    return Error(ExitCode::kExternal, argv[0].find('/') == std::string::npos
                                          ? fmt::format("'{}' not found on PATH", argv[0])
                                          : fmt::format("'{}' does not exist or is not executable", argv[0]));
  }
  c.program = *program;
  return c;
}

// The child's stdin, stdout and stderr, and the pipe that carries execve's errno back.
struct ChildPipes {
  Fd in_r, in_w, out_r, out_w, err_r, err_w, exec_r, exec_w;
  bool Make() {
    return MakePipe(in_r, in_w) && MakePipe(out_r, out_w) && MakePipe(err_r, err_w) && MakePipe(exec_r, exec_w);
  }
};

// In the forked child: its own process group, the pipes as 0/1/2, the working folder, execve.
// On failure the errno goes back through exec_w. Async-signal-safe calls only.
[[noreturn]] void ExecChild(const std::string& program, char* const* argv, char* const* env, const char* cwd,
                            bool has_stdin, ChildPipes& p) {
  ::setpgid(0, 0);
  ::signal(SIGPIPE, SIG_DFL);
  if (has_stdin) {
    ::dup2(p.in_r.get(), 0);
  } else {
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
  }
  ::dup2(p.out_w.get(), 1);
  ::dup2(p.err_w.get(), 2);
  if (cwd && ::chdir(cwd) != 0) {
    int e = errno;
    (void)!::write(p.exec_w.get(), &e, sizeof e);
    ::_exit(127);
  }
  ::execve(program.c_str(), argv, env);
  int e = errno;
  (void)!::write(p.exec_w.get(), &e, sizeof e);
  ::_exit(127);
}

// The errno of a failed execve (or chdir) in the child; 0 when it ran (the pipe closed on exec,
// O_CLOEXEC).
int ExecErrno(Fd& exec_r) {
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(exec_r.get(), &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof child_errno) ? child_errno : 0;
}

// Feeds stdin_data and reads stdout and stderr (each kept up to max_output, each chunk passed to
// on_output) until both close or the deadline passes (then result.timed_out).
void PumpOutput(ChildPipes& p, const RunOptions& options, std::chrono::steady_clock::time_point deadline,
                ProcessResult& result) {
  std::string_view to_write = options.stdin_data ? std::string_view(*options.stdin_data) : "";
  if (options.stdin_data) {
    ::fcntl(p.in_w.get(), F_SETFL, ::fcntl(p.in_w.get(), F_GETFL) | O_NONBLOCK);
    if (to_write.empty()) p.in_w.Close();
  } else {
    p.in_w.Close();
  }
  char buf[65536];
  while (p.out_r.get() >= 0 || p.err_r.get() >= 0) {
    std::vector<pollfd> fds;
    if (p.out_r.get() >= 0) fds.push_back({p.out_r.get(), POLLIN, 0});
    if (p.err_r.get() >= 0) fds.push_back({p.err_r.get(), POLLIN, 0});
    if (p.in_w.get() >= 0) fds.push_back({p.in_w.get(), POLLOUT, 0});
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
    for (const auto& f : fds) {
      if (f.revents == 0) continue;
      if (f.fd == p.in_w.get()) {
        ssize_t w = WriteNoSigpipe(p.in_w.get(), to_write.data(), to_write.size());
        if (w > 0) to_write.remove_prefix(static_cast<size_t>(w));
        if (w < 0 && errno != EAGAIN && errno != EINTR) to_write = {};
        if (to_write.empty()) p.in_w.Close();
        continue;
      }
      Fd& src = f.fd == p.out_r.get() ? p.out_r : p.err_r;
      std::string& dst = f.fd == p.out_r.get() ? result.out : result.err;
      ssize_t r = ::read(src.get(), buf, sizeof buf);
      if (r > 0) {
        if (options.on_output) options.on_output(f.fd == p.err_r.get(), std::string_view(buf, static_cast<size_t>(r)));
        size_t room = options.max_output > dst.size() ? options.max_output - dst.size() : 0;
        if (static_cast<size_t>(r) > room) result.truncated = true;
        dst.append(buf, std::min(room, static_cast<size_t>(r)));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        src.Close();
      }
    }
  }
  p.in_w.Close();
}

// Waits for the child within the deadline (its output may close before it ends); past it, kills
// its whole process group (nsys and torchrun leave children). Fills the exit code or signal.
void Reap(pid_t pid, std::chrono::steady_clock::time_point deadline, ProcessResult& result) {
  int status = 0;
  while (!result.timed_out) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline) result.timed_out = true;
    if (!result.timed_out) ::usleep(2000);
  }
  if (result.timed_out) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return;
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
}

}  // namespace

StatusOr<ProcessResult> RealProcessRunner::Run(const std::vector<std::string>& argv, const RunOptions& options) {
  if (argv.empty()) return Error(ExitCode::kError, "internal: empty command");
  CPPROF_ASSIGN_OR_RETURN(ChildCommand child, PrepareChild(argv, options));
  std::vector<char*> cargv, cenv;
  for (auto& a : child.argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : child.env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  ChildPipes pipes;
  if (!pipes.Make()) return Error(ExitCode::kError, fmt::format("cannot create pipes: {}", std::strerror(errno)));
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();

  pid_t pid = ::fork();
  if (pid < 0) return Error(ExitCode::kError, fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid == 0) ExecChild(child.program, cargv.data(), cenv.data(), cwd, options.stdin_data.has_value(), pipes);
  pipes.in_r.Close();
  pipes.out_w.Close();
  pipes.err_w.Close();
  pipes.exec_w.Close();
  if (int child_errno = ExecErrno(pipes.exec_r); child_errno != 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return Error(ExitCode::kExternal,
                 fmt::format("cannot run '{}'{}: {}", child.program, cwd ? fmt::format(" in '{}'", options.cwd) : "",
                             std::strerror(child_errno)));
  }
  ProcessResult result;
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(options.timeout_s * 1000));
  PumpOutput(pipes, options, deadline, result);
  Reap(pid, deadline, result);
  return result;
}

}  // namespace cpprof::runner
