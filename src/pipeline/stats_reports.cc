#include "pipeline/stats_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "analysis/summary_stats.h"
#include "base/parallel.h"
#include "nsys/export_reader.h"
#include "nsys/grouped_values.h"
#include "nsys/stats_tables.h"
#include "pipeline/nvtx_reports.h"
#include "pipeline/summary_table.h"
#include "render/pyformat.h"

namespace cpprof::pipeline {

using model::StatsTable;

namespace {

StatsTable Skipped(std::string why) {
  StatsTable t;
  t.skipped = std::move(why);
  return t;
}

// One export's groups of (name, values) for a report, or why nsys would skip the report there.
struct ExportGroups {
  Status status;
  std::string skipped;
  std::vector<nsys::Group> groups;
};

// The groups of every export (one export per thread: each is read by one SQLite scan), gathered
// by name: a group's values export by export in the order given, each in its table order, as one
// export holding all the rows would list them. `skipped` is set (the exports' reasons joined)
// only when every export was skipped.
template <class ReadGroups>
StatusOr<std::vector<SummaryRow>> SummarizeExports(std::span<const nsys::Database> dbs, ReadGroups read,
                                                   std::string* skipped) {
  std::vector<ExportGroups> per(dbs.size());
  ParallelFor(nsys::ExecOf(dbs).threads, dbs.size(), [&](size_t i) {
    StatusOr<std::vector<nsys::Group>> groups = read(dbs[i], &per[i].skipped);
    if (!groups.ok()) {
      per[i].status = groups.status();
    } else if (per[i].skipped.empty()) {
      per[i].groups = std::move(*groups);
    }
  });
  std::vector<KeyedValues> keyed;
  std::unordered_map<std::string, size_t> index;
  std::string reasons;
  bool any = false;
  for (ExportGroups& e : per) {
    CPPROF_RETURN_IF_ERROR(e.status);
    if (!e.skipped.empty()) {
      reasons += (reasons.empty() ? "" : "\n") + e.skipped;
      continue;
    }
    any = true;
    for (nsys::Group& g : e.groups) {
      auto [it, inserted] = index.try_emplace(g.name, keyed.size());
      if (inserted) {
        keyed.push_back({{std::move(g.name)}, std::move(g.values)});
      } else {
        keyed[it->second].values.Append(std::move(g.values));
      }
    }
    std::vector<nsys::Group>().swap(e.groups);  // freed as it goes
  }
  if (!any) {
    *skipped = reasons;
    return std::vector<SummaryRow>{};
  }
  return SummarizeGroups(std::move(keyed));
}

StatusOr<StatsTable> KernSum(std::span<const nsys::Database> dbs) {
  std::string skipped;
  CPPROF_ASSIGN_OR_RETURN(auto rows,
                          SummarizeExports(
                              dbs,
                              [](const nsys::Database& db, std::string* why) -> StatusOr<std::vector<nsys::Group>> {
                                if (!db.HasTable("StringIds"))
                                  *why = db.path() + " file does not contain StringIds table.";
                                if (why->empty() && !db.HasTable(nsys::kKernelTable))
                                  *why = db.path() + " does not contain CUDA kernel data.";
                                if (!why->empty()) return std::vector<nsys::Group>{};
                                return nsys::KernelDurationsByName(db);
                              },
                              &skipped));
  if (!skipped.empty()) return Skipped(skipped);
  return DurationSummaryTable(std::move(rows), "Instances", {"Name"}, TieBreak::kCountThenKeys);
}

StatusOr<std::vector<SummaryRow>> MemOpRows(std::span<const nsys::Database> dbs, nsys::MemOpValue value,
                                            std::string* skipped) {
  return SummarizeExports(
      dbs, [value](const nsys::Database& db, std::string* why) { return nsys::MemOpValuesByOperation(db, value, why); },
      skipped);
}

StatusOr<StatsTable> MemTimeSum(std::span<const nsys::Database> dbs) {
  std::string skipped;
  CPPROF_ASSIGN_OR_RETURN(auto rows, MemOpRows(dbs, nsys::MemOpValue::kDuration, &skipped));
  if (!skipped.empty()) return Skipped(skipped);
  return DurationSummaryTable(std::move(rows), "Count", {"Operation"}, TieBreak::kKeys);
}

StatusOr<StatsTable> MemSizeSum(std::span<const nsys::Database> dbs) {
  std::string skipped;
  CPPROF_ASSIGN_OR_RETURN(auto rows, MemOpRows(dbs, nsys::MemOpValue::kBytes, &skipped));
  if (!skipped.empty()) return Skipped(skipped);
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

StatusOr<StatsTable> NvtxSumOf(std::span<const nsys::Database> dbs) { return NvtxSum(dbs); }
StatusOr<StatsTable> NvtxGpuProjSumOf(std::span<const nsys::Database> dbs) { return NvtxGpuProjSum(dbs); }

constexpr StatsReportDef kReports[] = {
    {"cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", "time per kernel name (demangled)", KernSum},
    {"cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)", "time per memcpy kind and memset", MemTimeSum},
    {"cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)", "bytes per memcpy kind and memset", MemSizeSum},
    {"nvtx_sum", "NVTX Range Summary", "time per NVTX range (\"domain:text\") and style", NvtxSumOf},
    {"nvtx_gpu_proj_sum", "NVTX GPU Projection Summary",
     "GPU time of the work launched inside each NVTX range (same-thread ranges)", NvtxGpuProjSumOf},
};

}  // namespace

std::span<const StatsReportDef> StatsReports() { return kReports; }

const StatsReportDef* FindStatsReport(std::string_view name) {
  for (const auto& r : kReports) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

StatusOr<StatsTable> RunStatsReport(const StatsReportDef& report, const std::string& path, const ExecContext& exec) {
  return RunStatsReport(report, std::vector<std::string>{path}, exec);
}

StatusOr<StatsTable> RunStatsReport(const StatsReportDef& report, const std::vector<std::string>& paths,
                                    const ExecContext& exec) {
  std::vector<nsys::Database> dbs;
  for (const auto& path : paths) {
    CPPROF_ASSIGN_OR_RETURN(nsys::Database db, nsys::Database::Open(path, exec));
    if (db.tables().empty()) {
      return Error(ExitCode::kNotAnExport,
                   fmt::format("'{}' is an SQLite database with no tables: not an nsys export. Export "
                               "the report with 'nsys export --type sqlite REPORT.nsys-rep'.",
                               path));
    }
    dbs.push_back(std::move(db));
  }
  CPPROF_ASSIGN_OR_RETURN(StatsTable t, report.run(dbs));
  t.report = std::string(report.name);
  t.title = std::string(report.title);
  t.invalid_utf8 = nsys::AnyInvalidUtf8(dbs);
  return t;
}

}  // namespace cpprof::pipeline
