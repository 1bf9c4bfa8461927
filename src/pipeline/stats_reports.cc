#include "pipeline/stats_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "analysis/summary_stats.h"
#include "base/parallel.h"
#include "nsys/export_reader.h"
#include "nsys/gpu_trace_rows.h"
#include "nsys/grouped_values.h"
#include "nsys/stats_tables.h"
#include "pipeline/nvtx_kern_sum.h"
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
  int64_t damaged = 0;
  std::vector<nsys::Group> groups;
};

// The groups of every export (one export per thread: each is read by one SQLite scan), gathered
// by name: a group's values export by export in the order given, each in its table order, as one
// export holding all the rows would list them. `skipped` is set (the exports' reasons joined)
// only when every export was skipped.
template <class ReadGroups>
StatusOr<std::vector<SummaryRow>> SummarizeExports(std::span<const nsys::Database> dbs, ReadGroups read,
                                                   std::string* skipped, int64_t* damaged) {
  std::vector<ExportGroups> per(dbs.size());
  ParallelFor(nsys::ExecOf(dbs).threads, dbs.size(), [&](size_t i) {
    StatusOr<std::vector<nsys::Group>> groups = read(dbs[i], &per[i].skipped, &per[i].damaged);
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
    *damaged += e.damaged;
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
  int64_t damaged = 0;
  CPPROF_ASSIGN_OR_RETURN(auto rows, SummarizeExports(
                                         dbs,
                                         [](const nsys::Database& db, std::string* why,
                                            int64_t* bad) -> StatusOr<std::vector<nsys::Group>> {
                                           if (!db.HasTable("StringIds"))
                                             *why = db.path() + " file does not contain StringIds table.";
                                           if (why->empty() && !db.HasTable(nsys::kKernelTable))
                                             *why = db.path() + " does not contain CUDA kernel data.";
                                           if (!why->empty()) return std::vector<nsys::Group>{};
                                           return nsys::KernelDurationsByName(db, bad);
                                         },
                                         &skipped, &damaged));
  if (!skipped.empty()) return Skipped(skipped);
  StatsTable t = DurationSummaryTable(std::move(rows), "Instances", {"Name"}, TieBreak::kCountThenKeys);
  NoteDamaged(damaged, "kernels", t);
  return t;
}

// cuda_api_sum's name: the function without its version suffix ("cudaLaunchKernel_v7000" ->
// "cudaLaunchKernel"), as nsys's CASE substr(value, -6, 2) WHEN '_v' cuts it.
std::string WithoutVersionSuffix(std::string name) {
  if (name.size() >= 6 && name.compare(name.size() - 6, 2, "_v") == 0) name.resize(name.size() - 6);
  return name;
}

// cuda_api_sum and osrt_sum: call durations per function of `table` (rows matching `where`),
// skipped (nsys's words) where the export lacks StringIds or the table. One export: a row per
// nameId as nsys groups them (one per process where each registered the name); several
// (--merge): a row per name.
StatusOr<StatsTable> CallSum(std::span<const nsys::Database> dbs, const char* table, const char* where,
                             const char* missing, bool strip_version) {
  auto read = [&](const nsys::Database& db, std::string* why, int64_t* bad) -> StatusOr<std::vector<nsys::Group>> {
    if (!db.HasTable("StringIds")) *why = db.path() + " file does not contain StringIds table.";
    if (why->empty() && !db.HasTable(table)) *why = db.path() + " " + missing;
    if (!why->empty()) return std::vector<nsys::Group>{};
    CPPROF_ASSIGN_OR_RETURN(auto groups, nsys::CallDurationsByNameId(db, table, where, bad));
    if (strip_version) {
      for (auto& g : groups) g.name = WithoutVersionSuffix(std::move(g.name));
    }
    return groups;
  };
  std::string skipped;
  int64_t damaged = 0;
  std::vector<SummaryRow> rows;
  if (dbs.size() == 1) {
    CPPROF_ASSIGN_OR_RETURN(auto groups, read(dbs[0], &skipped, &damaged));
    std::vector<KeyedValues> keyed;
    for (auto& g : groups) keyed.push_back({{std::move(g.name)}, std::move(g.values)});
    rows = SummarizeGroups(std::move(keyed));
  } else {
    CPPROF_ASSIGN_OR_RETURN(rows, SummarizeExports(dbs, read, &skipped, &damaged));
  }
  if (!skipped.empty()) return Skipped(skipped);
  StatsTable t = DurationSummaryTable(std::move(rows), "Num Calls", {"Name"}, TieBreak::kInputOrder);
  NoteDamaged(damaged, "calls", t);
  return t;
}

StatusOr<StatsTable> CudaApiSum(std::span<const nsys::Database> dbs) {
  return CallSum(dbs, nsys::kRuntimeTable, "", "does not contain CUDA trace data.", true);
}

StatusOr<StatsTable> OsrtSum(std::span<const nsys::Database> dbs) {
  // eventClass 27: the OS runtime calls (nsys's osrt_sum leaves out the rest of OSRT_API).
  return CallSum(dbs, "OSRT_API", "eventClass == 27", "does not contain OS Runtime trace data.", false);
}

// cuda_api_gpu_sum's operations of one export: API calls (version suffix cut), kernels and memory
// operations, each group's name prefixed by its category's index in kApiGpuCategories (a name
// is one group per category; nsys groups by name alone, which differs only if an API function
// and a kernel share a name).
constexpr const char* kApiGpuCategories[] = {"CUDA_API", "CUDA_KERNEL", "MEMORY_OPER"};

StatusOr<std::vector<nsys::Group>> ApiGpuGroups(const nsys::Database& db, std::string* why, int64_t* damaged) {
  if (!db.HasTable("StringIds")) {
    *why = db.path() + " file does not contain StringIds table.";
    return std::vector<nsys::Group>{};
  }
  std::vector<nsys::Group> all;
  auto add = [&all](std::vector<nsys::Group> groups, char category, bool strip_version) {
    for (auto& g : groups) {
      g.name = std::string(1, category) + (strip_version ? WithoutVersionSuffix(std::move(g.name)) : g.name);
      all.push_back(std::move(g));
    }
  };
  if (db.HasTable(nsys::kRuntimeTable)) {
    CPPROF_ASSIGN_OR_RETURN(auto groups, nsys::CallDurationsByNameId(db, nsys::kRuntimeTable, "", damaged));
    add(std::move(groups), 0, true);
  }
  if (db.HasTable(nsys::kKernelTable)) {
    CPPROF_ASSIGN_OR_RETURN(auto groups, nsys::KernelDurationsByName(db, damaged));
    add(std::move(groups), 1, false);
  }
  if (db.HasTable(nsys::kMemcpyTable) || db.HasTable(nsys::kMemsetTable)) {
    CPPROF_ASSIGN_OR_RETURN(auto groups, nsys::MemOpValuesByOperation(db, nsys::MemOpValue::kDuration, why, damaged));
    add(std::move(groups), 2, false);
  } else if (all.empty()) {
    *why = db.path() + " does not contain CUDA API, GPU kernel, nor memory operations data.";
  }
  return all;
}

StatusOr<StatsTable> ApiGpuSum(std::span<const nsys::Database> dbs) {
  std::string skipped;
  int64_t damaged = 0;
  CPPROF_ASSIGN_OR_RETURN(auto rows, SummarizeExports(dbs, ApiGpuGroups, &skipped, &damaged));
  if (!skipped.empty()) return Skipped(skipped);
  for (auto& r : rows) {  // the category back out of the name
    std::string name = r.keys[0].substr(1);
    r.keys = {kApiGpuCategories[static_cast<unsigned char>(r.keys[0][0])], std::move(name)};
  }
  // Ties by name: nsys's GROUP BY name, then ORDER BY total.
  StatsTable t = DurationSummaryTable(std::move(rows), "Instances", {"Category", "Operation"}, TieBreak::kKeys, {1});
  NoteDamaged(damaged, "calls and GPU ops", t);
  return t;
}

std::string IntCell(int64_t v) { return v == nsys::kNullInt ? std::string() : std::to_string(v); }
std::string NonZeroCell(int64_t v) { return v == 0 ? std::string() : std::to_string(v); }
std::string MegabytesCell(int64_t bytes) {
  return bytes == nsys::kNullInt ? std::string() : render::MegabytesFixed3(static_cast<double>(bytes));
}

// nsys: bytes * (1000000000 / duration), an integer division; NULL without bytes or duration.
std::string ThroughputCell(const nsys::GpuTraceOp& op) {
  const int64_t bytes = op.launch[0];
  if (op.kind == nsys::GpuTraceOp::kKernel || bytes == nsys::kNullInt || op.duration == 0) return "";
  return render::MegabytesFixed3(static_cast<double>(bytes) * static_cast<double>(1'000'000'000 / op.duration));
}

void GpuTraceCells(const nsys::GpuTraceRows& rows, const nsys::GpuTraceOp& op, std::vector<std::string>& cells) {
  auto text = [&](int32_t i) { return i == nsys::kNoText ? std::string() : rows.texts[static_cast<size_t>(i)]; };
  const bool kernel = op.kind == nsys::GpuTraceOp::kKernel;
  cells.push_back(std::to_string(op.start));
  cells.push_back(std::to_string(op.duration));
  cells.push_back(IntCell(op.correlation));
  for (int i = 0; i < 7; ++i) cells.push_back(kernel ? IntCell(op.launch[i]) : std::string());
  cells.push_back(kernel ? MegabytesCell(op.launch[7]) : std::string());
  cells.push_back(kernel ? MegabytesCell(op.launch[8]) : std::string());
  cells.push_back(kernel ? std::string() : MegabytesCell(op.launch[0]));
  cells.push_back(ThroughputCell(op));
  cells.push_back(text(op.src_kind));
  cells.push_back(text(op.dst_kind));
  cells.push_back(text(op.device));
  cells.push_back(NonZeroCell(op.context));
  cells.push_back(NonZeroCell(op.green_context));
  cells.push_back(NonZeroCell(op.stream));
  cells.push_back(text(op.name));
}

// cuda_gpu_trace: a row per GPU op, made as it is printed (a table of millions of ops is never
// held as text). Of one export only: the exports of a run have their own clocks.
StatusOr<StatsTable> GpuTrace(std::span<const nsys::Database> dbs) {
  if (dbs.size() != 1) {
    return Error(ExitCode::kUsage,
                 "cuda_gpu_trace lists one export's GPU ops on its own clock: it has no --merge table. Run it "
                 "without --merge (each export's trace in turn), or use 'cpprof export' for one timeline of the run.");
  }
  std::string skipped;
  CPPROF_ASSIGN_OR_RETURN(nsys::GpuTraceRows read, nsys::ReadGpuTraceRows(dbs[0], &skipped));
  if (!skipped.empty()) return Skipped(skipped);
  auto rows = std::make_shared<const nsys::GpuTraceRows>(std::move(read));
  StatsTable t;
  for (const char* h : {"Start (ns)", "Duration (ns)", "CorrId", "GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ",
                        "Reg/Trd", "StcSMem (MB)", "DymSMem (MB)", "Bytes (MB)", "Throughput (MB/s)"}) {
    t.columns.push_back({h});
  }
  for (const char* h : {"SrcMemKd", "DstMemKd", "Device"}) t.columns.push_back({h, false});
  for (const char* h : {"Ctx", "GreenCtx", "Strm"}) t.columns.push_back({h});
  t.columns.push_back({"Name", false});
  t.lazy_count = rows->ops.size();
  t.lazy_row = [rows](size_t i, std::vector<std::string>& cells) { GpuTraceCells(*rows, rows->ops[i], cells); };
  NoteDamaged(rows->damaged, "GPU ops", t);
  return t;
}

StatusOr<std::vector<SummaryRow>> MemOpRows(std::span<const nsys::Database> dbs, nsys::MemOpValue value,
                                            std::string* skipped, int64_t* damaged) {
  return SummarizeExports(
      dbs,
      [value](const nsys::Database& db, std::string* why, int64_t* bad) {
        return nsys::MemOpValuesByOperation(db, value, why, bad);
      },
      skipped, damaged);
}

StatusOr<StatsTable> MemTimeSum(std::span<const nsys::Database> dbs) {
  std::string skipped;
  int64_t damaged = 0;
  CPPROF_ASSIGN_OR_RETURN(auto rows, MemOpRows(dbs, nsys::MemOpValue::kDuration, &skipped, &damaged));
  if (!skipped.empty()) return Skipped(skipped);
  StatsTable t = DurationSummaryTable(std::move(rows), "Count", {"Operation"}, TieBreak::kKeys);
  NoteDamaged(damaged, "memory ops", t);
  return t;
}

StatusOr<StatsTable> MemSizeSum(std::span<const nsys::Database> dbs) {
  std::string skipped;
  int64_t damaged = 0;
  CPPROF_ASSIGN_OR_RETURN(auto rows, MemOpRows(dbs, nsys::MemOpValue::kBytes, &skipped, &damaged));
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
  NoteDamaged(damaged, "memory ops", t);
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
    {"cuda_api_sum", "CUDA API Summary", "time per CUDA API function (runtime and driver)", CudaApiSum},
    {"cuda_api_gpu_sum", "CUDA Summary (API/Kernels/MemOps)",
     "time per CUDA API function, kernel name and memory operation, in one table", ApiGpuSum},
    {"cuda_gpu_trace", "CUDA GPU Trace", "every kernel, memcpy and memset with its launch, size, device and stream",
     GpuTrace},
    {"osrt_sum", "OS Runtime Summary", "time per OS runtime function (pthread, poll, ioctl, ...)", OsrtSum},
    {"nvtx_kern_sum", "NVTX Range Kernel Summary",
     "kernels per NVTX range that holds their launch, per process and thread", NvtxKernSum},
};

// nsys 2025.3.1's reports (`nsys stats --help-reports`) that cpprof does not implement, and the
// DirectX ones its default set names; `data_table`: a table (or a prefix of tables) the report
// needs, for those of the default set.
struct NsysOnlyReport {
  std::string_view name;
  std::string_view data_table;
};

constexpr NsysOnlyReport kNsysOnlyReports[] = {
    {"cuda_api_trace", ""},
    {"cuda_gpu_kern_gb_sum", ""},
    {"cuda_gpu_sum", ""},
    {"cuda_kern_exec_sum", ""},
    {"cuda_kern_exec_trace", ""},
    {"mpi_event_sum", ""},
    {"mpi_event_trace", ""},
    {"mpi_msg_size_sum", ""},
    {"network_congestion", ""},
    {"nvtx_gpu_proj_trace", ""},
    {"nvtx_pushpop_sum", ""},
    {"nvtx_pushpop_trace", ""},
    {"nvtx_startend_sum", ""},
    {"nvvideo_api_sum", ""},
    {"vulkan_api_sum", ""},
    {"vulkan_api_trace", ""},
    {"openmp_sum", "OPENMP_EVENT_KIND_"},
    {"opengl_khr_range_sum", "KHR_DEBUG_EVENTS"},
    {"opengl_khr_gpu_range_sum", "KHR_DEBUG_EVENTS"},
    {"vulkan_marker_sum", "VULKAN_DEBUG_API"},
    {"vulkan_gpu_marker_sum", "VULKAN_WORKLOAD"},
    {"dx11_pix_sum", "D3D11_PIX_DEBUG_API"},
    {"dx12_gpu_marker_sum", "DX12_WORKLOAD"},
    {"dx12_pix_sum", "D3D12_PIX_DEBUG_API"},
    {"wddm_queue_sum", "TARGET_INFO_WDDM_CONTEXTS"},
    {"um_sum", "CUDA_UM_GPU_PAGE_FAULT_EVENTS"},
    {"um_total_sum", "CUDA_UM_GPU_PAGE_FAULT_EVENTS"},
    {"um_cpu_page_faults_sum", "CUDA_UM_CPU_PAGE_FAULT_EVENTS"},
    {"openacc_sum", "CUPTI_ACTIVITY_KIND_OPENACC_"},
    {"syscall_sum", "SYSCALL"},
};

// `nsys stats --help`'s default report set, in its order.
constexpr std::string_view kNsysDefaultReports[] = {
    "nvtx_sum",
    "osrt_sum",
    "cuda_api_sum",
    "cuda_gpu_kern_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_mem_size_sum",
    "openmp_sum",
    "opengl_khr_range_sum",
    "opengl_khr_gpu_range_sum",
    "vulkan_marker_sum",
    "vulkan_gpu_marker_sum",
    "dx11_pix_sum",
    "dx12_gpu_marker_sum",
    "dx12_pix_sum",
    "wddm_queue_sum",
    "um_sum",
    "um_total_sum",
    "um_cpu_page_faults_sum",
    "openacc_sum",
    "syscall_sum",
};

const NsysOnlyReport* FindNsysOnlyReport(std::string_view name) {
  for (const auto& r : kNsysOnlyReports) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

bool HasDataTable(const nsys::Database& db, std::string_view table) {
  if (!table.ends_with('_')) return db.HasTable(table);
  return std::any_of(db.tables().begin(), db.tables().end(),
                     [&](const std::string& t) { return std::string_view(t).starts_with(table); });
}

}  // namespace

std::span<const StatsReportDef> StatsReports() { return kReports; }

bool IsNsysOnlyReport(std::string_view name) {
  const size_t colon = name.find(':');
  if (colon != std::string_view::npos) {  // nsys's arguments: none is implemented
    std::string_view base = name.substr(0, colon);
    return FindStatsReport(base) != nullptr || FindNsysOnlyReport(base) != nullptr;
  }
  return FindNsysOnlyReport(name) != nullptr;
}

std::span<const std::string_view> NsysDefaultReports() { return kNsysDefaultReports; }

std::vector<std::string> NsysOnlyDefaultReportsWithData(const std::vector<std::string>& paths,
                                                        const ExecContext& exec) {
  std::vector<std::string> out;
  std::vector<nsys::Database> dbs;
  for (const auto& path : paths) {
    StatusOr<nsys::Database> db = nsys::Database::Open(path, exec);
    if (db.ok()) dbs.push_back(std::move(*db));
  }
  for (std::string_view name : kNsysDefaultReports) {
    const NsysOnlyReport* r = FindNsysOnlyReport(name);
    if (!r) continue;
    if (std::any_of(dbs.begin(), dbs.end(), [&](const nsys::Database& db) { return HasDataTable(db, r->data_table); }))
      out.emplace_back(name);
  }
  return out;
}

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
