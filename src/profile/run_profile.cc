// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "profile/run_profile.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "analysis/report_diff.h"
#include "base/atomic_file.h"
#include "doctor/doctor_render.h"
#include "doctor/functions_trace.h"
#include "doctor/functions_trace_workflow.h"
#include "model/profile_summary.h"
#include "pipeline/build_report.h"
#include "profile/probe.h"
#include "profile/process_tree.h"
#include "render/profile_summary.h"
#include "render/report_render.h"
#include "runner/environment.h"

namespace cpprof::profile {

namespace {

namespace fs = std::filesystem;

// Results files are written whole (WriteFileAtomically); the results folder itself is guarded by
// --force before the run, so a file in it is replaced.
Status WriteText(const std::string& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  return WriteFileAtomically(path, text);
}

bool Exists(const std::string& p) {
  std::error_code ec;
  return !p.empty() && fs::exists(p, ec);
}

// The write end of the self-pipe the SIGINT/SIGTERM handler writes to (one run at a time).
std::atomic<int> g_signal_fd{-1};
std::atomic<int> g_last_signal{0};

extern "C" void OnSignal(int sig) {
  g_last_signal = sig;
  int fd = g_signal_fd.load();
  if (fd >= 0) {
    char c = 1;
    (void)!::write(fd, &c, 1);
  }
}

// Watches a run from a second thread: at the deadline, at the cap (the probe's --probe-cap,
// unless LiftCap was called first), or on SIGINT/SIGTERM, it stops the whole process tree under
// cpprof. The ProcessRunner then sees its child end and returns.
class Watchdog {
 public:
  Watchdog(double timeout_s, double grace_s, double cap_s = 0) : grace_s_(grace_s), cap_on_(cap_s > 0) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) sig_r_ = fds[0], sig_w_ = fds[1];
    if (::pipe2(fds, O_CLOEXEC) == 0) done_r_ = fds[0], done_w_ = fds[1];
    g_signal_fd = sig_w_;
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
    auto now = std::chrono::steady_clock::now();
    deadline_ = now + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    cap_deadline_ = now + std::chrono::milliseconds(static_cast<int64_t>(cap_s * 1000));
    thread_ = std::thread([this] { Watch(); });
  }
  ~Watchdog() {
    Stop();
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
    g_signal_fd = -1;
    for (int fd : {sig_r_, sig_w_, done_r_, done_w_}) {
      if (fd >= 0) ::close(fd);
    }
  }
  void Stop() {
    if (thread_.joinable()) {
      char c = 1;
      (void)!::write(done_w_, &c, 1);
      thread_.join();
    }
  }
  bool timed_out() const { return timed_out_; }
  bool interrupted() const { return interrupted_; }
  bool capped() const { return capped_; }
  int killed() const { return killed_; }
  // The cap no longer applies (the probe's workload printed an iteration line); the deadline does.
  void LiftCap() { cap_lifted_ = true; }
  bool cap_lifted() const { return cap_lifted_; }

 private:
  void Watch() {
    while (true) {
      auto now = std::chrono::steady_clock::now();
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - now);
      if (left.count() <= 0) {
        timed_out_ = true;
        break;
      }
      if (cap_on_ && !cap_lifted_) {
        auto to_cap = std::chrono::duration_cast<std::chrono::milliseconds>(cap_deadline_ - now);
        if (to_cap.count() <= 0) {
          capped_ = true;
          break;
        }
        left = std::min(left, to_cap);
      }
      pollfd fds[2] = {{sig_r_, POLLIN, 0}, {done_r_, POLLIN, 0}};
      int rc = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
      if (rc < 0) continue;
      if (fds[1].revents) return;  // the run ended by itself
      if (fds[0].revents) {
        interrupted_ = true;
        break;
      }
    }
    killed_ = KillDescendants(::getpid(), grace_s_);
  }

  double grace_s_;
  bool cap_on_;
  int sig_r_ = -1, sig_w_ = -1, done_r_ = -1, done_w_ = -1;
  struct sigaction old_int_ {
  }, old_term_{};
  std::chrono::steady_clock::time_point deadline_, cap_deadline_;
  std::thread thread_;
  std::atomic<bool> timed_out_{false}, interrupted_{false}, capped_{false}, cap_lifted_{false};
  std::atomic<int> killed_{0};
};

}  // namespace

