// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// `cpprof report` output: one model, three renderings (text for terminals, JSON with a
// versioned schema documented in docs/report-json.md, CSV in long format).
#pragma once

#include <ostream>

#include "model/report.h"

namespace cpprof::render {

struct RenderOptions {
  bool show_paths = false;  // include the export's path (off: output is host-independent)
  int module_depth = 3;     // module rows deeper than this are folded into their parents (text, md)
  size_t width = 0;         // text: the line width tables and prose fit (0: unlimited, --wide)
  bool full_names = false;  // text: kernel names whole (default: shortened, render/kernel_names.h)
};

void PrintReportText(const model::Report& r, const RenderOptions& o, std::ostream& out);
void PrintReportJson(const model::Report& r, const RenderOptions& o, std::ostream& out);
void PrintReportMarkdown(const model::Report& r, const RenderOptions& o, std::ostream& out);
void PrintReportCsv(const model::Report& r, const RenderOptions& o, std::ostream& out);

}  // namespace cpprof::render
