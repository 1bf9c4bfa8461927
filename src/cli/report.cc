// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof report FILE.sqlite... [--format text|md|json|csv|html] [-o FILE] [--window W] [--top N] [--depth N] [--modules
// FILE] [--show-paths] [--dims N=...,grid=RxC] [--model-config FILE] [--print-cost-model] [--what-if EDIT]...
// [--source-root DIR]...
#include <fmt/format.h>

#include <algorithm>

#include "base/atomic_file.h"
#include "base/input_files.h"
#include "cli/command.h"
#include "cli/report_output.h"
#include "pipeline/build_report.h"
#include "pipeline/partial_json.h"
#include "pipeline/run_reader.h"

namespace cpprof::cli {

namespace {

class ReportCommand : public Command {
 public:
  void Declare(CLI::App& app) override {
    DeclareInputsAndOutput(app);
    DeclareModel(app);
    DeclareAnalysis(app);
  }

  StatusOr<int> Run(Context& ctx) override {
    if (print_config_) {
      ctx.out << analysis::DefaultModuleConfigJson() << '\n';
      return 0;
    }
    analysis::CostConfig cost = analysis::DefaultCostConfig();
    if (!cost_file_.empty()) {
      CPPROF_ASSIGN_OR_RETURN(cost, analysis::LoadCostConfig(cost_file_));
    }
    if (!dims_.empty()) {
      analysis::Dims dims;
      dims.values = cost.dims;
      CPPROF_RETURN_IF_ERROR(analysis::ParseDims(dims_, "--dims", dims));
      dims.source = "--dims";
      options_.dims = dims;
    }
    if (print_cost_) {
      ctx.out << (options_.dims ? analysis::CostTableJson(cost, *options_.dims) : analysis::DefaultCostConfigJson())
              << '\n';
      return 0;
    }
    options_.cost = &cost;
    if (files_.empty()) {
      return Status(ExitCode::kUsage, "report needs an export: cpprof report RUN.sqlite (see 'cpprof help report')");
    }
    CPPROF_ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandInputs(files_));
    analysis::ModuleConfig config = analysis::DefaultModuleConfig();
    if (!modules_file_.empty()) {
      CPPROF_ASSIGN_OR_RETURN(config, analysis::LoadModuleConfig(modules_file_));
    }
    if (!exclude_ranges_.empty()) CPPROF_RETURN_IF_ERROR(config.SetExcludedWork(exclude_ranges_));
    options_.modules = &config;
    CPPROF_RETURN_IF_ERROR(SetReplay());
    CPPROF_RETURN_IF_ERROR(CheckHtmlDestination(partial_ ? "json" : format_, output_, "report"));
    WriteFileOptions write;
    write.replace_existing = force_;
    write.inputs = files;
    const bool to_stdout = output_.empty() || output_ == "-";
    if (!to_stdout) CPPROF_RETURN_IF_ERROR(CheckOutputPath(output_, write));  // said before the long work
    options_.force = force_;
    options_.exec = ctx.exec;
    if (partial_) {
      // The map step: this export's part of the run, for `cpprof merge`.
      CPPROF_ASSIGN_OR_RETURN(pipeline::RunPartial run, pipeline::ReadRun(files, options_));
      ctx.invalid_utf8 = run.invalid_utf8;
      run.efficiency = pipeline::FindEfficiencyInputs(
          files, options_, cost_file_.empty() ? "" : analysis::CostConfigJson(cost), pipeline::EvidenceOf(run));
      if (to_stdout) {
        pipeline::WritePartialJson(run, ctx.out);
        return 0;
      }
      CPPROF_RETURN_IF_ERROR(WriteFileAtomically(
          output_,
          [&](std::ostream& out) {
            pipeline::WritePartialJson(run, out);
            return OkStatus();
          },
          write));
      SayWritten("the partial", output_, "reduce the partials of a run with 'cpprof merge'", ctx);
      return 0;
    }
    render_.width = TextWidth(wide_, output_.empty() || output_ == "-", ctx.out_is_terminal);
    if (format_ == "html") {
      // The readout, the whole capture's timeline and each iteration's readout, from one reading.
      CPPROF_ASSIGN_OR_RETURN(pipeline::Page page, pipeline::BuildPage(files, options_, html_iterations_));
      ctx.invalid_utf8 = page.readout.invalid_utf8;
      render::HtmlExtras html;
      html.timeline = page.own_timeline ? &page.readout : &page.timeline;
      html.iterations = &page.iterations;
      html.iterations_left_out = page.iterations_left_out;
      CPPROF_RETURN_IF_ERROR(WriteReport(page.readout, format_, render_, output_, write, ctx, html));
      return 0;
    }
    CPPROF_ASSIGN_OR_RETURN(model::Report report, pipeline::BuildReport(files, options_));
    ctx.invalid_utf8 = report.invalid_utf8;
    render::HtmlExtras html;
    CPPROF_RETURN_IF_ERROR(WriteReport(report, format_, render_, output_, write, ctx, html));
    return 0;
  }

