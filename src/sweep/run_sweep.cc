// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "sweep/run_sweep.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/atomic_file.h"
#include "doctor/nvidia_smi.h"
#include "pipeline/build_report.h"
#include "profile/probe.h"
#include "profile/run_profile.h"
#include "render/efficiency_render.h"
#include "render/sweep_render.h"
#include "runner/environment.h"
#include "sweep/ladder.h"

namespace cpprof::sweep {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

constexpr int64_t kMib = 1024 * 1024;

std::string PointName(int n, const std::string& grid) { return fmt::format("n{}-{}", n, grid); }

double MeanShare(const model::Report& r, int64_t model::RankSummary::*field) {
  double sum = 0;
  int n = 0;
  for (const auto& rk : r.ranks) {
    if (rk.span_ns <= 0) continue;
    sum += static_cast<double>(rk.*field) / static_cast<double>(rk.span_ns);
    ++n;
  }
  return n ? sum / n : -1;
}

// What the capture's readout says, per steady iteration.
void FillFromReport(const model::Report& r, model::SweepPoint& p) {
  int iters = 0;
  for (const auto& it : r.window.iterations) iters += it.in_window;
  p.capture_iterations = iters;
  p.capture_iter_ms = static_cast<double>(r.window.iter_median_ns) / 1e6;
  const double per = iters > 0 ? iters : 1;
  p.exposed_transfer_share = MeanShare(r, &model::RankSummary::exposed_transfer_ns);
  p.waiting_share = MeanShare(r, &model::RankSummary::exposed_wait_ns);
  p.compute_share = MeanShare(r, &model::RankSummary::compute_ns);
  p.idle_share = MeanShare(r, &model::RankSummary::idle_ns);
  p.capture_peak_mem_bytes.clear();
  bool any = false;
  for (const auto& v : pipeline::PeakMemoryPerRank(r)) {
    p.capture_peak_mem_bytes.push_back(v ? *v : -1);
    any = any || v.has_value();
  }
  if (!any) p.capture_peak_mem_bytes.clear();
  std::vector<bool> has_child(r.modules.size(), false);
  for (const auto& m : r.modules) {
    if (m.parent >= 0) has_child[static_cast<size_t>(m.parent)] = true;
  }
  std::map<std::string, const model::ModuleEfficiency*> eff;
  if (r.efficiency.computed) {
    for (const auto& e : r.efficiency.modules) eff[e.path] = &e;
  }
  p.modules.clear();
  for (size_t i = 0; i < r.modules.size(); ++i) {
    const auto& m = r.modules[i];
    model::SweepModule s;
    s.name = m.name;
    std::vector<std::string> names;
    for (int k = static_cast<int>(i); k >= 0; k = r.modules[static_cast<size_t>(k)].parent) {
      names.push_back(r.modules[static_cast<size_t>(k)].name);
    }
    for (auto it = names.rbegin(); it != names.rend(); ++it) s.path += (s.path.empty() ? "" : "/") + *it;
    s.depth = m.depth;
    s.is_group = m.is_group;
    s.leaf = !has_child[i];
    s.cp = m.cp_distributed;
    s.ms = static_cast<double>(m.mean_busy_ns) / per / 1e6;
    s.max_ms = static_cast<double>(m.max_busy_ns) / per / 1e6;
    double comm = 0;
    for (const auto& pr : m.per_rank) comm += static_cast<double>(pr.comm_ns);
    s.comm_ms = m.per_rank.empty() ? 0 : comm / static_cast<double>(m.per_rank.size()) / per / 1e6;
    if (auto e = eff.find(s.path); e != eff.end()) {
      s.cost_key = e->second->cost_key;
      s.tflops = e->second->achieved_tflops;
      s.percent_of_peak = e->second->percent_of_peak;
    }
    p.modules.push_back(s);
  }
  p.efficiency_json = render::HasEfficiencyJson(r) ? render::EfficiencyJson(r).dump() : "";
}

// The line of the output that says "out of memory" (the reason, quoted in the point's detail).
std::string OomLine(const std::string& out, const std::string& err) {
  for (const std::string* t : {&err, &out}) {
    std::istringstream s(*t);
    for (std::string line; std::getline(s, line);) {
      std::string low = line;
      for (char& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (low.find("out of memory") != std::string::npos || low.find("outofmemory") != std::string::npos ||
          low.find("memoryallocation") != std::string::npos) {
        if (line.size() > 300) line = line.substr(0, 300) + "...";
        return line;
      }
    }
  }
  return "";
}

std::string Rel(const std::string& path, const std::string& base) {
  return fs::path(path).lexically_relative(base).string();
}

}  // namespace

Status WriteOutputs(model::SweepResult r, const std::string& out_dir, model::SweepResult* written) {
  AddSkipped(r.spec, r.points);
  SortPoints(r.spec, r.points);
  r.fits = Fits(r.spec, r.points, r.machine.gpu_memory_bytes);
  r.notes.clear();
  for (const auto& p : r.points) {
    if (p.status == "ok" && (p.capture_status == "skipped" || p.capture_status == "oom")) {
      r.notes.push_back(fmt::format("{} N={}: no capture: {}", p.grid, p.n, p.capture_detail));
    }
    if (p.status == "ok" && p.iter_s.empty()) {
      r.notes.push_back(
          fmt::format("{} N={}: the workload printed no steady iteration lines (cpprof-iter:), so it "
                      "has no timing",
                      p.grid, p.n));
    }
  }
  std::ostringstream md, html;
  render::PrintSweepMarkdown(r, md);
  render::PrintSweepHtml(r, html);
  std::string js = render::SweepJson(r).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  CPPROF_RETURN_IF_ERROR(WriteFileAtomically(out_dir + "/sweep.json", js));
  CPPROF_RETURN_IF_ERROR(WriteFileAtomically(out_dir + "/sweep.md", md.str()));
  CPPROF_RETURN_IF_ERROR(WriteFileAtomically(out_dir + "/sweep.html", html.str()));
  if (written) *written = std::move(r);
  return OkStatus();
}

namespace {

// The busy GPUs now (nvidia-smi's compute processes on the target GPUs), for the guards before
// each point: another job may have taken a GPU since the sweep started. The findings as they were
// when nvidia-smi does not answer.
doctor::DoctorFindings RefreshBusy(doctor::DoctorFindings f, runner::ProcessRunner& runner,
                                   const std::map<std::string, std::string>& env) {
  if (!f.nvidia_smi_found) return f;
  runner::RunOptions ro;
  ro.env = env;
  ro.timeout_s = 30;
  auto r = runner.Run({"nvidia-smi", "--query-compute-apps=pid,used_memory,gpu_uuid", "--format=csv"}, ro);
  if (!r.ok() || !r->ok()) return f;
  auto apps = doctor::ParseComputeApps(r->out);
  if (!apps.ok()) return f;
  f.apps = *apps;
  f.busy.clear();
  for (int t : f.targets) {
    doctor::BusyGpu b{t, {}};
    for (const auto& g : f.gpus) {
      if (g.index != t) continue;
      for (const auto& a : f.apps) {
        if (a.gpu_uuid == g.uuid) b.apps.push_back(a);
      }
    }
    if (!b.apps.empty()) f.busy.push_back(std::move(b));
  }
  return f;
}

class Sweep {
 public:
  Sweep(const SweepOptions& o, const doctor::DoctorFindings& f, const profile::PlanInputs& in,
        runner::ProcessRunner& runner, std::ostream& err)
      : o_(o), f_(f), in_(in), runner_(runner), err_(err) {
    result_.spec = o.spec;
    result_.machine = MachineFacts(f, o.gpus);
    result_.machine.cpprof_version = o.cpprof_version;
  }

