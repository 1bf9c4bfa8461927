// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof merge PARTIAL... [--format text|md|json|csv|html] [-o FILE]: the reduce step.
#include <fmt/format.h>

#include <fstream>

#include "base/input_files.h"
#include "base/parallel.h"
#include "base/stage_timer.h"
#include "cli/command.h"
#include "cli/report_output.h"
#include "pipeline/build_report.h"
#include "pipeline/partial_json.h"
#include "pipeline/partial_merge.h"
#include "pipeline/run_partial.h"

namespace cpprof::cli {

namespace {

class MergeCommand : public Command {
 public:
  void Declare(CLI::App& app) override {
    app.add_option("partials", files_,
                   "Partials made by 'cpprof report --partial' (files, a directory, or a quoted glob such as "
                   "'run/*.partial.json'), one per export of one run");
    app.add_option("--format", format_,
                   "Output format, as for report: text, md, json, csv, html (without the timeline, which needs the "
                   "ops)")
        ->check(CLI::IsMember({"text", "md", "json", "csv", "html"}))
        ->capture_default_str();
    app.add_option("-o,--output", output_,
                   "Write the readout to this file instead of stdout; written whole or not at all");
    app.add_flag("--force", force_,
                 "Replace the -o file when it exists; merge partials that look like separate runs (commands, start "
                 "times, capture spans or launcher ids differ), of one capture given twice, or made with other "
                 "options");
    DeclareWide(app, wide_);
    app.add_option("--depth", render_.module_depth, "Module rows shown down to this depth (text, md)")
        ->check(CLI::Range(0, 64))
        ->capture_default_str();
    app.add_flag("--show-paths", render_.show_paths, "Include the exports' paths in the output");
  }

  StatusOr<int> Run(Context& ctx) override {
    if (files_.empty()) {
      return Status(ExitCode::kUsage,
                    "merge needs partials: cpprof merge run/*.partial.json (make each with 'cpprof report --partial "
                    "X.sqlite -o X.partial.json')");
    }
    CPPROF_ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandInputs(files_, ".partial.json"));
    CPPROF_RETURN_IF_ERROR(CheckHtmlDestination(format_, output_, "merge"));
    WriteFileOptions write;
    write.replace_existing = force_;
    write.inputs = files;
    if (!output_.empty() && output_ != "-") CPPROF_RETURN_IF_ERROR(CheckOutputPath(output_, write));
    StageTimer timer(ctx.exec);
    // The partials are independent: parsed on all cores.
    std::vector<std::optional<StatusOr<pipeline::RunPartial>>> parsed(files.size());
    ParallelFor(ctx.exec.threads, files.size(), [&](size_t i) {
      std::ifstream in(files[i], std::ios::binary);
      if (!in) {
        parsed[i] = Status(ExitCode::kBadInput, fmt::format("cannot open '{}': check the path", files[i]));
        return;
      }
      parsed[i] = pipeline::ReadPartialJson(in, files[i]);
    });
    std::vector<pipeline::RunPartial> parts;
    for (auto& p : parsed) {
      CPPROF_ASSIGN_OR_RETURN(pipeline::RunPartial part, std::move(*p));
      parts.push_back(std::move(part));
    }
    parsed.clear();
    timer.Mark("partials read");
    CPPROF_ASSIGN_OR_RETURN(pipeline::RunPartial run, pipeline::MergePartials(std::move(parts), files, force_));
    timer.Mark("partials merged (clocks, modules, ranks)");
    const pipeline::EfficiencyInputs efficiency = run.efficiency;
    model::Report report = pipeline::FinishReport(std::move(run), ctx.exec);
    CPPROF_RETURN_IF_ERROR(pipeline::AddEfficiency(efficiency, report));
    render_.width = TextWidth(wide_, output_.empty() || output_ == "-", ctx.out_is_terminal);
    CPPROF_RETURN_IF_ERROR(WriteReport(report, format_, render_, output_, write, ctx));
    return 0;
  }

 private:
  std::vector<std::string> files_;
  std::string format_ = "text";
  std::string output_;
  bool force_ = false;
  render::RenderOptions render_;
  bool wide_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeMergeCommand() { return std::make_unique<MergeCommand>(); }

}  // namespace cpprof::cli
