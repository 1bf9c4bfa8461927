// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The reports of `cpprof stats`: drop-in equivalents of `nsys stats --report NAME`, declared as
// data. Each yields the same columns, rows, order and number formatting as nsys's CSV.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/stats_table.h"
#include "nsys/sqlite_db.h"

namespace cpprof::pipeline {

struct StatsReportDef {
  std::string_view name;
  std::string_view title;
  std::string_view what;  // one line for help
  // The report of one export, or of several merged (`stats --merge`): the table nsys would print
  // for one export holding all of their rows. Groups are keyed by name across exports; a group's
  // values are taken export by export in the order given, each export's in its table order.
  // Skipped when every export lacks the data (their reasons, one line each); an export that lacks it
  // while others have it adds no rows.
  StatusOr<model::StatsTable> (*run)(std::span<const nsys::Database> dbs);
};

std::span<const StatsReportDef> StatsReports();
const StatsReportDef* FindStatsReport(std::string_view name);

// A report nsys 2025.3.1 has that cpprof does not implement (`nsys stats --help-reports`, and the
// DirectX ones of its default set); `name` may carry nsys's arguments ("cuda_gpu_trace:base",
// "um_sum:rows=10"): true for an implemented report with arguments cpprof does not take either.
bool IsNsysOnlyReport(std::string_view name);

// nsys's default report set (`nsys stats` without --report), in its order: cpprof's reports and
// nsys-only ones.
std::span<const std::string_view> NsysDefaultReports();

// The reports of nsys's default set that cpprof does not implement and for which some export of
// `paths` holds data (a table the report reads): the ones to run with `nsys stats`. Errors opening
// an export are left to the reports that read it.
std::vector<std::string> NsysOnlyDefaultReportsWithData(const std::vector<std::string>& paths, const ExecContext& exec);

// Opens `path` and runs `report` on it (opening errors as for `cpprof report`).
StatusOr<model::StatsTable> RunStatsReport(const StatsReportDef& report, const std::string& path,
                                           const ExecContext& exec);
// Opens every export of `paths` and runs `report` over all of them as one (see StatsReportDef::run).
StatusOr<model::StatsTable> RunStatsReport(const StatsReportDef& report, const std::vector<std::string>& paths,
                                           const ExecContext& exec);

}  // namespace cpprof::pipeline