  std::vector<model::SweepPoint>& points() { return result_.points; }

  Status Write() { return WriteOutputs(result_, o_.out_dir, &final_); }
  const model::SweepResult& final_result() const { return final_; }

  // Runs one point; false when interrupted (Ctrl-C).
  StatusOr<bool> RunPoint(const NextPoint& next) {
    model::SweepPoint p;
    p.n = next.n;
    p.grid = next.grid;
    p.origin = next.origin;
    ParseGrid(p.grid, p.cp0, p.cp1);
    p.ranks = p.cp0 * p.cp1;
    // The guards again, on the GPUs as they are now: a GPU taken since the sweep started is left
    // out (the first free ones are used) or stops the sweep here (the finished points kept).
    const doctor::DoctorFindings now = RefreshBusy(f_, runner_, in_.caller_env);
    CPPROF_ASSIGN_OR_RETURN(PointPlans plans, PlanGuarded(p, now));
    p.timing_argv = plans.timing.launch;
    profile::ExecuteOptions eo;
    eo.exec = o_.exec;
    eo.live = o_.live;
    eo.kill_grace_s = o_.kill_grace_s;
    CPPROF_ASSIGN_OR_RETURN(profile::UnprofiledRun t, TimingRun(plans, eo, p));
    if (t.interrupted) return false;
    ReadTimings(t, p);
    if (p.status == "ok" && CaptureFits(t, plans, now, p)) {
      CPPROF_ASSIGN_OR_RETURN(bool go_on, Capture(plans, now, eo, p));
      if (!go_on) return false;
    }
    result_.points.push_back(p);
    return true;
  }

