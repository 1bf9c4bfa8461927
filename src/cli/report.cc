// cpprof report FILE.sqlite [--format text|md|json|csv] [--top N] [--depth N] [--modules FILE] [--show-paths]
#include <fmt/format.h>

#include "cli/command.h"
#include "pipeline/build_report.h"
#include "render/report_render.h"

namespace cpprof::cli {

namespace {

class ReportCommand : public Command {
 public:
  void Declare(CLI::App& app) override {
    app.add_option("file", file_, "An nsys SQLite export (nsys export --type sqlite REPORT.nsys-rep)");
    app.add_option("--format", format_,
                   "Output format: text (terminal), md (the readout to paste into a PR), json (schema "
                   "cpprof.report/1, everything), csv")
        ->check(CLI::IsMember({"text", "md", "json", "csv"}))
        ->capture_default_str();
    app.add_option("--depth", render_.module_depth, "Module rows shown down to this depth (text, md)")
        ->check(CLI::Range(0, 64))
        ->capture_default_str();
    app.add_option("--modules", modules_file_,
                   "A JSON file that says which NVTX ranges are modules and how they group (replaces the "
                   "built-in AF3/Boltz grouping; see --print-modules-config)");
    app.add_flag("--print-modules-config", print_config_, "Print the built-in module grouping (JSON) and exit");
    app.add_option("--top", options_.top_kernels, "Kernels listed per rank (0: all)")->capture_default_str();
    app.add_flag("--show-paths", render_.show_paths, "Include the export's path in the output");
  }

  StatusOr<int> Run(Context& ctx) override {
    if (print_config_) {
      ctx.out << analysis::DefaultModuleConfigJson() << '\n';
      return 0;
    }
    if (file_.empty()) {
      return Status(ExitCode::kUsage, "report needs an export: cpprof report RUN.sqlite (see 'cpprof help report')");
    }
    analysis::ModuleConfig config;
    if (!modules_file_.empty()) {
      CPPROF_ASSIGN_OR_RETURN(config, analysis::LoadModuleConfig(modules_file_));
      options_.modules = &config;
    }
    CPPROF_ASSIGN_OR_RETURN(model::Report report, pipeline::BuildReport(file_, options_));
    if (format_ == "json") {
      render::PrintReportJson(report, render_, ctx.out);
    } else if (format_ == "md") {
      render::PrintReportMarkdown(report, render_, ctx.out);
    } else if (format_ == "csv") {
      render::PrintReportCsv(report, render_, ctx.out);
    } else {
      render::PrintReportText(report, render_, ctx.out);
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
  std::string file_;
  std::string format_ = "text";
  std::string modules_file_;
  bool print_config_ = false;
  pipeline::ReportOptions options_;
  render::RenderOptions render_;
};

}  // namespace

std::unique_ptr<Command> MakeReportCommand() { return std::make_unique<ReportCommand>(); }

}  // namespace cpprof::cli
