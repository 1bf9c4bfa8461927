// cpprof report FILE.sqlite... [--format text|md|json|csv|html] [-o FILE] [--window W] [--top N] [--depth N] [--modules
// FILE] [--show-paths]
#include <fmt/format.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/input_files.h"
#include "cli/command.h"
#include "pipeline/build_report.h"
#include "render/html_render.h"
#include "render/report_render.h"

namespace cpprof::cli {

namespace {

class ReportCommand : public Command {
 public:
  void Declare(CLI::App& app) override {
    app.add_option("exports", files_,
                   "nsys SQLite exports (nsys export --type sqlite REPORT.nsys-rep): one, or the exports of one run "
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
                 "Replace the -o file when it exists; read several exports as one run even when their commands or "
                 "start times say they are not");
    app.add_option("--timeline-bins", options_.timeline_bins,
                   "html: at most this many bins per timeline lane and rank (ops are merged beyond it)")
        ->check(CLI::Range(100, 1000000))
        ->capture_default_str();
    app.add_option("--depth", render_.module_depth, "Module rows shown down to this depth (text, md)")
        ->check(CLI::Range(0, 64))
        ->capture_default_str();
    app.add_option("--modules", modules_file_,
                   "A JSON file that says which NVTX ranges are modules and how they group (replaces the "
                   "built-in AF3/Boltz grouping; see --print-modules-config; patterns in RE2 syntax)");
    app.add_flag("--print-modules-config", print_config_, "Print the built-in module grouping (JSON) and exit");
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
    app.add_option("--top", options_.top_kernels, "Kernels listed per rank (0: all)")->capture_default_str();
    app.add_flag("--show-paths", render_.show_paths, "Include the export's path in the output");
  }

  StatusOr<int> Run(Context& ctx) override {
    if (print_config_) {
      ctx.out << analysis::DefaultModuleConfigJson() << '\n';
      return 0;
    }
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
    const bool to_stdout = output_.empty() || output_ == "-";
    if (format_ == "html" && to_stdout && isatty(STDOUT_FILENO)) {
      return Status(ExitCode::kUsage,
                    "report: --format html writes a whole page: give -o OUT.html (or redirect "
                    "stdout: cpprof report RUN.sqlite --format html > OUT.html)");
    }
    WriteFileOptions write;
    write.replace_existing = force_;
    write.inputs = files;
    if (!to_stdout) CPPROF_RETURN_IF_ERROR(CheckOutputPath(output_, write));  // said before the long work
    options_.timeline = format_ == "html";
    options_.force = force_;
    CPPROF_ASSIGN_OR_RETURN(model::Report report, pipeline::BuildReport(files, options_));
    auto print = [&](std::ostream& out) {
      if (format_ == "json") {
        render::PrintReportJson(report, render_, out);
      } else if (format_ == "md") {
        render::PrintReportMarkdown(report, render_, out);
      } else if (format_ == "csv") {
        render::PrintReportCsv(report, render_, out);
      } else if (format_ == "html") {
        render::PrintReportHtml(report, render_, out);
      } else {
        render::PrintReportText(report, render_, out);
      }
    };
    if (to_stdout) {
      print(ctx.out);
    } else {
      CPPROF_RETURN_IF_ERROR(WriteFileAtomically(
          output_,
          [&](std::ostream& out) {
            print(out);
            return OkStatus();
          },
          write));
    }
    // Diagnostics go to stderr (JSON carries them too): what the export lacks, said once.
    if (!report.export_info.not_captured.empty()) {
      std::string list;
      for (const auto& n : report.export_info.not_captured) list += (list.empty() ? "" : "; ") + n;
      ctx.err << fmt::format("cpprof: note: not captured: {}\n", list);
    }
    for (const auto& n : report.notes) ctx.err << "cpprof: note: " << n << '\n';
    return 0;
  }

 private:
  std::vector<std::string> files_;
  std::string format_ = "text";
  std::string output_;
  std::string modules_file_;
  std::string exclude_ranges_;
  bool print_config_ = false;
  bool force_ = false;
  pipeline::ReportOptions options_;
  render::RenderOptions render_;
};

}  // namespace

std::unique_ptr<Command> MakeReportCommand() { return std::make_unique<ReportCommand>(); }

}  // namespace cpprof::cli