 private:
  // The exports, the output and how it is printed.
  void DeclareInputsAndOutput(CLI::App& app) {
    app.add_option(
        "exports", files_,
        "nsys SQLite exports (nsys export --type sqlite REPORT.nsys-rep; .sqlite.xz, .gz and .zst are read as they "
        "are): one, or the exports of one run "
        "captured per rank or per node (files, a directory, or a quoted glob such as 'run/rep.*.sqlite'), "
        "read as one run on one clock");
    app.add_option("--format", format_,
                   "Output format: text (terminal), md (the readout to paste into a PR), json (schema "
                   "cpprof.report/2, everything), csv, html (one self-contained page: timeline, modules, "
                   "overlap, memory; needs -o unless stdout is redirected)")
        ->check(CLI::IsMember({"text", "md", "json", "csv", "html"}))
        ->capture_default_str();
    app.add_option("-o,--output", output_,
                   "Write the output to this file instead of stdout ('-': stdout); written whole or not at all, "
                   "never onto the export");
    app.add_flag("--force", force_,
                 "Replace the -o file when it exists; read several exports as one run even when they look like "
                 "separate runs (commands, start times, capture spans or launcher ids differ) or one capture given "
                 "twice");
    app.add_option("--timeline-bins", options_.timeline_bins,
                   "html: at most this many bins per timeline lane and rank (ops are merged beyond it)")
        ->check(CLI::Range(100, 1000000))
        ->capture_default_str();
    app.add_option("--html-iterations", html_iterations_,
                   "html: embed the readout of at most this many iterations (the first ones) for the page's "
                   "iteration strip and time-range selection; all come from the one reading of the export (0: none)")
        ->check(CLI::Range(0, 100000))
        ->capture_default_str();
    DeclareWide(app, wide_);
    app.add_flag("--full-names", render_.full_names,
                 "Text: print kernel names whole (default: template arguments and parameter lists shortened to the "
                 "name that tells kernels apart, e.g. elementwise_kernel<...CUDAFunctor_add<float>...>; JSON always "
                 "has both, HTML shows the full name on hover)");
    app.add_option("--depth", render_.module_depth, "Module rows shown down to this depth (text, md)")
        ->check(CLI::Range(0, 64))
        ->capture_default_str();
  }

  // What the modules are and what the model's sizes and costs are.
  void DeclareModel(CLI::App& app) {
    app.add_option("--modules", modules_file_,
                   "A JSON file that says which NVTX ranges are modules and how they group (replaces the "
                   "built-in AF3/Boltz grouping; see --print-modules-config; patterns in RE2 syntax)");
    app.add_flag("--print-modules-config", print_config_, "Print the built-in module grouping (JSON) and exit");
    app.add_option("--dims", dims_,
                   "The model's sizes for the efficiency section (FLOPs and bytes per module against the measured "
                   "time and the device's peaks): NAME=VALUE pairs, e.g. N=1024,c_z=128,grid=1x2,dtype=bf16 (the "
                   "rest default to AF3's; see docs/cost-model.md). Without it, cpfold's config line in the log "
                   "beside the export gives them");
    app.add_option("--model-config", cost_file_,
                   "A JSON file that changes the cost model: sizes, which of your module names use which built-in "
                   "formula, calls per iteration where the capture cannot count them, device peaks (see "
                   "--print-cost-model)");
    app.add_flag("--print-cost-model", print_cost_,
                 "Print the built-in cost model config (JSON) and exit; with --dims, print each module's FLOPs and "
                 "bytes for those sizes instead");
  }