std::string LastLines(const std::string& text, size_t n) {
  size_t end = text.size();
  while (end > 0 && text[end - 1] == '\n') --end;
  size_t pos = end;
  for (size_t i = 0; i < n && pos > 0; ++i) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) {
      pos = 0;
      break;
    }
  }
  std::string s = text.substr(pos, end - pos);
  if (!s.empty() && s[0] == '\n') s.erase(0, 1);
  return s;
}

namespace {

// The workload's own summary lines (cpfold prints "cpfold: {json}" with time and peak memory).
std::vector<std::string> WorkloadSummaries(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream s(out);
  for (std::string line; std::getline(s, line);) {
    if (line.find("cpfold: {") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

// The functions-trace JSON cpprof writes: cpfold's spec as it is, or --trace-function and
// --trace-discover entries validated by import with the workload's Python (the workflow of
// 'cpprof trace-json', in the run's environment), each merged with the pytorch.json shipped with
// nsys.
Status WriteFunctionsTrace(const Plan& plan, runner::ProcessRunner& runner, std::ostream& err) {
  std::vector<doctor::FunctionEntry> entries;
  if (!plan.trace_spec.empty()) {
    CPPROF_ASSIGN_OR_RETURN(entries, doctor::ReadSpecFile(plan.trace_spec));
  }
  doctor::FunctionsTraceJob job;
  if (!plan.trace_base.empty()) {
    CPPROF_ASSIGN_OR_RETURN(job.base, doctor::ReadTraceBase(plan.trace_base));
  }
  const bool requested = !plan.trace_functions.empty() || !plan.trace_discover.empty();
  if (!requested) return doctor::WriteTraceAtomically(plan.trace_json, doctor::MergeTrace(job.base, entries, "cpfold"));

  job.request.entries = entries;
  for (const auto& fn : plan.trace_functions) {
    CPPROF_ASSIGN_OR_RETURN(doctor::FunctionEntry e, doctor::ParseFunctionFlag(fn));
    e.origin = "--trace-function";
    job.request.entries.push_back(e);
  }
  if (!plan.trace_discover.empty()) job.request.discover.push_back({plan.trace_discover, plan.trace_match});
  job.request.entry_module = plan.entry_module;
  job.command = "profile: functions trace";
  runner::Environment env(plan.env);
  doctor::WorkloadPython py = doctor::FindWorkloadPython(env, "");
  if (py.path.empty()) {
    return Error(ExitCode::kExternal, fmt::format("{}: cannot validate the --trace-function entries. Make the JSON "
                                                  "with 'cpprof trace-json --python PATH' and pass --trace-json",
                                                  py.why));
  }
  job.python = py.path;
  CPPROF_ASSIGN_OR_RETURN(doctor::FunctionsTrace trace, doctor::MakeFunctionsTrace(job, runner, env, err));
  const doctor::Validation& v = trace.validation;
  if (v.accepted.empty()) {
    return Error(ExitCode::kCheckFailed,
                 fmt::format("no --trace-function/--trace-discover entry was accepted by {} (see the rejections "
                             "above), so the functions trace would name none of the model's functions. Fix the "
                             "entries (try 'cpprof trace-json' with the same ones), or leave them out.",
                             v.python));
  }
  CPPROF_RETURN_IF_ERROR(doctor::WriteTraceAtomically(plan.trace_json, trace.entries));
  err << fmt::format("cpprof: profile: wrote {}: {} function{} validated with {}{}\n", plan.trace_json,
                     v.accepted.size(), v.accepted.size() == 1 ? "" : "s", v.python,
                     v.rejected.empty() ? "" : fmt::format("; {} rejected", v.rejected.size()));
  return OkStatus();
}

// A run's output as it comes: into the logs under /tmp/$USER/cpprof/<name>/ (so they are there
// even when cpprof itself is killed) and, unless --quiet, onto cpprof's stderr, unprefixed (the
// ranks' lines are the workload's own; cpprof's are "cpprof: ...").
class LiveTee {
 public:
  LiveTee(const std::string& out_path, const std::string& err_path, std::ostream* echo)
      : out_(out_path, std::ios::binary | std::ios::trunc),
        err_(err_path, std::ios::binary | std::ios::trunc),
        echo_(echo) {}
  void operator()(bool is_err, std::string_view chunk) {
    std::ofstream& f = is_err ? err_ : out_;
    f.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    f.flush();
    if (echo_) {
      echo_->write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      echo_->flush();
    }
  }

 private:
  std::ofstream out_, err_;
  std::ostream* echo_;
};

// nvidia-smi's memory.used per GPU, polled from a thread while the probe runs: the peak memory
// of a workload that does not print it.
class GpuMemoryPoller {
 public:
  GpuMemoryPoller(runner::ProcessRunner& runner, std::map<std::string, std::string> env, double every_s)
      : runner_(runner), env_(std::move(env)), every_s_(every_s) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~GpuMemoryPoller() { Stop(); }
  void Stop() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  std::map<int, int64_t> PeakMib() {
    std::lock_guard<std::mutex> l(mu_);
    return peak_;
  }

 private:
  void Loop() {
    while (true) {
      if (!Sample()) return;  // no nvidia-smi, or one that does not answer: stop asking
      std::unique_lock<std::mutex> l(mu_);
      if (cv_.wait_for(l, std::chrono::milliseconds(static_cast<int64_t>(every_s_ * 1000)), [this] { return stop_; })) {
        return;
      }
    }
  }
  bool Sample() {
    runner::RunOptions o;
    o.env = env_;
    o.timeout_s = 20;
    auto r = runner_.Run(
        {"nvidia-smi", "--query-gpu=index,name,compute_cap,memory.used,memory.total,uuid", "--format=csv"}, o);
    if (!r.ok() || !r->ok()) return false;
    auto gpus = doctor::ParseGpuQuery(r->out);
    if (!gpus.ok()) return false;
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& g : *gpus) {
      if (g.memory_used_mib < 0) continue;
      auto [it, inserted] = peak_.emplace(g.index, g.memory_used_mib);
      if (!inserted) it->second = std::max(it->second, g.memory_used_mib);
    }
    return true;
  }

  runner::ProcessRunner& runner_;
  std::map<std::string, std::string> env_;
  double every_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::map<int, int64_t> peak_;
  std::thread thread_;
};

// One command under the watchdog (--timeout, Ctrl-C, the probe's --probe-cap), its output teed live.
struct Watched {
  StatusOr<runner::ProcessResult> result = Error(ExitCode::kError, "not run");
  bool timed_out = false, interrupted = false;
  bool capped = false;      // stopped at cap_s: no iteration line came before it
  bool cap_lifted = false;  // an iteration line came before the cap
  int killed = 0;
  double wall_s = 0;
};

// cap_s > 0 (the probe of a workload not known to print iteration lines): the tree is stopped
// after cap_s seconds unless a `cpprof-iter:` tag appeared on stdout first.
Watched RunWatched(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                   double timeout_s, double grace_s, runner::ProcessRunner& runner, LiveTee& tee, double cap_s = 0) {
  runner::RunOptions ro;
  ro.env = env;
  ro.timeout_s = timeout_s + grace_s + 60;  // a backstop: the watchdog stops it first
  ro.max_output = 256u << 20;
  Watched w;
  auto t0 = std::chrono::steady_clock::now();
  {
    Watchdog dog(timeout_s, grace_s, cap_s);
    std::string tail;  // the end of the stdout seen so far: a tag may straddle two chunks
    ro.on_output = [&tee, &dog, &tail, cap_s](bool is_err, std::string_view chunk) {
      tee(is_err, chunk);
      if (cap_s <= 0 || is_err || dog.cap_lifted()) return;
      tail.append(chunk);
      for (const char* t : kIterTags) {
        if (tail.find(std::string(t) + ":") != std::string::npos) {
          dog.LiftCap();
          return;
        }
      }
      if (tail.size() > 16) tail.erase(0, tail.size() - 16);
    };
    w.result = runner.Run(argv, ro);
    dog.Stop();
    w.timed_out = dog.timed_out();
    w.interrupted = dog.interrupted();
    w.capped = dog.capped();
    w.cap_lifted = dog.cap_lifted();
    w.killed = dog.killed();
  }
  w.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (w.result.ok()) w.timed_out = w.timed_out || w.result->timed_out;
  return w;
}

const int64_t kMib = 1024 * 1024;

// What the probe measured: its wall time, iteration times and peak memory per rank (from the
// workload's lines, else nvidia-smi's memory.used less what was in use before).
Measurement MeasureProbe(const Plan& plan, const doctor::DoctorFindings& f, const ProbeOutput& po, const Watched& w,
                         double cap_s, const std::map<int, int64_t>& smi_peak_mib, const ExecuteOptions& options) {
  Measurement m;
  m.wall_s = w.wall_s;
  m.peak_by_rank = PeakByRank(po);
  m.iter_s = IterSeconds(po);
  m.iter_total_s = IterTotalSeconds(po);
  m.no_iteration_lines = po.iters.empty() && !plan.cpfold;
  m.cap_s = cap_s;
  m.capped = w.capped;
  m.cap_lifted = w.cap_lifted;
  if (!m.peak_by_rank.empty()) {
    m.peak_source =
        "the workload's " + po.tag + " lines" + (po.peak_mem_kind.empty() ? "" : " (" + po.peak_mem_kind + ")");
  } else if (!smi_peak_mib.empty()) {
    for (size_t i = 0; i < plan.gpus.size() && static_cast<int>(i) < plan.ranks; ++i) {
      auto it = smi_peak_mib.find(plan.gpus[i]);
      if (it == smi_peak_mib.end()) continue;
      int64_t before = 0;
      for (const auto& g : f.gpus) {
        if (g.index == plan.gpus[i] && g.memory_used_mib > 0) before = g.memory_used_mib;
      }
      m.peak_by_rank[static_cast<int>(i)] = std::max<int64_t>(0, it->second - before) * kMib;
    }
    m.peak_source =
        fmt::format("nvidia-smi's memory.used every {} s, less what was in use before (by local rank)", options.poll_s);
  }
  return m;
}

// What the profiled run must fit in: each rank's GPU memory less the headroom, and --timeout
// with the preset's overhead.
ProbeLimits ProbeLimitsOf(const Plan& plan, const doctor::DoctorFindings& f, const ProbeOutput& po,
                          const Measurement& m) {
  ProbeLimits l;
  l.ranks_per_node = plan.ranks;
  l.headroom = plan.headroom;
  l.timeout_s = plan.timeout_s;
  l.overhead = plan.overhead;
  // cpfold: the plan knows its iterations; another workload says them in its lines (`planned`),
  // or ran them all.
  l.planned_iters = m.iter_s ? (plan.planned_iters > 0 ? plan.planned_iters : PlannedIters(po)) : 0;
  l.iter_scale = plan.iter_scale;
  if (po.peak_mem_kind != "cpu_max_rss") {  // host memory is not compared with a GPU's
    for (size_t i = 0; i < plan.gpus.size(); ++i) {
      for (const auto& g : f.gpus) {
        if (g.index == plan.gpus[i] && g.memory_total_mib > 0)
          l.gpu_total_bytes[static_cast<int>(i)] = g.memory_total_mib * kMib;
      }
    }
  }
  return l;
}

struct ProbeOutcome {
  bool interrupted = false;
  std::vector<std::string> lines;  // for the readout and command.txt
};

// The feasibility probe: the launch without nsys, shortened. Stops (an error with the fix) when
// it fails, passes --timeout by itself, or predicts that the profiled run will not fit.
StatusOr<ProbeOutcome> RunProbe(const Plan& plan, const doctor::DoctorFindings& f, runner::ProcessRunner& runner,
                                std::ostream& err, const ExecuteOptions& options) {
  const OutputPaths& p = plan.out;
  ProbeOutcome outcome;
  const double cap_s = plan.cpfold ? 0 : plan.probe_cap_s;
  err << fmt::format(
      "cpprof: profile: probe: the same launch without nsys{} (timeout {} s{}); logs go to {}\n",
      plan.cpfold ? ", one iteration" : "", plan.timeout_s,
      cap_s > 0 ? fmt::format("; stopped after {:g} s unless it prints iteration lines (--probe-cap)", cap_s) : "",
      p.tmp_folder);
  std::unique_ptr<GpuMemoryPoller> poller;
  if (f.nvidia_smi_found && !plan.gpus.empty() && options.poll_s > 0) {
    poller = std::make_unique<GpuMemoryPoller>(runner, plan.env, options.poll_s);
  }
  Watched w;
  {
    LiveTee tee(p.tmp_probe_stdout_log, p.tmp_probe_stderr_log, options.live ? &err : nullptr);
    w = RunWatched(plan.probe_argv, plan.probe_env.empty() ? plan.env : plan.probe_env, plan.timeout_s,
                   options.kill_grace_s, runner, tee, cap_s);
  }
  std::map<int, int64_t> smi_peak_mib;
  if (poller) {
    poller->Stop();
    smi_peak_mib = poller->PeakMib();
  }
  if (!w.result.ok()) return w.result.status();
  const runner::ProcessResult& res = *w.result;
  CPPROF_RETURN_IF_ERROR(WriteText(p.probe_stdout_log, res.out));
  CPPROF_RETURN_IF_ERROR(WriteText(p.probe_stderr_log, res.err));
  std::string logs = fmt::format("{} and {} (copies in {})", p.probe_stderr_log, p.probe_stdout_log, p.tmp_folder);
  if (w.interrupted) {
    err << fmt::format("cpprof: profile: interrupted during the probe: stopped it ({} processes); logs: {}\n", w.killed,
                       logs);
    outcome.interrupted = true;
    return outcome;
  }
  if (w.capped) {
    // Not a failure: the workload was stopped on purpose; it is judged on the memory seen so far.
    err << fmt::format(
        "cpprof: profile: probe: no iteration line after {:g} s (--probe-cap): stopped it ({} processes); the "
        "profiled run goes on\n",
        cap_s, w.killed);
  } else if (w.timed_out) {
    return Error(ExitCode::kCheckFailed,
                 fmt::format("the probe (the launch without nsys{}) alone passed --timeout {} s and was killed ({} "
                             "processes), so the profiled run would too. Fix: a larger --timeout, a smaller problem, "
                             "more ranks, or --no-probe to skip the probe. Logs: {}",
                             plan.cpfold ? ", one iteration" : "", plan.timeout_s, w.killed, logs));
  }
  if (!res.ok() && !w.capped) {
    return Error(ExitCode::kExternal,
                 fmt::format("the probe (the same launch without nsys) failed ({}), so the profiled run would fail "
                             "too: a rank crashed. Read the logs: {}. Last lines of stderr:\n{}",
                             res.Describe(), logs, LastLines(res.err, 12)));
  }

  ProbeOutput po = ParseProbeOutput(res.out);
  Measurement m = MeasureProbe(plan, f, po, w, cap_s, smi_peak_mib, options);
  ProbeLimits l = ProbeLimitsOf(plan, f, po, m);
  Prediction pr = Predict(m, l);
  for (const auto& b : po.bad_lines) pr.warnings.push_back("unreadable iteration line: " + b);
  CPPROF_RETURN_IF_ERROR(WriteText(
      p.probe_json,
      ProbeJson(plan.probe_argv, m, l, pr, po).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
  for (const auto& line : pr.lines) err << "cpprof: profile: probe: " << line << '\n';
  for (const auto& wl : pr.warnings) err << "cpprof: warning: profile: probe: " << wl << '\n';
  if (!pr.ok()) {
    return Error(ExitCode::kCheckFailed, fmt::format("the probe predicts a failure: {} (probe results: {})",
                                                     fmt::join(pr.problems, " "), p.probe_json));
  }
  outcome.lines = pr.lines;
  for (const auto& wl : pr.warnings) outcome.lines.push_back("warning: " + wl);
  return outcome;
}

const char* kGitignore =
    "# Written by cpprof profile: the large, regenerable files stay out of git;\n"
    "# readouts, reports, records and functions-trace JSON files are kept.\n"
    "*.nsys-rep\n*.qdstrm\n*.sqlite\n*.sqlite-journal\n*.log\n";

// Before the run: the folders, an earlier result cleared (Guards allowed it), the .gitignore, the
// functions-trace JSON and the records (command.txt, doctor.json); the plan's warnings printed.
Status PrepareResults(const Plan& plan, const doctor::DoctorFindings& findings, runner::ProcessRunner& runner,
                      std::ostream& err) {
  const OutputPaths& p = plan.out;
  std::error_code ec;
  fs::create_directories(p.folder, ec);
  if (ec) return Error(ExitCode::kError, fmt::format("cannot create '{}': {}", p.folder, ec.message()));
  fs::create_directories(p.tmp_folder, ec);
  if (ec) return Error(ExitCode::kError, fmt::format("cannot create '{}': {}", p.tmp_folder, ec.message()));
  for (const auto& r : p.Results()) fs::remove(r, ec);  // Guards allowed it (--force or none there)
  if (!Exists(p.gitignore)) CPPROF_RETURN_IF_ERROR(WriteText(p.gitignore, kGitignore));
  if (!plan.out.functions_trace.empty()) CPPROF_RETURN_IF_ERROR(WriteFunctionsTrace(plan, runner, err));
  CPPROF_RETURN_IF_ERROR(WriteText(p.command_txt, DescribePlan(plan)));
  std::ostringstream dj;
  doctor::PrintDoctorJson(findings, dj);
  CPPROF_RETURN_IF_ERROR(WriteText(p.doctor_json, dj.str()));
  for (const auto& w : plan.warnings) err << "cpprof: warning: profile: " << w << '\n';
  return OkStatus();
}

// The profiled run (nsys over the launch) under the watchdog, its logs kept. Fails, naming the
// logs, when it timed out or failed; an interrupted run is not an error (Execute exits 130).
struct ProfiledRun {
  runner::ProcessResult result;
  bool interrupted = false;
  double wall_s = 0;
  std::string logs;  // "STDERR and STDOUT (copies in TMP)", for the messages that follow
};
StatusOr<ProfiledRun> RunUnderNsys(const Plan& plan, runner::ProcessRunner& runner, std::ostream& err,
                                   const ExecuteOptions& options) {
  const OutputPaths& p = plan.out;
  err << fmt::format("cpprof: profile: running {} rank(s) under nsys (timeout {} s); logs go to {}{}\n", plan.ranks,
                     plan.timeout_s, p.tmp_folder, options.live ? "; the run's output follows (--quiet hides it)" : "");
  Watched watched;
  {
    LiveTee tee(p.tmp_stdout_log, p.tmp_stderr_log, options.live ? &err : nullptr);
    watched = RunWatched(plan.argv, plan.env, plan.timeout_s, options.kill_grace_s, runner, tee);
  }
  if (!watched.result.ok()) return watched.result.status();
  ProfiledRun run;
  run.result = std::move(*watched.result);
  run.wall_s = watched.wall_s;
  const runner::ProcessResult& res = run.result;
  // The /tmp copies were written live (all of it, even past what is kept in memory).
  CPPROF_RETURN_IF_ERROR(WriteText(p.stdout_log, res.out));
  CPPROF_RETURN_IF_ERROR(WriteText(p.stderr_log, res.err));
  run.logs = fmt::format("{} and {} (copies in {})", p.stderr_log, p.stdout_log, p.tmp_folder);
  if (watched.interrupted) {
    err << fmt::format("cpprof: profile: interrupted: stopped the run ({} processes); logs: {}\n", watched.killed,
                       run.logs);
    run.interrupted = true;
    return run;
  }
  if (watched.timed_out) {
    return Error(ExitCode::kExternal,
                 fmt::format("the run passed --timeout {} s and was killed with its whole process tree ({} "
                             "processes). A rank may hang (a collective waiting for a peer?): see the logs {}. "
                             "Last lines of stderr:\n{}",
                             plan.timeout_s, watched.killed, run.logs, LastLines(res.err, 8)));
  }
  if (!res.ok()) {
    return Error(ExitCode::kExternal,
                 fmt::format("the profiled run failed ({}): a rank or nsys crashed. Read the logs: {}. Last lines "
                             "of stderr:\n{}",
                             res.Describe(), run.logs, LastLines(res.err, 12)));
  }
  return run;
}

// One report's SQLite export, with the fallbacks: only a .qdstrm left runs the importer, a
// .nsys-rep without its .sqlite runs 'nsys export'.
Status ExportOne(const Plan& plan, const doctor::DoctorFindings& findings, runner::ProcessRunner& runner,
                 const std::string& base, const std::string& logs, std::ostream& err) {
  const std::string nsys_rep = base + OutputSuffix(&OutputPaths::nsys_rep);
  const std::string qdstrm = base + OutputSuffix(&OutputPaths::qdstrm);
  const std::string sqlite = base + OutputSuffix(&OutputPaths::sqlite);
  runner::RunOptions tool;
  tool.env = plan.env;
  tool.timeout_s = 1800;
  if (!Exists(nsys_rep) && Exists(qdstrm)) {
    if (findings.importer.path.empty()) {
      return Error(ExitCode::kExternal, fmt::format("nsys left only {} and no QdstrmImporter was found to convert "
                                                    "it. See 'cpprof doctor'. Logs: {}",
                                                    qdstrm, logs));
    }
    err << fmt::format("cpprof: profile: nsys left only a .qdstrm; running the importer: {} -i {}{}\n",
                       findings.importer.path, qdstrm,
                       findings.profile_env.count("LD_LIBRARY_PATH")
                           ? " with LD_LIBRARY_PATH=" + findings.profile_env.at("LD_LIBRARY_PATH")
                           : "");
    auto ir = runner.Run({findings.importer.path, "-i", qdstrm}, tool);
    if (!ir.ok()) return ir.status();
    if (!ir->ok() || !Exists(nsys_rep)) {
      return Error(ExitCode::kExternal, fmt::format("the importer {} and wrote no {}: {}", ir->Describe(), nsys_rep,
                                                    LastLines(ir->err + ir->out, 5)));
    }
  }
  if (Exists(sqlite)) return OkStatus();
  if (!Exists(nsys_rep)) {
    return Error(ExitCode::kExternal,
                 fmt::format("nsys wrote no report ({} is missing). Read its messages in {}; try 'cpprof doctor "
                             "--deep'.",
                             nsys_rep, logs));
  }
  std::vector<std::string> argv = {plan.nsys, "export", "--type", "sqlite"};
  argv.insert(argv.end(), plan.export_options.begin(), plan.export_options.end());
  const std::string shown = fmt::format("{} {}", fmt::join(argv, " "), fs::path(nsys_rep).filename().string());
  for (const char* a : {"--force-overwrite", "true", "--output"}) argv.emplace_back(a);
  argv.push_back(sqlite);
  argv.push_back(nsys_rep);
  err << fmt::format("cpprof: profile: exporting SQLite: {}\n", shown);
  const auto began = std::chrono::steady_clock::now();
  auto xr = runner.Run(argv, tool);
  if (!xr.ok()) return xr.status();
  if (!xr->ok() || !Exists(sqlite)) {
    return Error(ExitCode::kExternal, fmt::format("'{}' {} and wrote no {}: {}", shown, xr->Describe(), sqlite,
                                                  LastLines(xr->err + xr->out, 5)));
  }
  err << fmt::format("cpprof: profile: exported in {:.1f} s\n",
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
  return OkStatus();
}

// The SQLite exports the readout is built from: one, or one per rank with --per-rank (a node of a
// multi-node run has only its own ranks' reports).
StatusOr<std::vector<std::string>> ExportReports(const Plan& plan, const doctor::DoctorFindings& findings,
                                                 runner::ProcessRunner& runner, const std::string& logs,
                                                 std::ostream& err) {
  const OutputPaths& p = plan.out;
  if (!plan.per_rank) {
    CPPROF_RETURN_IF_ERROR(ExportOne(plan, findings, runner, p.base, logs, err));
    return std::vector<std::string>{p.sqlite};
  }
  std::vector<std::string> exports, missing;
  for (const auto& b : p.rank_bases) {
    const std::string sqlite = b + OutputSuffix(&OutputPaths::sqlite);
    if (!Exists(b + OutputSuffix(&OutputPaths::nsys_rep)) && !Exists(b + OutputSuffix(&OutputPaths::qdstrm)) &&
        !Exists(sqlite)) {
      missing.push_back(fs::path(b).filename().string());
      continue;
    }
    CPPROF_RETURN_IF_ERROR(ExportOne(plan, findings, runner, b, logs, err));
    exports.push_back(sqlite);
  }
  if (exports.empty() || (plan.nnodes == 1 && !missing.empty())) {
    return Error(ExitCode::kExternal,
                 fmt::format("the per-rank nsys wrote no report for {} (expected {}.<rank>.nsys-rep). Read their "
                             "messages in {}; try 'cpprof doctor --deep'.",
                             fmt::join(missing, ", "), p.base, logs));
  }
  return exports;
}

// --compare: the seed's rule, a launcher or annotation change must not change the GPU work.
StatusOr<model::ReportDiff> CompareWithEarlier(const model::Report& report, const pipeline::ReportOptions& ro,
                                               const ExecuteOptions& options, std::ostream& err) {
  CPPROF_ASSIGN_OR_RETURN(model::Report before, pipeline::BuildReport(options.compare, ro));
  model::DiffOptions diff_options;
  diff_options.mem_tolerance = options.mem_tolerance;
  model::ReportDiff d = analysis::DiffReports(before, report, diff_options, pipeline::PeakMemoryPerRank);
  err << "cpprof: profile: compared with " << options.compare << ": " << d.sanity_line << '\n';
  return d;
}

// What the readout's head says of the run (render/profile_summary.h).
model::ProfileSummary Summarize(const Plan& plan, const std::vector<std::string>& probe_lines, const ProfiledRun& run) {
  model::ProfileSummary s;
  s.name = plan.name;
  s.nsys = plan.nsys;
  s.nsys_version = plan.nsys_version;
  s.preset = plan.preset == Preset::kFast ? "fast" : "full";
  s.nsys_options = plan.nsys_options;
  s.ranks_per_node = plan.ranks;
  s.nnodes = plan.nnodes;
  s.gpus = plan.gpus;
  s.wall_s = run.wall_s;
  s.dropped = plan.dropped;
  s.probe = plan.probe;
  s.probe_file = fs::path(plan.out.probe_json).filename().string();
  s.probe_lines = probe_lines;
  s.warnings = plan.warnings;
  s.workload_lines = WorkloadSummaries(run.result.out);
  return s;
}

}  // namespace

StatusOr<int> Execute(const Plan& plan, const doctor::DoctorFindings& findings, runner::ProcessRunner& runner,
                      std::ostream& out, std::ostream& err, const ExecuteOptions& options) {
  const OutputPaths& p = plan.out;
  CPPROF_RETURN_IF_ERROR(PrepareResults(plan, findings, runner, err));
  std::vector<std::string> probe_lines;
  if (plan.probe) {
    CPPROF_ASSIGN_OR_RETURN(ProbeOutcome po, RunProbe(plan, findings, runner, err, options));
    if (po.interrupted) return static_cast<int>(ExitCode::kInterrupted);
    probe_lines = po.lines;
    std::string probe_text = fmt::format("probe results ({}):\n", p.probe_json);
    for (const auto& l : probe_lines) probe_text += "  " + l + "\n";
    CPPROF_RETURN_IF_ERROR(WriteText(p.command_txt, DescribePlan(plan) + probe_text));
  }
  CPPROF_ASSIGN_OR_RETURN(ProfiledRun run, RunUnderNsys(plan, runner, err, options));
  if (run.interrupted) return static_cast<int>(ExitCode::kInterrupted);
  CPPROF_ASSIGN_OR_RETURN(std::vector<std::string> exports, ExportReports(plan, findings, runner, run.logs, err));

  // The readout, and the comparison with an earlier result.
  pipeline::ReportOptions report_options;
  report_options.exec = options.exec;
  if (!options.compare.empty()) report_options.top_kernels = 0;  // the sanity check compares every kernel
  CPPROF_ASSIGN_OR_RETURN(model::Report report, pipeline::BuildReport(exports, report_options));
  model::ProfileSummary summary = Summarize(plan, probe_lines, run);
  int rc = 0;
  if (!options.compare.empty()) {
    CPPROF_ASSIGN_OR_RETURN(summary.comparison, CompareWithEarlier(report, report_options, options, err));
    summary.compared_with = options.compare;
    if (!summary.comparison->same_work) rc = static_cast<int>(ExitCode::kCheckFailed);
  }
  std::ostringstream text, json, readout;
  render::PrintReportText(report, {}, text);
  render::PrintReportJson(report, {}, json);
  render::PrintProfileReadout(summary, report, readout);
  CPPROF_RETURN_IF_ERROR(WriteText(p.report_json, json.str()));
  CPPROF_RETURN_IF_ERROR(WriteText(p.readout_md, readout.str()));
  if (options.wall_s) *options.wall_s = run.wall_s;
  if (options.report) *options.report = std::move(report);
  out << text.str();
  err << fmt::format("cpprof: profile: wrote {} and {} ({:.1f} s)\n", p.readout_md, p.report_json, run.wall_s);
  return rc;
}

StatusOr<UnprofiledRun> RunWithoutProfiler(const std::vector<std::string>& argv,
                                           const std::map<std::string, std::string>& env, double timeout_s,
                                           const std::string& stdout_log, const std::string& stderr_log,
                                           runner::ProcessRunner& runner, std::ostream& err,
                                           const ExecuteOptions& options) {
  std::error_code ec;
  for (const auto& log : {stdout_log, stderr_log}) fs::create_directories(fs::path(log).parent_path(), ec);
  Watched w;
  {
    LiveTee tee(stdout_log, stderr_log, options.live ? &err : nullptr);
    w = RunWatched(argv, env, timeout_s, options.kill_grace_s, runner, tee);
  }
  if (!w.result.ok()) return w.result.status();
  UnprofiledRun r;
  r.result = std::move(*w.result);
  r.timed_out = w.timed_out;
  r.interrupted = w.interrupted;
  r.killed = w.killed;
  r.wall_s = w.wall_s;
  r.lines = ParseProbeOutput(r.result.out);
  return r;
}

std::string ResolveCompare(const std::string& previous) {
  for (const std::string& c : {previous, previous + ".sqlite"}) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec) && c.size() > 7 && c.compare(c.size() - 7, 7, ".sqlite") == 0) return c;
  }
  return "";
}

}  // namespace cpprof::profile
