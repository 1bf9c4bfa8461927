// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The replay of the steady window (analysis/replay.h): a dependency graph of the ranks' GPU ops,
// the critical path of each steady iteration, and what-if edits re-timed over the same graph.
// Times are nanoseconds. Each iteration's critical path adds up to its replayed time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cpprof::model {

// One stretch of an iteration's critical path, summed over the path's segments of the same rank,
// kind and module. Kinds: "compute" (a kernel or memory op, by module), "transfer" (an NCCL op
// after its last participant arrived), "host gap" (the GPU idle before a launch, 0.1 ms or more:
// the host was busy, synchronising or sleeping), "launch gap" (shorter: the host launching),
// "host" (a launch-bound op's launch call, and the host thread's own time before it since the
// GPU op it last waited for at a sync, or since the iteration's start: the host set the pace).
struct CriticalSegment {
  int rank = -1;
  std::string kind;
  std::string module;  // the module of the op ("[unattributed]" when none); "" for gaps after the last op
  int64_t ns = 0;
  int64_t segments = 0;  // segments of the path summed here
};

// The critical path in time: a stretch per run of the path on one rank, on the run's clock as
// replayed with no edit (within the self-check of the measured times). The HTML timeline draws it.
struct PathStretch {
  int rank = -1;
  int64_t start_ns = 0, end_ns = 0;
  std::string kind;  // the kind of most of its time ("compute", "transfer", "host gap", "launch gap", "host")
};
inline constexpr size_t kMaxPathStretches = 4096;  // per iteration; a longer path is not kept

struct IterationReplay {
  std::string name;                            // the iteration's marker ("cpfold:iter2")
  int64_t measured_ns = 0;                     // end - start of its marker ranges
  int64_t replay_ns = 0;                       // the replay with no edit
  std::vector<CriticalSegment> critical_path;  // by ns (largest first), then rank, kind, module
  std::vector<PathStretch> path;               // in time order; empty past kMaxPathStretches
};

// One edit re-timed over the graph (`report --what-if EDIT`, or one the verdict tried).
struct WhatIf {
  std::string edit;         // as written: "rank 1:on-time", "TriangleMultiplication*:compute*0.5"
  std::string description;  // what it changed, in words
  int64_t edited = 0;       // ops or gaps the edit changed
  int64_t predicted_iter_median_ns = 0;
  std::vector<int64_t> predicted_iter_ns;  // per steady iteration
};

// What the graph holds and what it could not tie (said, never guessed).
struct DepGraphCounts {
  int64_t ops = 0;              // GPU ops of the window, all ranks
  int64_t after_end = 0;        // ops that started after every earlier op of their rank ended
  int64_t after_start = 0;      // ops that started while another ran (another stream): tied to the
                                // previous op's start by the measured launch distance
  int64_t nccl_instances = 0;   // matched NCCL instances tying ranks
  int64_t nccl_tied_ops = 0;    // NCCL ops in them
  int64_t nccl_untied_ops = 0;  // NCCL ops no peer matched: replayed alone
  int64_t launches_tied = 0;    // ops tied to the CUDA API call that launched them (correlation id)
  int64_t launches_untied = 0;  // ops whose launch call is not in the export (or was not read)
  int64_t launch_bound = 0;     // ops whose start waited for their launch: the GPU idle for the host
  int64_t syncs_tied = 0;       // blocking calls tied to the op they waited for (the host's later launches after it)
  int64_t syncs_untied = 0;     // blocking calls that did not wait for an op of the window
  int64_t cycles = 0;           // ties the replay could not order (measured start used)
};

// Replay::why_not of a report that did not ask for it (report --no-replay, merge, an HTML
// page's per-iteration readouts): no replay section or key is printed.
inline constexpr std::string_view kReplayNotAsked = "not asked for";

struct Replay {
  bool built = false;
  std::string why_not = std::string(kReplayNotAsked);  // when !built: what is missing
  DepGraphCounts graph;
  int64_t measured_iter_median_ns = 0;
  int64_t replay_iter_median_ns = 0;
  double self_check_max_error = 0;          // the largest |replayed - measured| / measured over the steady iterations
  bool self_check_ok = false;               // within kReplaySelfCheckLimit: what-ifs are printed only then
  std::vector<IterationReplay> iterations;  // the steady iterations, by start
  std::vector<WhatIf> what_ifs;             // asked for (--what-if), in the order given
  std::vector<WhatIf> opportunities;        // the edits the verdict tried, largest predicted gain first
};

inline constexpr double kReplaySelfCheckLimit = 0.02;

}  // namespace cpprof::model
