// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof export --format chrome-trace FILE.sqlite [-o OUT.json] [--ranks 0,1] [--start-ns N]
//   [--end-ns N | --window W] [--no-nvtx] [--api] [--flows] [--no-cp-view]
// cpprof export --format kineto FILE.sqlite -o DIR   (one Kineto trace per rank, for HTA)
#include <fmt/format.h>
#include <sys/stat.h>

#include <filesystem>
#include <future>

#include "base/atomic_file.h"
#include "base/input_files.h"
#include "base/parallel.h"
#include "cli/command.h"
#include "pipeline/chrome_trace.h"

namespace cpprof::cli {

namespace {

// What the trace holds, said after it is written.
std::string WroteLine(const pipeline::ChromeTraceSummary& summary, const std::string& where, bool cp_view) {
  std::string cp;
  if (cp_view) {
    cp = fmt::format(
        "; CP view: {} slices, {} collectives linked across ranks, {}", summary.cp_slices, summary.cp_flows,
        summary.cp_path_iterations ? fmt::format("the critical path of {} iterations", summary.cp_path_iterations)
                                   : std::string("no critical path (no steady iteration replayed)"));
  }
  return fmt::format(
      "cpprof: wrote {} trace events to {}: {} ranks, {} GPU ops, {} NVTX ranges, {} API calls, {} flows{}. "
      "Open it at https://ui.perfetto.dev\n",
      summary.events, where, summary.ranks, summary.gpu_ops, summary.nvtx_ranges, summary.api_calls, summary.flows, cp);
}

class ExportCommand : public Command {
 public:
  void Declare(CLI::App& app) override {
    app.add_option("exports", files_,
                   "An nsys SQLite export (nsys export --type sqlite REPORT.nsys-rep; .sqlite.xz, .gz and .zst read as "
                   "they are), or the exports of one run "
                   "captured per rank or per node (files, a directory, a quoted glob): one trace, a process per rank, "
                   "on one clock")
        ->required();
    app.add_option("-f,--format", format_,
                   "Output format: chrome-trace (Chrome Trace Event JSON for ui.perfetto.dev), kineto (one "
                   "Kineto-style trace per rank in the -o folder, for Holistic Trace Analysis; docs/kineto.md)")
        ->check(CLI::IsMember({"chrome-trace", "kineto"}))
        ->capture_default_str();
    app.add_option("-o,--output", output_,
                   "Output file ('-' or none: stdout); written whole or not at all, never onto the export");
    app.add_flag("--force", force_,
                 "Replace the -o file when it exists; read several exports as one run even when they look like "
                 "separate runs (commands, start times, capture spans or launcher ids differ) or one capture given "
                 "twice");
    app.add_option("--ranks", options_.ranks, "Keep only these ranks (comma-separated)")->delimiter(',');
    app.add_option(
        "--start-ns", start_ns_,
        "Keep events that end at or after this time (ns of the export's clock; of the first export's with several)");
    app.add_option("--end-ns", end_ns_, "Keep events that start at or before this time (ns, the same clock)");
    app.add_flag("--no-nvtx", no_nvtx_, "Leave out NVTX ranges");
    app.add_flag("--api", options_.api, "Add CUDA runtime API calls on their CPU threads");
    app.add_flag("--flows", options_.flows, "Add flow arrows from each CUDA API launch to its GPU op (implies --api)");
    app.add_option("--window", window_,
                   "Keep the events that overlap this window, as cpprof report's --window: steady (the "
                   "iterations after warm-up), all, iter:N or A:B (session-clock seconds). chrome-trace: the CP "
                   "view's numbers are then that window's readout's (default: the whole capture); kineto: default "
                   "steady, as the readout");
    app.add_flag("--no-cp-view", no_cp_view_,
                 "chrome-trace: leave out the CP view (per rank: module spans, communication split into waiting and "
                 "transfer, flows across ranks per matched collective or ring shift, a GPU memory counter)");
  }

