// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof diff A.sqlite B.sqlite [--sanity] [--window W] [--max-time-delta PCT] [--max-iter-delta PCT] [--max-mem-delta
// PCT] [--format text|json]
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <thread>

#include "analysis/report_diff.h"
#include "base/input_files.h"
#include "cli/command.h"
#include "cli/report_output.h"
#include "pipeline/build_report.h"
#include "render/diff_render.h"

namespace cpprof::cli {

namespace {

// A percentage: a finite number >= 0 ('nan' and 'inf' would make every comparison false).
const CLI::Validator kPercent(
    [](std::string& s) -> std::string {
      char* end = nullptr;
      double v = std::strtod(s.c_str(), &end);
      if (end == s.c_str() || *end != '\0' || !std::isfinite(v) || v < 0) {
        return "must be a finite number >= 0 (a percentage), not '" + s + "'";
      }
      return "";
    },
    "PCT");

class DiffCommand : public Command {
 public:
  void Declare(CLI::App& app) override {
    app.add_option("a", a_,
                   "The earlier (baseline) nsys SQLite export; or a run captured in several exports: a directory or "
                   "a quoted glob ('base/rep.*.sqlite')")
        ->required();
    app.add_option("b", b_, "The later export (or directory, or quoted glob), compared against A")->required();
    app.add_flag("--force", force_,
                 "Read a side's exports as one run even when they look like separate runs (commands, start times, "
                 "capture spans or launcher ids differ) or one capture given twice");
    app.add_flag("--sanity", sanity_,
                 "Only answer: is the GPU work the same (kernel names and counts per rank, peak memory within "
                 "--mem-tolerance)? Says which check failed. Exit 0 when it is, 3 when it is not");
    app.add_option("--mem-tolerance", mem_tolerance_pct_, "Peak memory difference --sanity accepts, in percent")
        ->check(kPercent)
        ->capture_default_str();
    app.add_option("--max-time-delta", max_time_pct_,
                   "Exit 3 when a rank's GPU compute time, or a module's time less its NCCL waiting (>= 1% of "
                   "busy), grew by more than this percent (waiting for a late peer is not a regression of the work)")
        ->check(kPercent);
    app.add_option("--max-iter-delta", max_iter_pct_,
                   "Exit 3 when the median steady iteration grew by more than this percent, a rank is newly named "
                   "the straggler (docs/readout.md: consistent, and worth 5% of the iteration by the replay), or "
                   "waiting for peers grew by more than this percent of A's iteration; the line says which")
        ->check(kPercent);
    app.add_option("--max-mem-delta", max_mem_pct_,
                   "Exit 3 when a rank's peak GPU memory grew by more than this percent")
        ->check(kPercent);
    app.add_option("--window", window_,
                   "What each side's numbers cover: steady (default: the iterations after warm-up), all, iter:N, "
                   "A:B (see cpprof help report)")
        ->capture_default_str();
    app.add_option("--format", format_, "text or json (schema cpprof.diff/2)")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    app.add_flag("--full-names", render_.full_names,
                 "Text: print kernel names whole (default: template arguments and parameter lists shortened to the "
                 "name that tells kernels apart, e.g. elementwise_kernel<...CUDAFunctor_add<float>...>)");
    DeclareWide(app, wide_);
    app.add_option("--top", render_.top, "Unchanged kernel rows shown (changed rows always are; 0: all)")
        ->capture_default_str();
  }

  StatusOr<int> Run(Context& ctx) override {
    pipeline::ReportOptions ro;
    ro.top_kernels = 0;  // every kernel: the sanity check compares them all
    ro.window = window_;
    ro.force = force_;
    ro.exec = ctx.exec;
    CPPROF_ASSIGN_OR_RETURN(std::vector<std::string> files_a, ExpandInputs({a_}));
    CPPROF_ASSIGN_OR_RETURN(std::vector<std::string> files_b, ExpandInputs({b_}));
    // Both sides at once: each report's NVTX pass is one thread, and the machine has more.
    std::optional<StatusOr<model::Report>> side_b;
    std::thread reader_b([&] {
      try {
        side_b = pipeline::BuildReport(files_b, ro);
      } catch (const std::exception& e) {  // an exception must not leave its thread
        side_b = Error(ExitCode::kError, fmt::format("reading '{}': {}", b_, e.what()));
      }
    });
    StatusOr<model::Report> side_a = pipeline::BuildReport(files_a, ro);
    reader_b.join();
    CPPROF_ASSIGN_OR_RETURN(model::Report a, std::move(side_a));  // A's error first
    CPPROF_ASSIGN_OR_RETURN(model::Report b, std::move(*side_b));
    ctx.invalid_utf8 = a.invalid_utf8 || b.invalid_utf8;
    model::DiffOptions o;
    o.mem_tolerance = mem_tolerance_pct_ / 100.0;
    if (max_time_pct_) o.max_time_delta = *max_time_pct_ / 100.0;
    if (max_mem_pct_) o.max_mem_delta = *max_mem_pct_ / 100.0;
    if (max_iter_pct_) o.max_iter_delta = *max_iter_pct_ / 100.0;
    model::ReportDiff d = analysis::DiffReports(a, b, o, pipeline::PeakMemoryPerRank);
    render_.sanity_only = sanity_;
    render_.width = TextWidth(wide_, /*to_stdout=*/true, ctx.out_is_terminal);
    if (format_ == "json") {
      render::PrintDiffJson(d, ctx.out);
    } else {
      render::PrintDiffText(d, render_, ctx.out);
    }
    if (sanity_) return d.same_work ? 0 : static_cast<int>(ExitCode::kCheckFailed);
    if (max_mem_pct_ && !d.memory_compared) {
      ctx.err << "cpprof: note: --max-mem-delta: peak memory was not captured in both exports "
                 "(nsys profile --cuda-memory-usage true captures it)\n";
    }
    return d.regressions.empty() ? 0 : static_cast<int>(ExitCode::kCheckFailed);
  }

 private:
  std::string a_, b_, format_ = "text", window_ = "steady";
  bool sanity_ = false, force_ = false, wide_ = false;
  double mem_tolerance_pct_ = 100.0 * model::kDefaultMemTolerance;
  std::optional<double> max_time_pct_, max_mem_pct_, max_iter_pct_;
  render::DiffRenderOptions render_;
};

}  // namespace

std::unique_ptr<Command> MakeDiffCommand() { return std::make_unique<DiffCommand>(); }

}  // namespace cpprof::cli
