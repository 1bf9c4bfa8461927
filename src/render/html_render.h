// `cpprof report --format html`: one self-contained page (inline CSS, script and drawing; nothing
// fetched) with the per-rank timeline, module bars, overlap, memory, diagnostics and provenance.
// The page's data is one JSON object (HtmlData) in <script type="application/json"
// id="cpprof-data">, drawn by the inline script of src/render/html_template.html. Every number
// comes from model::Report; the page only formats and scales them. See docs/html-report.md.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "model/report.h"
#include "render/report_render.h"

namespace cpprof::render {

// The data the page draws (schema "cpprof.html/1"). Needs report.timeline built for the timeline.
nlohmann::ordered_json HtmlData(const model::Report& r, const RenderOptions& o);

// `json` made safe inside a <script> element: "</" becomes "<\/" and "<!--" becomes "\u003c!--"
// (both still parse as the same JSON).
std::string EscapeJsonForScript(const std::string& json);

void PrintReportHtml(const model::Report& r, const RenderOptions& o, std::ostream& out);

}  // namespace cpprof::render