  StatusOr<int> Run(Context& ctx) override {
    options_.nvtx = !no_nvtx_;
    if (start_ns_ >= 0) options_.start_ns = start_ns_;
    if (end_ns_ >= 0) options_.end_ns = end_ns_;
    if (options_.start_ns && options_.end_ns && *options_.end_ns < *options_.start_ns) {
      return Error(ExitCode::kUsage, fmt::format("--end-ns {} is before --start-ns {}.", end_ns_, start_ns_));
    }
    CPPROF_ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandInputs(files_));
    options_.force = force_;
    options_.exec = ctx.exec;
    if (!window_.empty() && (options_.start_ns || options_.end_ns)) {
      return Error(ExitCode::kUsage, "--window and --start-ns/--end-ns both choose the time range: give one");
    }
    if (format_ == "kineto") {
      options_.window = window_;
      return RunKineto(files, ctx);
    }
    std::string where = "stdout";
    pipeline::ChromeTraceSummary summary;
    if ((output_.empty() || output_ == "-") && ctx.out_is_terminal) {
      return Error(ExitCode::kUsage,
                   fmt::format("a Chrome trace is megabytes of JSON, not for a terminal: give -o OUT.json (or "
                               "redirect stdout: cpprof export {} > OUT.json)",
                               files_.empty() ? std::string("RUN.sqlite") : files_[0]));
    }
    WriteFileOptions write;
    write.replace_existing = force_;
    write.inputs = files;
    const bool to_stdout = output_.empty() || output_ == "-";
    if (!to_stdout) CPPROF_RETURN_IF_ERROR(CheckOutputPath(output_, write));  // said before the long work
    // The CP view: the readout's analysis over the window (the whole capture without --window).
    pipeline::CpView cp;
    std::future<Status> cp_built;  // the CP view built on another thread while the trace is read
    if (!no_cp_view_ || !window_.empty()) {
      pipeline::ReportOptions ro;
      ro.window = window_.empty() ? "all" : window_;
      ro.force = force_;
      ro.exec = ctx.exec;
      ro.top_kernels = 1;
      auto build = [&cp, files, ro]() -> Status {
        CPPROF_ASSIGN_OR_RETURN(cp, pipeline::BuildCpView(files, ro));
        return OkStatus();
      };
      if (window_.empty() && ctx.exec.HasSpareThreads()) {
        // The trace does not depend on it until its end: both read the export at once.
        cp_built = std::async(std::launch::async, build);
        options_.await_cp = [&cp_built] { return cp_built.get(); };
      } else {
        CPPROF_RETURN_IF_ERROR(build());
        if (!window_.empty() && !cp.window.whole_capture) {
          options_.start_ns = cp.window.start_ns;
          options_.end_ns = cp.window.end_ns;
        }
      }
      if (!no_cp_view_) options_.cp = &cp;
    }
    if (to_stdout) {
      CPPROF_ASSIGN_OR_RETURN(summary, pipeline::WriteChromeTrace(files, options_, ctx.out));
    } else {
      CPPROF_RETURN_IF_ERROR(WriteFileAtomically(
          output_,
          [&](std::ostream& out) -> Status {
            CPPROF_ASSIGN_OR_RETURN(summary, pipeline::WriteChromeTrace(files, options_, out));
            return OkStatus();
          },
          write));
      where = "'" + output_ + "'";
    }
    ctx.invalid_utf8 = summary.invalid_utf8;
    for (const auto& n : summary.notes) ctx.err << "cpprof: note: " << n << '\n';
    ctx.err << WroteLine(summary, where, options_.cp != nullptr);
    return 0;
  }

 private:
  // One trace per rank, DIR/rank<N>.json, each whole or not at all; existing ones kept unless
  // --force; every rank's file from one pass over each export.
  StatusOr<int> RunKineto(const std::vector<std::string>& files, Context& ctx) {
    if (output_.empty() || output_ == "-") {
      return Error(ExitCode::kUsage, fmt::format("--format kineto writes one trace per rank into a folder: give -o "
                                                 "DIR (cpprof export {} --format kineto -o traces/)",
                                                 files_.empty() ? std::string("RUN.sqlite") : files_[0]));
    }
    if (options_.flows)
      return Error(ExitCode::kUsage,
                   "--flows is for --format chrome-trace (Kineto traces link "
                   "launches to kernels by their correlation ids)");
    WriteFileOptions write;
    write.replace_existing = force_;
    write.inputs = files;
    std::vector<std::string> paths;
    pipeline::KinetoFiles out;
    out.ranks = [&](int world) -> StatusOr<std::vector<int>> {
      std::vector<int> ranks = options_.ranks;
      if (ranks.empty()) {
        for (int r = 0; r < world; ++r) ranks.push_back(r);
      }
      std::error_code ec;
      std::filesystem::create_directories(output_, ec);
      if (ec) return Error(ExitCode::kError, fmt::format("cannot make the folder '{}': {}", output_, ec.message()));
      for (int r : ranks) {
        if (r < 0 || r >= world) {
          return Error(ExitCode::kUsage, fmt::format("--ranks {}: the export has ranks 0..{}", r, world - 1));
        }
        paths.push_back(fmt::format("{}/rank{}.json", output_, r));
        CPPROF_RETURN_IF_ERROR(CheckOutputPath(paths.back(), write));
      }
      return ranks;
    };
    out.open = [&](const std::vector<int>&, const auto& write_all) {
      return WriteFilesAtomically(paths, write_all, write);
    };
    CPPROF_ASSIGN_OR_RETURN(pipeline::ChromeTraceSummary summary, pipeline::WriteKinetoTraces(files, options_, out));
    ctx.invalid_utf8 = summary.invalid_utf8;
    for (const auto& n : summary.notes) ctx.err << "cpprof: note: " << n << '\n';
    ctx.err << fmt::format(
        "cpprof: wrote {} Kineto traces ({} events, {} GPU ops) to '{}/rank*.json'. Holistic Trace Analysis: "
        "TraceAnalysis(trace_dir=\"{}\", include_last_profiler_step=True) (every step of the window: HTA leaves "
        "out the last one by default)\n",
        paths.size(), summary.events, summary.gpu_ops, output_, output_);
    return 0;
  }

  std::vector<std::string> files_;
  std::string format_ = "chrome-trace";
  std::string output_;
  int64_t start_ns_ = -1, end_ns_ = -1;
  std::string window_;
  bool no_cp_view_ = false;
  bool no_nvtx_ = false;
  bool force_ = false;
  pipeline::ChromeTraceOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeExportCommand() { return std::make_unique<ExportCommand>(); }

}  // namespace cpprof::cli
