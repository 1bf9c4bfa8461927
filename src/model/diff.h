// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// What `cpprof diff` computes (analysis/report_diff.h) and renders (render/diff_render.h): two
// readouts side by side. Plain types, so renderers need not depend on the analysis layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/report.h"

namespace cpprof::model {

// A row in both sides is the same only when its count is (kernels, classes) and its time moved by
// less than kDiffTimeTolerance: a row whose time moved more is slower or faster, never "same".
enum class DiffMarker { kSame, kChanged, kNew, kDeleted, kSlower, kFaster };
// Time moved by more than this fraction of A's time (and by 10 us or more): [ + ] or [ - ].
inline constexpr double kDiffTimeTolerance = 0.10;
// Fixed width (5 characters): "[ = ]", "[ ~ ]", "[NEW]", "[DEL]", "[ + ]", "[ - ]".
constexpr std::string_view MarkerText(DiffMarker m) {
  switch (m) {
    case DiffMarker::kSame:
      return "[ = ]";
    case DiffMarker::kChanged:
      return "[ ~ ]";
    case DiffMarker::kNew:
      return "[NEW]";
    case DiffMarker::kDeleted:
      return "[DEL]";
    case DiffMarker::kSlower:
      return "[ + ]";
    case DiffMarker::kFaster:
      return "[ - ]";
  }
  return "[ ? ]";
}

struct DiffRow {
  std::string key;                       // class name, kernel name, or module path ("trunk/CPFoldModel.trunk")
  std::string label;                     // the kernel's class, the module's CP/serial
  int64_t a_count = 0, b_count = 0;      // instances (kernels, classes) or GPU ops (modules)
  int64_t a_ns = 0, b_ns = 0;            // total time (kernels, classes); mean busy per rank (modules)
  int64_t a_work_ns = 0, b_work_ns = 0;  // modules: mean busy less the module's NCCL waiting
  double a_share = 0, b_share = 0;       // of all GPU op time (kernels, classes); of mean busy (modules)
  DiffMarker marker = DiffMarker::kSame;
};

// Each side's window budget (model::RankSummary): busy time mixes compute with NCCL kernels
// spinning for a late peer, so compute, exposed transfer and waiting are compared apart.
struct RankDiff {
  int rank = 0;
  bool in_a = false, in_b = false;
  int64_t a_busy = 0, b_busy = 0, a_comm = 0, b_comm = 0;
  int64_t a_compute = 0, b_compute = 0;    // union of non-communication work
  int64_t a_transfer = 0, b_transfer = 0;  // exposed transfer
  int64_t a_wait = 0, b_wait = 0;          // waiting for peers (communication-only, not transfer)
  int64_t a_idle = 0, b_idle = 0;
  std::optional<int64_t> a_peak, b_peak;  // bytes, when memory was captured
};

// Differing nsys option sets change driver-level peak memory by up to 8.5% on a real 4-rank
// run with identical GPU work: the default tolerance accepts that.
inline constexpr double kDefaultMemTolerance = 0.10;

struct DiffOptions {
  double mem_tolerance = kDefaultMemTolerance;  // --sanity: relative peak memory difference allowed
  // --max-time-delta: relative growth of a rank's compute time (or a module's busy time less
  // its NCCL waiting) allowed.
  std::optional<double> max_time_delta;
  std::optional<double> max_mem_delta;  // --max-mem-delta: relative growth of peak memory allowed
  // --max-iter-delta: relative growth of the median steady iteration allowed; with it, a newly
  // named straggler or waiting for peers grown by more than it (mean per rank, against A's
  // iteration) is a regression too.
  std::optional<double> max_iter_delta;
};

struct ReportDiff {
  size_t a_ranks = 0, b_ranks = 0;
  std::vector<RankDiff> ranks;
  std::vector<DiffRow> classes, kernels, modules;
  bool same_work = false;     // the sanity verdict
  bool kernels_same = false;  // check 1: kernel names and counts per rank (and rank count)
  bool memory_same = true;    // check 2: peak memory per rank within the tolerance
  std::string sanity_line;    // one line that says it, naming the check that failed
  std::vector<std::string> sanity_details;
  // The two captures' nsys options, when they differ ("" when the same or not recorded): timing
  // differences may come from the profiler, not the work.
  std::string options_a, options_b;
  std::string window_a, window_b;        // what each side's numbers cover
  std::vector<std::string> regressions;  // thresholds crossed (empty: none, or none asked)
  bool memory_compared = false;
};

// Peak GPU memory per rank, when the report holds it (index = rank).
using PeakMemoryOf = std::vector<std::optional<int64_t>> (*)(const model::Report&);

}  // namespace cpprof::model
