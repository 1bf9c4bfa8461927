// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The CP readout sections shared by the text and Markdown renderings: the module table (CP vs
// serial), communication by kind with overlap, imbalance with matched collectives, and the
// forward/backward/optimizer split. Every number comes from model::Report.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "model/report.h"

namespace cpprof::render {

struct ReadoutOptions {
  int module_depth = 3;  // rows deeper than this are folded into their ancestors
  bool markdown = false;
};

// Per rank: busy time attributed to CP-distributed modules, serial modules, and no module.
struct CpSplit {
  int64_t cp_ns = 0, serial_ns = 0, unattributed_ns = 0;
  int64_t named_ns() const { return cp_ns + serial_ns; }  // in a named module (the coverage)
};
std::vector<CpSplit> CpSplitPerRank(const model::Report& r);

// "SendRecv 12.3, AllGather 4.0" (ms, mean over ranks), largest first.
std::string CommByKindMs(const model::ModuleNode& m);

// The readout's top: the window the numbers cover and the verdict (paragraph, opportunities,
// timings not to trust).
void PrintVerdict(const model::Report& r, const ReadoutOptions& o, std::ostream& out);
// Each rank's window as a budget: compute + exposed transfer + waiting + idle = span.
void PrintBudget(const model::Report& r, const ReadoutOptions& o, std::ostream& out);
// The iterations found, their times, and which are in the window.
void PrintIterations(const model::Report& r, const ReadoutOptions& o, std::ostream& out);
void PrintModules(const model::Report& r, const ReadoutOptions& o, std::ostream& out);
void PrintCommunication(const model::Report& r, const ReadoutOptions& o, std::ostream& out);
// Waiting vs transfer per kind and rank, and the straggler (who kept whom waiting).
void PrintImbalance(const model::Report& r, const ReadoutOptions& o, std::ostream& out);
void PrintPhases(const model::Report& r, const ReadoutOptions& o, std::ostream& out);
void PrintMemory(const model::Report& r, const ReadoutOptions& o, std::ostream& out);
// nsys version, the options it recorded, the launched command, the interconnect, and the
// diagnostics (inert options and why, what nsys did not say).
void PrintCapture(const model::Report& r, const ReadoutOptions& o, std::ostream& out);

// A run read from several exports: each export, its ranks and how its clock was aligned (offset,
// refinement, residual). Nothing for one export.
void PrintRunExports(const model::Report& r, const ReadoutOptions& o, std::ostream& out);

// The whole readout in Markdown, short enough to paste into a PR.
void PrintReportMarkdown(const model::Report& r, const ReadoutOptions& o, std::ostream& out);

}  // namespace cpprof::render