 private:
  // The point's two plans (timing and capture), checked by the guards on the GPUs as they are now.
  StatusOr<PointPlans> PlanGuarded(const model::SweepPoint& p, const doctor::DoctorFindings& now) {
    CPPROF_ASSIGN_OR_RETURN(PointPlans plans, PlanPoint(o_, p.n, p.grid, now, in_));
    profile::ProfileOptions guard_options;
    guard_options.force = true;
    guard_options.gpus = o_.gpus;
    std::vector<Status> stops = profile::Guards(plans.capture, guard_options, now);
    if (!stops.empty()) {
      return Status(stops.front().code(),
                    fmt::format("{} N={}: {} The finished points are kept in {}/sweep.json: rerun the same command "
                                "to go on.",
                                p.grid, p.n, stops.front().message(), o_.out_dir));
    }
    return plans;
  }

  // The timing run, without the profiler (also the capture's feasibility probe): its wall time,
  // and unless interrupted its status (ok, timeout, oom, failed) with the logs named.
  StatusOr<profile::UnprofiledRun> TimingRun(const PointPlans& plans, const profile::ExecuteOptions& eo,
                                             model::SweepPoint& p) {
    err_ << fmt::format(
        "cpprof: sweep: {} N={} ({}): timing run without the profiler ({} + {} iterations, timeout {} s)\n", p.grid,
        p.n, p.origin, o_.spec.warmup, o_.spec.iters, o_.timeout_s);
    const std::string base = o_.out_dir + "/points/" + PointName(p.n, p.grid);
    const std::string out_log = base + ".timing.stdout.log", err_log = base + ".timing.stderr.log";
    CPPROF_ASSIGN_OR_RETURN(profile::UnprofiledRun t,
                            profile::RunWithoutProfiler(plans.timing.launch, plans.timing.env, o_.timeout_s, out_log,
                                                        err_log, runner_, err_, eo));
    p.timing_wall_s = t.wall_s;
    if (t.interrupted) return t;
    const std::string logs = fmt::format("{} and {}", Rel(err_log, o_.out_dir), Rel(out_log, o_.out_dir));
    if (t.timed_out) {
      p.status = "timeout";
      p.detail =
          fmt::format("passed --timeout {} s and was killed ({} processes); logs: {}", o_.timeout_s, t.killed, logs);
    } else if (!t.result.ok() && LooksLikeOutOfMemory(t.result.out, t.result.err)) {
      p.status = "oom";
      std::string line = OomLine(t.result.out, t.result.err);
      p.detail = fmt::format("ran out of GPU memory ({}){}; logs: {}", t.result.Describe(),
                             line.empty() ? "" : ": " + line, logs);
    } else if (!t.result.ok()) {
      p.status = "failed";
      p.detail = fmt::format("the timing run failed ({}); logs: {}. Last lines of stderr: {}", t.result.Describe(),
                             logs, profile::LastLines(t.result.err, 3));
    } else {
      p.status = "ok";
    }
    return t;
  }

