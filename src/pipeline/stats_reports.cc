#include "pipeline/stats_reports.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/summary_stats.h"
#include "nsys/export_reader.h"
#include "nsys/grouped_values.h"
#include "nsys/stats_tables.h"
#include "pipeline/nvtx_reports.h"
#include "pipeline/summary_table.h"
#include "render/pyformat.h"

namespace cpprof::pipeline {

using model::StatsTable;

namespace {

std::vector<SummaryRow> Summarize(std::vector<nsys::Group> groups) {
  std::vector<KeyedValues> keyed;
  keyed.reserve(groups.size());
  for (auto& g : groups) keyed.push_back({{std::move(g.name)}, std::move(g.values)});
  return SummarizeGroups(std::move(keyed));
}

StatsTable Skipped(std::string why) {
  StatsTable t;
  t.skipped = std::move(why);
  return t;
}

StatusOr<StatsTable> KernSum(const nsys::Database& db) {
  if (!db.HasTable("StringIds")) return Skipped(db.path() + " file does not contain StringIds table.");
  if (!db.HasTable(nsys::kKernelTable)) return Skipped(db.path() + " does not contain CUDA kernel data.");
  CPPROF_ASSIGN_OR_RETURN(auto groups, nsys::KernelDurationsByName(db));
  return DurationSummaryTable(Summarize(std::move(groups)), "Instances", {"Name"}, TieBreak::kCountThenKeys);
}

StatusOr<StatsTable> MemTimeSum(const nsys::Database& db) {
  std::string skipped;
  CPPROF_ASSIGN_OR_RETURN(auto groups, nsys::MemOpValuesByOperation(db, nsys::MemOpValue::kDuration, &skipped));
  if (!skipped.empty()) return Skipped(skipped);
  return DurationSummaryTable(Summarize(std::move(groups)), "Count", {"Operation"}, TieBreak::kKeys);
}

StatusOr<StatsTable> MemSizeSum(const nsys::Database& db) {
  std::string skipped;
  CPPROF_ASSIGN_OR_RETURN(auto groups, nsys::MemOpValuesByOperation(db, nsys::MemOpValue::kBytes, &skipped));
  if (!skipped.empty()) return Skipped(skipped);
  auto rows = Summarize(std::move(groups));
  std::sort(rows.begin(), rows.end(), [](const SummaryRow& a, const SummaryRow& b) {
    return a.s.total != b.s.total ? a.s.total > b.s.total : a.keys < b.keys;
  });
  using render::MegabytesFixed3;
  StatsTable t;
  t.columns = {{"Total (MB)"}, {"Count"},    {"Avg (MB)"},    {"Med (MB)"},
               {"Min (MB)"},   {"Max (MB)"}, {"StdDev (MB)"}, {"Operation", false}};
  for (const auto& r : rows) {
    t.rows.push_back({MegabytesFixed3(static_cast<double>(r.s.total)), std::to_string(r.s.count),
                      MegabytesFixed3(r.s.mean), MegabytesFixed3(r.s.median),
                      MegabytesFixed3(static_cast<double>(r.s.min)), MegabytesFixed3(static_cast<double>(r.s.max)),
                      MegabytesFixed3(r.s.stdev), r.keys[0]});
  }
  return t;
}

constexpr StatsReportDef kReports[] = {
    {"cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", "time per kernel name (demangled)", KernSum},
    {"cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)", "time per memcpy kind and memset", MemTimeSum},
    {"cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)", "bytes per memcpy kind and memset", MemSizeSum},
    {"nvtx_sum", "NVTX Range Summary", "time per NVTX range (\"domain:text\") and style", NvtxSum},
    {"nvtx_gpu_proj_sum", "NVTX GPU Projection Summary",
     "GPU time of the work launched inside each NVTX range (same-thread ranges)", NvtxGpuProjSum},
};

}  // namespace

std::span<const StatsReportDef> StatsReports() { return kReports; }

const StatsReportDef* FindStatsReport(std::string_view name) {
  for (const auto& r : kReports) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

StatusOr<StatsTable> RunStatsReport(const StatsReportDef& report, const std::string& path) {
  CPPROF_ASSIGN_OR_RETURN(nsys::Database db, nsys::Database::Open(path));
  if (db.tables().empty()) {
    return Error(ExitCode::kNotAnExport,
                 fmt::format("'{}' is an SQLite database with no tables: not an nsys export. Export "
                             "the report with 'nsys export --type sqlite REPORT.nsys-rep'.",
                             path));
  }
  CPPROF_ASSIGN_OR_RETURN(StatsTable t, report.run(db));
  t.report = std::string(report.name);
  t.title = std::string(report.title);
  return t;
}

}  // namespace cpprof::pipeline
