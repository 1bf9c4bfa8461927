// Wires reading (nsys/) and analysis (analysis/) into the model of `cpprof report`.
#pragma once

#include <string>

#include "analysis/module_config.h"
#include "base/status.h"
#include "model/report.h"

namespace cpprof::pipeline {

struct ReportOptions {
  size_t top_kernels = 10;  // per rank; 0 = all
  const analysis::ModuleConfig* modules = nullptr;  // null: the built-in grouping
};

StatusOr<model::Report> BuildReport(const std::string& path, const ReportOptions& options);

}  // namespace cpprof::pipeline
