// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The readout written the way `report` and `merge` both write it: in a format, to stdout or
// atomically to -o, with the notes on stderr.
#pragma once

#include <string>
#include <string_view>

#include "base/atomic_file.h"
#include "cli/command.h"
#include "model/report.h"
#include "render/html_render.h"
#include "render/report_render.h"

namespace cpprof::cli {

// --format html to a terminal is refused (a whole page): said before the long work.
Status CheckHtmlDestination(const std::string& format, const std::string& output, const std::string& command);

// The text readout's line width: 0 with --wide; on stdout $COLUMNS when set (a terminal or a pipe:
// `COLUMNS=80 cpprof report run.sqlite | less`), else the terminal's width; else 120 (a file, or
// a pipe without $COLUMNS).
size_t TextWidth(bool wide, bool to_stdout, bool to_terminal);
// $COLUMNS when set (40 or more), else the terminal's width when stdout is one, else `fallback`.
size_t ColumnsOr(size_t fallback, bool to_terminal);
// Declares --wide (TextWidth's `wide`) with its help, for the commands that print a readout.
void DeclareWide(CLI::App& app, bool& wide);

// "cpprof: wrote WHAT to 'PATH' (SIZE)" and what to do with it: an -o file is never written silently.
void SayWritten(std::string_view what, const std::string& path, std::string_view next, Context& ctx);

Status WriteReport(const model::Report& report, const std::string& format, const render::RenderOptions& render,
                   const std::string& output, const WriteFileOptions& write, Context& ctx,
                   const render::HtmlExtras& html = {});

}  // namespace cpprof::cli
