// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// <name>.readout.md of `cpprof profile`: the run's own summary (model/profile_summary.h), then the
// report's Markdown readout.
#pragma once

#include <ostream>

#include "model/profile_summary.h"
#include "model/report.h"

namespace cpprof::render {

// The summary alone: the title, what ran (nsys, preset, ranks, wall time), then a section each
// for the dropped options, the probe, the warnings, the workload's own lines and the comparison,
// when there is something to say.
void PrintProfileSummary(const model::ProfileSummary& s, std::ostream& out);

// The whole file: the summary, a blank line, PrintReportMarkdown of the report.
void PrintProfileReadout(const model::ProfileSummary& s, const model::Report& report, std::ostream& out);

}  // namespace cpprof::render
