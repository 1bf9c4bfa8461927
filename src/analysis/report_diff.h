// `cpprof diff`: two readouts side by side. Kernel mix (per class and per kernel: instances and
// time share), per-rank GPU time and peak memory, module times; the sanity verdict ("did a
// launcher or annotation change alter the GPU work?": same kernel names and counts per rank,
// peak memory within a tolerance); and regressions against thresholds (for CI gates).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/report.h"

namespace cpprof::analysis {

enum class DiffMarker { kSame, kChanged, kNew, kDeleted };
// Fixed width (5 characters): "[ = ]", "[ ~ ]", "[NEW]", "[DEL]".
std::string_view MarkerText(DiffMarker m);

struct DiffRow {
  std::string key;    // class name, kernel name, or module path ("trunk/CPFoldModel.trunk")
  std::string label;  // the kernel's class, the module's CP/serial
  int64_t a_count = 0, b_count = 0;  // instances (kernels, classes) or GPU ops (modules)
  int64_t a_ns = 0, b_ns = 0;        // total time (kernels, classes); mean busy per rank (modules)
  double a_share = 0, b_share = 0;   // of all GPU op time (kernels, classes); of mean busy (modules)
  DiffMarker marker = DiffMarker::kSame;
};

struct RankDiff {
  int rank = 0;
  bool in_a = false, in_b = false;
  int64_t a_busy = 0, b_busy = 0, a_comm = 0, b_comm = 0;
  std::optional<int64_t> a_peak, b_peak;  // bytes, when memory was captured
};

struct DiffOptions {
  double mem_tolerance = 0.05;            // --sanity: relative peak memory difference allowed
  std::optional<double> max_time_delta;   // --max-time-delta: relative growth of busy time allowed
  std::optional<double> max_mem_delta;    // --max-mem-delta: relative growth of peak memory allowed
};

struct ReportDiff {
  size_t a_ranks = 0, b_ranks = 0;
  std::vector<RankDiff> ranks;
  std::vector<DiffRow> classes, kernels, modules;
  bool same_work = false;                 // the sanity verdict
  std::string sanity_line;                // one line that says it
  std::vector<std::string> sanity_details;
  std::vector<std::string> regressions;   // thresholds crossed (empty: none, or none asked)
  bool memory_compared = false;
};

// Peak GPU memory per rank, when the report holds it (index = rank).
using PeakMemoryOf = std::vector<std::optional<int64_t>> (*)(const model::Report&);

// `a` and `b` need all kernels per rank (BuildReport with top_kernels = 0).
ReportDiff DiffReports(const model::Report& a, const model::Report& b, const DiffOptions& options,
                       PeakMemoryOf peak_memory = nullptr);

}  // namespace cpprof::analysis
