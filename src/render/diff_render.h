// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// `cpprof diff` output: text for terminals and CI logs, JSON (schema cpprof.diff/1).
#pragma once

#include <ostream>

#include "model/diff.h"

namespace cpprof::render {

struct DiffRenderOptions {
  size_t top = 20;  // kernel rows shown (changed rows always come first); 0: all
  bool sanity_only = false;
  bool full_names = false;  // kernel names whole (default: template arguments and parameters shortened)
  size_t width = 0;         // the line width tables and prose fit (0: unlimited, --wide)
};

void PrintDiffText(const model::ReportDiff& d, const DiffRenderOptions& o, std::ostream& out);
void PrintDiffJson(const model::ReportDiff& d, std::ostream& out);

}  // namespace cpprof::render