  // The timing run's steady iterations and peak memory per rank, and the point's status line.
  void ReadTimings(const profile::UnprofiledRun& t, model::SweepPoint& p) {
    std::vector<IterLine> lines;
    for (const auto& l : t.lines.iters) lines.push_back({l.rank, l.iter, l.warmup, l.wall_s});
    SteadyTimes st = Steady(lines);
    p.iter_s = st.iter_s;
    p.median_iter_s = st.median_s;
    p.warmup_iters = st.warmup;
    std::map<int, int64_t> peaks = profile::PeakByRank(t.lines);
    p.peak_mem_kind = t.lines.peak_mem_kind;
    if (!peaks.empty()) {
      p.peak_mem_bytes.assign(static_cast<size_t>(peaks.rbegin()->first + 1), -1);
      for (const auto& [rank, b] : peaks) p.peak_mem_bytes[static_cast<size_t>(rank)] = b;
    }
    err_ << fmt::format("cpprof: sweep: {} N={}: {}{}\n", p.grid, p.n, p.status,
                        p.status == "ok" ? fmt::format(", median iteration {:.3f} ms over {} steady iterations",
                                                       p.median_iter_s * 1000, p.iter_s.size())
                                         : ": " + p.detail);
  }

  // Will the capture fit? The probe's prediction, from the timing run; a capture predicted to
  // fail is skipped (capture_status "skipped", with why).
  bool CaptureFits(const profile::UnprofiledRun& t, const PointPlans& plans, const doctor::DoctorFindings& now,
                   model::SweepPoint& p) {
    profile::Measurement m;
    m.wall_s = t.wall_s;
    m.peak_by_rank = profile::PeakByRank(t.lines);
    m.iter_s = p.median_iter_s > 0 ? std::optional<double>(p.median_iter_s) : std::nullopt;
    m.iter_total_s = profile::IterTotalSeconds(t.lines);
    profile::ProbeLimits lim;
    lim.ranks_per_node = p.ranks;
    lim.headroom = plans.capture.headroom;
    lim.timeout_s = o_.timeout_s;
    lim.overhead = plans.capture.overhead;
    lim.planned_iters = m.iter_s ? o_.spec.capture_iters + o_.spec.warmup : 0;
    if (t.lines.peak_mem_kind != "cpu_max_rss") {
      for (size_t i = 0; i < plans.capture.gpus.size(); ++i) {
        for (const auto& g : now.gpus) {
          if (g.index == plans.capture.gpus[i] && g.memory_total_mib > 0) {
            lim.gpu_total_bytes[static_cast<int>(i)] = g.memory_total_mib * kMib;
          }
        }
      }
    }
    profile::Prediction pr = profile::Predict(m, lim);
    if (pr.ok()) return true;
    p.capture_status = "skipped";
    p.capture_detail = fmt::format("the timing run predicts the capture would fail: {}", fmt::join(pr.problems, " "));
    err_ << "cpprof: sweep: " << p.grid << " N=" << p.n << ": " << p.capture_detail << '\n';
    return false;
  }

