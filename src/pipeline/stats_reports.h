// The reports of `cpprof stats`: drop-in equivalents of `nsys stats --report NAME`, declared as
// data. Each yields the same columns, rows, order and number formatting as nsys's CSV.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "model/stats_table.h"
#include "nsys/sqlite_db.h"

namespace cpprof::pipeline {

struct StatsReportDef {
  std::string_view name;
  std::string_view title;
  std::string_view what;  // one line for help
  StatusOr<model::StatsTable> (*run)(const nsys::Database& db);
};

std::span<const StatsReportDef> StatsReports();
const StatsReportDef* FindStatsReport(std::string_view name);

// Opens `path` and runs `report` on it (opening errors as for `cpprof report`).
StatusOr<model::StatsTable> RunStatsReport(const StatsReportDef& report, const std::string& path);

}  // namespace cpprof::pipeline
