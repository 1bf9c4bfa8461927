// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Reads what module attribution needs from an export (NVTX module ranges, autograd threads,
// CUDA API calls) and tags every launch with its module node and phase.
#pragma once

#include <re2/re2.h>

#include <map>
#include <memory>
#include <vector>

#include "analysis/backtrace_modules.h"
#include "analysis/host_calls.h"
#include "analysis/module_attribution.h"
#include "analysis/module_config.h"
#include "analysis/window.h"
#include "base/status.h"
#include "model/cost.h"
#include "model/nccl.h"
#include "nsys/nvtx_facts.h"
#include "nsys/nvtx_reader.h"
#include "nsys/sqlite_db.h"

namespace cpprof::pipeline {

struct Attribution {
  std::unique_ptr<analysis::ModuleAttribution> modules;  // null when nothing can be attributed
  analysis::CallTags calls;
  analysis::HostCalls host_calls;  // with Launches::kTagAndHost: every call's start and thread, the syncs
  // Every module range's call (process, start, node), for the calls per iteration in a window.
  std::vector<analysis::ModuleCall> module_calls;
  // The shapes PyTorch's op ranges recorded under each module node (--pytorch
  // autograd-shapes-nvtx), by path: what the cost model's sizes are found from.
  std::vector<model::ModuleShapes> shapes;
  int64_t kept_ranges = 0;           // NVTX ranges kept: modules, optimizer and warm-up markers, autograd's
  int64_t cross_thread = 0;          // ranges ending on another thread (left out, as nsys does)
  int64_t damaged_runtime_rows = 0;  // CUDA API calls with damaged times, left out
  int64_t distinct_names = 0;        // "domain:text" names classified, each once (autograd op ranges aside)
  bool has_autograd_threads = false;
  std::string warmup_range;  // the first warm-up range seen ("" none), named in the readout
  // Read on the way, so that NVTX_EVENTS is read once: for the capture diagnostics
  // (nsys::ReadNvtxFacts) and the ranks (NCCL's payloads, globalPid ->).
  nsys::NvtxDomains domains;
  nsys::NvtxRangeTally tally;
  std::map<int64_t, model::NcclRankInfo> nccl_ranks;
  bool has_nvtx = false;
  // Iteration markers (analysis/window.h), for the report's window, and how they were found.
  std::vector<analysis::IterationMark> iteration_marks;
  std::string iteration_method;
  // Module calls made from the launches' Python backtraces (empty when the export has none).
  model::BacktraceModuleSummary backtraces;
};

enum class Launches : uint8_t { kNone, kTag, kTagAndHost };

// `iteration_range`, when not null, replaces the built-in iteration marker names: the ranges
// ("domain:text") it is found in are the iterations (--iteration-range, an RE2 regex: see
// base/regex.h); `iteration_pattern` is its text, said in the readout. Every pattern is matched
// once per distinct range name, not once per range. With Launches::kNone the CUDA API calls are
// not read (no launch is tagged: `calls` and `modules` stay empty): what the iterations need.
// kTagAndHost reads them even when no range can tag them, and keeps `host_calls` (the replay's).
// `sources` reads the Python files the backtraces name (module calls from Python backtraces,
// analysis/backtrace_modules.h); empty: none is read.
StatusOr<Attribution> ReadAttribution(const nsys::Database& db, const analysis::ModuleConfig& config,
                                      const RE2* iteration_range = nullptr, const std::string& iteration_pattern = "",
                                      Launches launches = Launches::kTag, const analysis::SourceReader& sources = {});

}  // namespace cpprof::pipeline