  // One nsys capture, fast preset, read in-process; false when interrupted.
  StatusOr<bool> Capture(const PointPlans& plans, const doctor::DoctorFindings& now, profile::ExecuteOptions eo,
                         model::SweepPoint& p) {
    p.capture_argv = plans.capture.argv;
    err_ << fmt::format("cpprof: sweep: {} N={}: one nsys capture (fast preset, {} + {} iterations)\n", p.grid, p.n,
                        o_.spec.warmup, o_.spec.capture_iters);
    model::Report report;
    double wall = 0;
    eo.report = &report;
    eo.wall_s = &wall;
    std::ostringstream readout;
    StatusOr<int> rc = profile::Execute(plans.capture, now, runner_, readout, err_, eo);
    p.capture_files = Rel(plans.capture.out.base, o_.out_dir);
    if (rc.ok() && *rc == static_cast<int>(ExitCode::kInterrupted)) return false;
    if (!rc.ok() && LooksLikeOutOfMemory(rc.status().message(), "")) {
      // It ran without the profiler: nsys's own memory tipped it over. The timings stand.
      p.capture_status = "oom";
      p.capture_detail = fmt::format("the capture ran out of GPU memory under nsys (the timing run did not): {}",
                                     rc.status().message());
    } else if (!rc.ok()) {
      p.capture_status = "failed";
      p.capture_detail = fmt::format("the capture failed: {}", rc.status().message());
    } else {
      p.capture_status = "ok";
      p.capture_wall_s = wall;
      FillFromReport(report, p);
    }
    return true;
  }