  // The window, the replay, the overlap tax, the backtraces' source and the map step.
  void DeclareAnalysis(CLI::App& app) {
    app.add_option("--exclude-ranges", exclude_ranges_,
                   "Leave out the GPU work launched inside NVTX ranges ('domain:text') this regex is found in (e.g. "
                   "'warmup' for warm-up iterations): every number then covers the rest. RE2 syntax "
                   "(https://github.com/google/re2/wiki/Syntax): no lookarounds or backreferences");
    app.add_option("--window", options_.window,
                   "What the numbers cover: steady (the iterations after warm-up; start-up and tear-down left "
                   "out), all (the whole capture), iter:N (the N-th iteration, from 0, warm-up included) or A:B "
                   "(session-clock seconds as the readout prints them, e.g. 24.1:25.3)")
        ->capture_default_str();
    app.add_option("--iteration-range", options_.iteration_range,
                   "A regex found in the NVTX ranges ('domain:text') that are iterations, instead of the "
                   "built-in names (iterN, stepN, ProfilerStep#N, warmupN); those also matching the warm-up "
                   "pattern are warm-up. RE2 syntax (https://github.com/google/re2/wiki/Syntax)");
    app.add_option("--what-if", what_if_,
                   "Replay the steady window with this edit and print the predicted median steady iteration "
                   "(repeatable): 'GLOB:compute*K' or 'GLOB:transfer*K' (the modules whose name matches GLOB, `*` "
                   "any characters; K a number or a fraction such as 1/3), 'GLOB:gemm*K' (their GEMM kernels only), "
                   "'GLOB:time*K' (their compute and the host's "
                   "time before their launches: a host-bound module), 'GLOB:overlap' (their transfers run alongside "
                   "the compute after them), each optionally after 'rank R:' (that rank only); "
                   "'rank R:on-time' (its gaps before NCCL launches brought to the other ranks' median); "
                   "'launch-gaps:0' (what CUDA graphs would give). See docs/readout.md, \"The replay\"");
    app.add_flag("--no-replay", no_replay_,
                 "Skip the replay of the steady window (its self-check, critical path and predicted gains)");
    app.add_flag("--no-overlap-tax", no_overlap_tax_,
                 "Skip the overlap tax (compute slowed under communication): the ops are then read without their "
                 "kernel names and launch sizes (12 bytes an op less while reading)");
    app.add_option("--source-root", options_.source_roots,
                   "A folder that holds the model's Python source (repeatable), for a capture made with "
                   "--python-backtrace=cuda: launches outside any NVTX module range get their module from the "
                   "Class.method frames of their backtraces, named from the source (the paths the capture recorded "
                   "are looked for under DIR by their longest tail, then as they are)")
        ->check(CLI::ExistingDirectory);
    app.add_option("--top", options_.top_kernels, "Kernels listed per rank (0: all)")->capture_default_str();
    app.add_flag("--show-paths", render_.show_paths, "Include the export's path in the output");
    app.add_flag("--partial", partial_,
                 "The map step of a run too big for one machine: write this export's part of the readout (JSON, "
                 "cpprof.partial/2) for 'cpprof merge', which gives the run's readout from all the parts");
  }

  // The replay's edits (--what-if) and whether the overlap tax is read, before the long work.
  Status SetReplay() {
    if (no_replay_ && !what_if_.empty()) {
      return Status(ExitCode::kUsage, "report: --what-if needs the replay: leave out --no-replay");
    }
    options_.replay = !no_replay_;
    options_.overlap_tax = !no_overlap_tax_;
    for (const auto& text : what_if_) {
      CPPROF_ASSIGN_OR_RETURN(analysis::WhatIfEdit edit, analysis::ParseWhatIf(text));
      options_.what_if.push_back(std::move(edit));
    }
    return OkStatus();
  }

  std::vector<std::string> files_;
  std::string format_ = "text";
  std::string output_;
  std::string modules_file_;
  std::string dims_;
  std::string cost_file_;
  bool print_cost_ = false;
  std::string exclude_ranges_;
  bool print_config_ = false;
  bool partial_ = false;
  std::vector<std::string> what_if_;
  bool no_replay_ = false;
  bool no_overlap_tax_ = false;
  bool force_ = false;
  pipeline::ReportOptions options_;
  render::RenderOptions render_;
  bool wide_ = false;
  size_t html_iterations_ = pipeline::kMaxPageIterations;
};

}  // namespace

std::unique_ptr<Command> MakeReportCommand() { return std::make_unique<ReportCommand>(); }

}  // namespace cpprof::cli
