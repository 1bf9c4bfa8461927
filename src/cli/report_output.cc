// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "cli/report_output.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "render/html_render.h"

namespace cpprof::cli {

Status CheckHtmlDestination(const std::string& format, const std::string& output, const std::string& command) {
  const bool to_stdout = output.empty() || output == "-";
  if (format == "html" && to_stdout && isatty(STDOUT_FILENO)) {
    // The caller prefixes the command's name ("cpprof: error: report: ...").
    return Status(ExitCode::kUsage, fmt::format("--format html writes a whole page: give -o OUT.html (or redirect "
                                                "stdout: cpprof {} ... --format html > OUT.html)",
                                                command));
  }
  return OkStatus();
}

void DeclareWide(CLI::App& app, bool& wide) {
  app.add_flag("--wide", wide,
               "Text: keep every line whole (default: tables and prose fit $COLUMNS, else the terminal, else 120 "
               "columns)");
}

size_t ColumnsOr(size_t fallback, bool to_terminal) {
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    long n = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && n >= 40) return static_cast<size_t>(n);
  }
  if (!to_terminal) return fallback;
  struct winsize ws {};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  return fallback;
}

size_t TextWidth(bool wide, bool to_stdout, bool to_terminal) {
  constexpr size_t kDefault = 120;
  if (wide) return 0;
  if (!to_stdout) return kDefault;
  return ColumnsOr(kDefault, to_terminal);
}

void SayWritten(std::string_view what, const std::string& path, std::string_view next, Context& ctx) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  const std::string size = ec                 ? std::string("?")
                           : bytes >= 1 << 20 ? fmt::format("{:.1f} MB", bytes / 1048576.0)
                           : bytes >= 1 << 10 ? fmt::format("{:.1f} KB", bytes / 1024.0)
                                              : fmt::format("{} bytes", bytes);
  ctx.err << fmt::format("cpprof: wrote {} to '{}' ({}){}{}\n", what, path, size, next.empty() ? "" : ": ", next);
}

Status WriteReport(const model::Report& report, const std::string& format, const render::RenderOptions& render,
                   const std::string& output, const WriteFileOptions& write, Context& ctx,
                   const render::HtmlExtras& html) {
  auto print = [&](std::ostream& out) {
    if (format == "json") {
      render::PrintReportJson(report, render, out);
    } else if (format == "md") {
      render::PrintReportMarkdown(report, render, out);
    } else if (format == "csv") {
      render::PrintReportCsv(report, render, out);
    } else if (format == "html") {
      render::PrintReportHtml(report, render, out, html);
    } else {
      render::PrintReportText(report, render, out);
    }
  };
  if (output.empty() || output == "-") {
    print(ctx.out);
  } else {
    CPPROF_RETURN_IF_ERROR(WriteFileAtomically(
        output,
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
  if (!output.empty() && output != "-") {
    const std::string what = format == "html"   ? "the HTML report"
                             : format == "json" ? "the JSON readout"
                             : format == "md"   ? "the Markdown readout"
                             : format == "csv"  ? "the CSV readout"
                                                : "the readout";
    SayWritten(what, output, format == "html" ? "open it in a browser" : "", ctx);
  }
  return OkStatus();
}

}  // namespace cpprof::cli
