// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// `cpprof report --format html`: one self-contained page (inline CSS, script and drawing; nothing
// fetched) with the whole readout: verdict, per-rank budget, iterations, timeline, modules,
// communication, imbalance, phases, top kernels, memory, capture and diagnostics. The page's
// data is one JSON object (HtmlData) in <script type="application/json" id="cpprof-data">: the
// readout exactly as `--format json` writes it (render/report_json.h), plus the timeline and the
// readout of each iteration; the inline script of src/render/html_template.html draws it. Every
// number comes from a model::Report; the page only formats, sums and scales them. See
// docs/html-report.md.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "model/report.h"
#include "render/report_render.h"

namespace cpprof::render {

// What the page draws besides the readout.
struct HtmlExtras {
  // A report whose Report::timeline is built, over the whole capture (the page's timeline);
  // null: the readout's own timeline, when built.
  const model::Report* timeline = nullptr;
  // The readout of each iteration of the readout's window.iterations (window iter:N), in order;
  // fewer when capped (iterations_left_out says how many were not computed).
  const std::vector<model::Report>* iterations = nullptr;
  size_t iterations_left_out = 0;
};

// The data the page draws (schema "cpprof.html/2").
nlohmann::ordered_json HtmlData(const model::Report& r, const RenderOptions& o, const HtmlExtras& extras = {});

// `json` made safe inside a <script> element: "</" becomes "<\/" and "<!--" becomes "\u003c!--"
// (both still parse as the same JSON).
std::string EscapeJsonForScript(const std::string& json);

void PrintReportHtml(const model::Report& r, const RenderOptions& o, std::ostream& out, const HtmlExtras& extras = {});

}  // namespace cpprof::render
