#include "pipeline/build_report.h"

#include <fmt/format.h>

#include "analysis/classify.h"
#include "analysis/rank_summary.h"
#include "analysis/ranks.h"
#include "nsys/export_reader.h"
#include "nsys/gpu_work_loader.h"
#include "nsys/nccl_ranks.h"

namespace cpprof::pipeline {

StatusOr<model::Report> BuildReport(const std::string& path, const ReportOptions& options) {
  CPPROF_ASSIGN_OR_RETURN(nsys::Database db, nsys::Database::Open(path));
  CPPROF_ASSIGN_OR_RETURN(nsys::ExportSchema schema, nsys::ProbeExport(db));
  CPPROF_ASSIGN_OR_RETURN(model::GpuWork work, nsys::LoadGpuWork(db, schema, analysis::ClassifyKernel));
  CPPROF_ASSIGN_OR_RETURN(auto nccl, nsys::ReadNcclRanks(db));

  model::Report report;
  report.export_info.file = path;
  report.export_info.schema_version = schema.schema_version;
  report.export_info.nsys_version = schema.nsys_version;
  report.export_info.captured = schema.present;
  report.export_info.not_captured = schema.absent;

  analysis::RankAssignment ranks = analysis::AssignRanks(work, nccl);
  report.rank_method = ranks.method;
  report.world_size = ranks.world_size;
  report.notes = ranks.notes;
  for (size_t r = 0; r < ranks.process_of_rank.size(); ++r) {
    auto& proc = work.processes[ranks.process_of_rank[r]];
    model::RankSummary s = analysis::SummarizeRank(proc, work.names, options.top_kernels);
    s.rank = static_cast<int>(r);
    if (s.invalid_ops) {
      report.notes.push_back(fmt::format("rank {}: {} GPU ops end before they start and were left out",
                                         r, s.invalid_ops));
    }
    report.ranks.push_back(std::move(s));
  }
  if (report.ranks.empty()) {
    report.notes.push_back(fmt::format("'{}' has a kernel table but no GPU work in it: did the "
                                       "profiled run reach the GPU?", path));
  }
  return report;
}

}  // namespace cpprof::pipeline