  const SweepOptions& o_;
  const doctor::DoctorFindings& f_;
  const profile::PlanInputs& in_;
  runner::ProcessRunner& runner_;
  std::ostream& err_;
  model::SweepResult result_, final_;
};

}  // namespace

model::SweepMachine MachineFacts(const doctor::DoctorFindings& f, const std::vector<int>& gpus) {
  model::SweepMachine m;
  std::set<int> wanted(gpus.begin(), gpus.end());
  for (const auto& g : f.gpus) {
    m.gpus.push_back(
        fmt::format("{}: {}, {} MiB, compute capability {}", g.index, g.name, g.memory_total_mib, g.compute_cap));
    bool target = wanted.empty() ? m.gpu_name.empty() : wanted.count(g.index) > 0 && m.gpu_name.empty();
    if (target) {
      m.gpu_name = g.name;
      m.gpu_memory_bytes = g.memory_total_mib > 0 ? g.memory_total_mib * kMib : 0;
    }
  }
  if (f.topology) {
    std::vector<std::string> links;
    for (const auto& l : f.topology->links) links.push_back(fmt::format("{}-{} {}", l.a, l.b, l.code));
    m.interconnect = fmt::format("{}", fmt::join(links, ", "));
  }
  if (const doctor::NsysCandidate* c = f.Chosen()) {
    m.nsys = fmt::format("{} ({})", c->path, c->version ? c->version->ToString() : c->version_text);
  }
  m.python = f.python.version;
  m.torch = f.python.torch_version;
  return m;
}

StatusOr<PointPlans> PlanPoint(const SweepOptions& o, int n, const std::string& grid, const doctor::DoctorFindings& f,
                               const profile::PlanInputs& in) {
  int cp0 = 1, cp1 = 1;
  if (!ParseGrid(grid, cp0, cp1)) return Error(ExitCode::kUsage, fmt::format("'{}' is not a CP grid", grid));
  const model::SweepSpec& s = o.spec;
  auto options = [&](int iters) -> StatusOr<profile::ProfileOptions> {
    profile::ProfileOptions po;
    po.name = PointName(n, grid);
    po.preset = "fast";
    po.results_dir = o.out_dir;
    po.workflow = "points";
    po.force = true;  // the sweep's own folder: an unfinished point's files are replaced
    po.no_probe = true;
    po.timeout_s = o.timeout_s;
    po.gpus = o.gpus;
    po.nproc_per_node = cp0 * cp1;
    po.dry_run = o.dry_run;
    if (s.arg_template.empty()) {
      // The shorthand MODE N RANKS picks a square grid, else 1 x RANKS; another grid is passed on.
      po.args = {s.mode, std::to_string(n), std::to_string(cp0 * cp1)};
      if (profile::CpGrid(cp0 * cp1) != std::make_pair(cp0, cp1)) {
        for (const std::string& a :
             {std::string("--cp0"), std::to_string(cp0), std::string("--cp1"), std::to_string(cp1)}) {
          po.args.push_back(a);
        }
      }
      for (const std::string& a :
           {std::string("--iters"), std::to_string(iters), std::string("--warmup"), std::to_string(s.warmup)}) {
        po.args.push_back(a);
      }
      if (!s.dtype.empty()) {
        po.args.push_back("--dtype");
        po.args.push_back(s.dtype);
      }
      po.args.insert(po.args.end(), s.extra_args.begin(), s.extra_args.end());
    } else {
      TemplateValues v{n, cp0, cp1, iters, s.warmup, s.dtype};
      CPPROF_ASSIGN_OR_RETURN(po.args, ExpandTemplate(s.arg_template, v));
    }
    return po;
  };
  PointPlans plans;
  CPPROF_ASSIGN_OR_RETURN(profile::ProfileOptions capture, options(s.capture_iters));
  CPPROF_ASSIGN_OR_RETURN(plans.capture, profile::BuildPlan(capture, f, in));
  CPPROF_ASSIGN_OR_RETURN(profile::ProfileOptions timing, options(s.iters));
  CPPROF_ASSIGN_OR_RETURN(plans.timing, profile::BuildPlan(timing, f, in));
  return plans;
}

namespace {

// Every grid must fit the free GPUs before anything runs.
Status CheckGridsFit(const SweepOptions& o, const doctor::DoctorFindings& f, const profile::PlanInputs& in,
                     std::ostream& err) {
  for (const auto& grid : o.spec.grids) {
    CPPROF_ASSIGN_OR_RETURN(PointPlans plans, PlanPoint(o, o.spec.sizes.front(), grid, f, in));
    profile::ProfileOptions guard_options;
    guard_options.force = true;
    guard_options.gpus = o.gpus;
    std::vector<Status> stops = profile::Guards(plans.capture, guard_options, f);
    if (!stops.empty()) {
      for (size_t i = 1; i < stops.size(); ++i) err << "cpprof: error: sweep: " << stops[i].message() << '\n';
      return Status(stops.front().code(), fmt::format("grid {}: {}", grid, stops.front().message()));
    }
  }
  return OkStatus();
}

// An earlier sweep in --out: its finished points are resumed (kept, not run again); a sweep of
// another matrix, or a folder that holds no sweep, is refused (unless --force).
Status ResumeEarlierSweep(const SweepOptions& o, const std::string& state, Sweep& sweep, std::ostream& err) {
  std::error_code ec;
  CPPROF_ASSIGN_OR_RETURN(std::optional<model::SweepResult> before,
                          o.force ? StatusOr<std::optional<model::SweepResult>>(std::optional<model::SweepResult>())
                                  : ReadSweepJson(state));
  if (!before && !o.force && fs::is_directory(o.out_dir, ec) && !fs::is_empty(o.out_dir, ec)) {
    return Error(ExitCode::kUsage,
                 fmt::format("--out {} is a folder that holds no sweep (no sweep.json). Pick an empty "
                             "or new folder, or pass --force to write the sweep there anyway",
                             o.out_dir));
  }
  if (!before) return OkStatus();
  std::string change = SpecChange(before->spec, o.spec);
  if (!change.empty()) {
    return Error(ExitCode::kUsage,
                 fmt::format("{} holds a sweep of another matrix or workload ({}). Rerun it with the same options to "
                             "resume it, pick another --out, or pass --force to start again there (its points are "
                             "run again)",
                             state, change));
  }
  std::vector<std::string> kept;
  int dropped = 0;
  for (const auto& p : before->points) {
    if (p.Finished()) {
      sweep.points().push_back(p);
      kept.push_back(fmt::format("{} N={}", p.grid, p.n));
    } else if (p.status != "skipped") {
      ++dropped;
    }
  }
  err << fmt::format("cpprof: sweep: resuming {}: {} finished point{} kept, not run again ({}){}\n", state, kept.size(),
                     kept.size() == 1 ? "" : "s", fmt::join(kept, ", "),
                     dropped ? fmt::format("; {} unfinished point{} run again", dropped, dropped == 1 ? "" : "s") : "");
  return OkStatus();
}

// The points that failed or timed out (or whose capture failed): an error that lists them.
Status FailedPoints(const model::SweepResult& r) {
  std::vector<std::string> failed;
  for (const auto& p : r.points) {
    if (p.status == "failed" || p.status == "timeout" || (p.status == "ok" && p.capture_status == "failed")) {
      failed.push_back(fmt::format("{} N={}: {}", p.grid, p.n, p.status == "ok" ? p.capture_detail : p.detail));
    }
  }
  if (failed.empty()) return OkStatus();
  return Error(ExitCode::kExternal,
               fmt::format("{} point{} failed (rerun the same command to retry them; a larger --timeout for those "
                           "that passed it):\n  {}",
                           failed.size(), failed.size() == 1 ? "" : "s", fmt::join(failed, "\n  ")));
}

}  // namespace

StatusOr<int> RunSweep(const SweepOptions& o, const doctor::DoctorFindings& f, const profile::PlanInputs& in,
                       runner::ProcessRunner& runner, std::ostream& out, std::ostream& err) {
  const std::string state = o.out_dir + "/sweep.json";
  CPPROF_RETURN_IF_ERROR(CheckGridsFit(o, f, in, err));
  Sweep sweep(o, f, in, runner, err);
  CPPROF_RETURN_IF_ERROR(ResumeEarlierSweep(o, state, sweep, err));
  std::error_code ec;
  fs::create_directories(o.out_dir + "/points", ec);
  if (ec) return Error(ExitCode::kError, fmt::format("cannot create '{}/points': {}", o.out_dir, ec.message()));
  CPPROF_RETURN_IF_ERROR(sweep.Write());
  int ran = 0;
  while (auto next = Next(o.spec, sweep.points())) {
    CPPROF_ASSIGN_OR_RETURN(bool go_on, sweep.RunPoint(*next));
    ++ran;
    CPPROF_RETURN_IF_ERROR(sweep.Write());
    if (!go_on) {
      err << fmt::format(
          "cpprof: sweep: interrupted at {} N={}: the finished points are kept in {}; rerun the same "
          "command to go on\n",
          next->grid, next->n, state);
      return static_cast<int>(ExitCode::kInterrupted);
    }
  }
  CPPROF_RETURN_IF_ERROR(sweep.Write());
  const model::SweepResult& r = sweep.final_result();
  render::PrintSweepMarkdown(r, out);
  err << fmt::format("cpprof: sweep: wrote {0}/sweep.json, {0}/sweep.md and {0}/sweep.html ({1} point{2} run now)\n",
                     o.out_dir, ran, ran == 1 ? "" : "s");
  CPPROF_RETURN_IF_ERROR(FailedPoints(r));
  return 0;
}

StatusOr<int> RenderSweep(const std::string& out_dir, std::ostream& out, std::ostream& err) {
  const std::string state = out_dir + "/sweep.json";
  CPPROF_ASSIGN_OR_RETURN(std::optional<model::SweepResult> r, ReadSweepJson(state));
  if (!r) {
    return Error(
        ExitCode::kBadInput,
        fmt::format("--render: no {} to render. Run the sweep first (the same command without --render)", state));
  }
  model::SweepResult written;
  CPPROF_RETURN_IF_ERROR(WriteOutputs(std::move(*r), out_dir, &written));
  render::PrintSweepMarkdown(written, out);
  err << fmt::format("cpprof: sweep: rendered {0}/sweep.md and {0}/sweep.html from {0}/sweep.json (nothing run)\n",
                     out_dir);
  return 0;
}

}  // namespace cpprof::sweep
