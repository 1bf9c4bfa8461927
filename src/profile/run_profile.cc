#include "profile/run_profile.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "doctor/doctor_render.h"
#include "doctor/functions_trace.h"
#include "pipeline/build_report.h"
#include "profile/process_tree.h"
#include "render/report_render.h"
#include "runner/environment.h"

namespace cpprof::profile {

namespace {

namespace fs = std::filesystem;

Status WriteText(const std::string& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return Error(ExitCode::kError, fmt::format("cannot write '{}'", path));
  return OkStatus();
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

// Watches a run from a second thread: at the deadline, or on SIGINT/SIGTERM, it stops the whole
// process tree under cpprof. The ProcessRunner then sees its child end and returns.
class Watchdog {
 public:
  Watchdog(double timeout_s, double grace_s) : grace_s_(grace_s) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) sig_r_ = fds[0], sig_w_ = fds[1];
    if (::pipe2(fds, O_CLOEXEC) == 0) done_r_ = fds[0], done_w_ = fds[1];
    g_signal_fd = sig_w_;
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
    deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
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
  int killed() const { return killed_; }

 private:
  void Watch() {
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out_ = true;
        break;
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
  int sig_r_ = -1, sig_w_ = -1, done_r_ = -1, done_w_ = -1;
  struct sigaction old_int_ {}, old_term_ {};
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
  std::atomic<bool> timed_out_{false}, interrupted_{false};
  std::atomic<int> killed_{0};
};

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

// The workload's own summary lines (cpfold prints "cpfold: {json}" with time and peak memory).
std::vector<std::string> WorkloadSummaries(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream s(out);
  for (std::string line; std::getline(s, line);) {
    if (line.find("cpfold: {") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

Status WriteFunctionsTrace(const Plan& plan) {
  CPPROF_ASSIGN_OR_RETURN(std::vector<doctor::FunctionEntry> entries, doctor::ReadSpecFile(plan.trace_spec));
  std::vector<doctor::TraceEntry> base;
  if (!plan.trace_base.empty()) {
    auto text = runner::Environment::ReadText(plan.trace_base, 16u << 20);
    if (!text) return Error(ExitCode::kBadInput, fmt::format("cannot read '{}'", plan.trace_base));
    CPPROF_ASSIGN_OR_RETURN(base, doctor::ParseTraceJson(*text, plan.trace_base));
  }
  return doctor::WriteTraceAtomically(plan.trace_json, doctor::MergeTrace(base, entries, "cpfold"));
}

const char* kGitignore =
    "# Written by cpprof profile: the large, regenerable files stay out of git;\n"
    "# readouts, reports, records and functions-trace JSON files are kept.\n"
    "*.nsys-rep\n*.qdstrm\n*.sqlite\n*.sqlite-journal\n*.log\n";

}  // namespace

StatusOr<int> Execute(const Plan& plan, const doctor::DoctorFindings& findings, runner::ProcessRunner& runner,
                      std::ostream& out, std::ostream& err, const ExecuteOptions& options) {
  const OutputPaths& p = plan.out;
  std::error_code ec;
  fs::create_directories(p.folder, ec);
  if (ec) return Error(ExitCode::kError, fmt::format("cannot create '{}': {}", p.folder, ec.message()));
  fs::create_directories(p.tmp_folder, ec);
  if (ec) return Error(ExitCode::kError, fmt::format("cannot create '{}': {}", p.tmp_folder, ec.message()));
  for (const auto& r : p.Results()) fs::remove(r, ec);  // Guards allowed it (--force or none there)
  if (!Exists(p.gitignore)) CPPROF_RETURN_IF_ERROR(WriteText(p.gitignore, kGitignore));
  if (!plan.trace_spec.empty()) CPPROF_RETURN_IF_ERROR(WriteFunctionsTrace(plan));
  CPPROF_RETURN_IF_ERROR(WriteText(p.command_txt, DescribePlan(plan)));
  {
    std::ostringstream dj;
    doctor::PrintDoctorJson(findings, dj);
    CPPROF_RETURN_IF_ERROR(WriteText(p.doctor_json, dj.str()));
  }
  for (const auto& w : plan.warnings) err << "cpprof: warning: profile: " << w << '\n';
  const double timeout_s = plan.timeout_s;
  err << fmt::format("cpprof: profile: running {} rank(s) under nsys (timeout {} s); logs go to {}\n", plan.ranks,
                     timeout_s, p.tmp_folder);

  // ---- the run ----
  runner::RunOptions ro;
  ro.env = plan.env;
  ro.timeout_s = timeout_s + options.kill_grace_s + 60;  // a backstop: the watchdog stops it first
  ro.max_output = 256u << 20;
  auto t0 = std::chrono::steady_clock::now();
  StatusOr<runner::ProcessResult> r = Error(ExitCode::kError, "not run");
  bool timed_out = false, interrupted = false;
  int killed = 0;
  {
    Watchdog dog(timeout_s, options.kill_grace_s);
    r = runner.Run(plan.argv, ro);
    dog.Stop();
    timed_out = dog.timed_out();
    interrupted = dog.interrupted();
    killed = dog.killed();
  }
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok()) return r.status();
  const runner::ProcessResult& res = *r;
  timed_out = timed_out || res.timed_out;
  for (const auto& [path, text] : {std::pair{p.stdout_log, &res.out}, {p.stderr_log, &res.err},
                                   {p.tmp_stdout_log, &res.out}, {p.tmp_stderr_log, &res.err}}) {
    CPPROF_RETURN_IF_ERROR(WriteText(path, *text));
  }
  std::string logs = fmt::format("{} and {} (copies in {})", p.stderr_log, p.stdout_log, p.tmp_folder);
  if (interrupted) {
    err << fmt::format("cpprof: profile: interrupted: stopped the run ({} processes); logs: {}\n", killed, logs);
    return static_cast<int>(ExitCode::kInterrupted);
  }
  if (timed_out) {
    return Error(ExitCode::kExternal,
                 fmt::format("the run passed --timeout {} s and was killed with its whole process tree ({} "
                             "processes). A rank may hang (a collective waiting for a peer?): see the logs {}. "
                             "Last lines of stderr:\n{}",
                             timeout_s, killed, logs, LastLines(res.err, 8)));
  }
  if (!res.ok()) {
    return Error(ExitCode::kExternal,
                 fmt::format("the profiled run failed ({}): a rank or nsys crashed. Read the logs: {}. Last lines "
                             "of stderr:\n{}",
                             res.Describe(), logs, LastLines(res.err, 12)));
  }

  // ---- the report: importer and export fallbacks ----
  runner::RunOptions tool;
  tool.env = plan.env;
  tool.timeout_s = 1800;
  if (!Exists(p.nsys_rep) && Exists(p.qdstrm)) {
    if (findings.importer.path.empty()) {
      return Error(ExitCode::kExternal, fmt::format("nsys left only {} and no QdstrmImporter was found to convert it. "
                                                    "See 'cpprof doctor'. Logs: {}",
                                                    p.qdstrm, logs));
    }
    err << fmt::format("cpprof: profile: nsys left only a .qdstrm; running the importer: {} -i {}{}\n",
                       findings.importer.path, p.qdstrm,
                       findings.profile_env.count("LD_LIBRARY_PATH")
                           ? " with LD_LIBRARY_PATH=" + findings.profile_env.at("LD_LIBRARY_PATH")
                           : "");
    auto ir = runner.Run({findings.importer.path, "-i", p.qdstrm}, tool);
    if (!ir.ok()) return ir.status();
    if (!ir->ok() || !Exists(p.nsys_rep)) {
      return Error(ExitCode::kExternal, fmt::format("the importer {} and wrote no {}: {}", ir->Describe(), p.nsys_rep,
                                                    LastLines(ir->err + ir->out, 5)));
    }
  }
  if (!Exists(p.sqlite)) {
    if (!Exists(p.nsys_rep)) {
      return Error(ExitCode::kExternal,
                   fmt::format("nsys wrote no report ({} is missing). Read its messages in {}; try 'cpprof doctor "
                               "--deep'.",
                               p.nsys_rep, logs));
    }
    err << fmt::format("cpprof: profile: exporting SQLite: {} export --type sqlite\n", plan.nsys);
    auto xr = runner.Run({plan.nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", p.sqlite,
                          p.nsys_rep},
                         tool);
    if (!xr.ok()) return xr.status();
    if (!xr->ok() || !Exists(p.sqlite)) {
      return Error(ExitCode::kExternal, fmt::format("'nsys export --type sqlite' {} and wrote no {}: {}", xr->Describe(),
                                                    p.sqlite, LastLines(xr->err + xr->out, 5)));
    }
  }

  // ---- the readout ----
  CPPROF_ASSIGN_OR_RETURN(model::Report report, pipeline::BuildReport(p.sqlite, {}));
  std::ostringstream text, json;
  render::PrintReportText(report, {}, text);
  render::PrintReportJson(report, {}, json);
  CPPROF_RETURN_IF_ERROR(WriteText(p.report_json, json.str()));
  std::string md = fmt::format("# cpprof profile: {}\n\n", plan.name);
  md += fmt::format("- nsys: `{}` ({})\n", plan.nsys, plan.nsys_version);
  md += fmt::format("- preset: {} (`{}`)\n", plan.preset == Preset::kFast ? "fast" : "full",
                    fmt::join(plan.nsys_options, " "));
  md += fmt::format("- ranks: {} per node x {} node(s){}\n", plan.ranks, plan.nnodes,
                    plan.gpus.empty() ? "" : fmt::format(", GPUs {}", fmt::join(plan.gpus, ",")));
  md += fmt::format("- wall time of the profiled run: {:.1f} s\n", wall_s);
  if (plan.preset == Preset::kFull) {
    md += "- timings were taken under the full option set: expect them slower than an unprofiled run "
          "(most where the run is launch-bound)\n";
  }
  if (!plan.dropped.empty()) {
    md += "\n## Options dropped or inert\n\n";
    for (const auto& d : plan.dropped) md += "- " + d + "\n";
  }
  if (!plan.warnings.empty()) {
    md += "\n## Warnings\n\n";
    for (const auto& w : plan.warnings) md += "- " + w + "\n";
  }
  if (auto lines = WorkloadSummaries(res.out); !lines.empty()) {
    md += "\n## The workload's own summary\n\n```\n";
    for (const auto& l : lines) md += l + "\n";
    md += "```\n";
  }
  md += "\n## Report\n\n```\n" + text.str() + "```\n";
  CPPROF_RETURN_IF_ERROR(WriteText(p.readout_md, md));
  out << text.str();
  err << fmt::format("cpprof: profile: wrote {} and {} ({:.1f} s)\n", p.readout_md, p.report_json, wall_s);
  return 0;
}

}  // namespace cpprof::profile
