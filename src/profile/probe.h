// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The feasibility probe of `cpprof profile`: one short run of the same launch without nsys, whose
// peak memory per rank and time per iteration predict whether the profiled run fits the GPUs
// and --timeout. Pure: parsing the workload's lines and the predictions (run_profile runs it).
//
// The protocol a workload prints to be understood (python/cpprof_workload's `iteration` prints
// it, for cpfold and for a user's model; any workload may):
//   cpprof-iter: {"rank": 0, "iter": 0, "warmup": false, "wall_s": 1.25, "peak_mem_bytes": 123456,
//                 "peak_mem_kind": "cuda_max_allocated", "planned": 4}
// one line per rank and iteration on stdout (anywhere in the line, so prefixes such as torchrun's
// "[rank0]:" are fine). `rank` and `wall_s` are needed; `warmup` is optional (false);
// `peak_mem_kind` (cuda_max_allocated | cpu_max_rss) and `planned` (the iterations the whole run
// intends, warm-up included, when the probe runs only the first: $CPPROF_PROBE_ITERS) are
// optional. A final `cpfold: {...}` line is kept as the workload's summary.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cpprof::profile {

struct ProbeIter {
  int rank = 0;
  int iter = 0;
  bool warmup = false;
  double wall_s = 0;
  int64_t peak_mem_bytes = -1;  // -1: not given
};

// What the probe's output says.
struct ProbeOutput {
  std::vector<ProbeIter> iters;
  std::vector<std::string> summaries;  // the "cpfold: {...}" lines, whole
  std::string peak_mem_kind;           // from the summary or the lines: cuda_max_allocated | cpu_max_rss | ""
  std::vector<std::string> bad_lines;  // iteration lines whose JSON did not parse
  std::string tag;                     // the iteration lines' tag: "cpprof-iter" | ""
  int planned = 0;                     // the largest `planned` of the lines; 0: none said
};

// The tags of iteration lines (without the colon).
inline constexpr const char* kIterTags[] = {"cpprof-iter"};

ProbeOutput ParseProbeOutput(const std::string& stdout_text);

// Peak memory per rank over its iterations (ranks that printed no memory are absent).
std::map<int, int64_t> PeakByRank(const ProbeOutput& out);
// The time of one iteration: per rank the mean of its timed iterations (its warmup ones when it
// has no other), then the slowest rank. Unset when no iteration was printed.
std::optional<double> IterSeconds(const ProbeOutput& out);
// Seconds the ranks spent inside iterations (the slowest rank's sum).
double IterTotalSeconds(const ProbeOutput& out);
// The iterations of the whole run, for a workload cpprof does not know: the lines' `planned`, else
// the most iterations one rank printed (the probe ran the whole workload); 0 without lines.
int PlannedIters(const ProbeOutput& out);

// What the prediction needs besides the measurement.
struct ProbeLimits {
  // The total memory of the GPU each local rank gets (by local rank); absent: unknown.
  std::map<int, int64_t> gpu_total_bytes;
  int ranks_per_node = 1;
  double headroom = 0.10;   // memory kept free for nsys (its CUPTI buffers) and the CUDA context
  double timeout_s = 1800;  // --timeout
  double overhead = 1.1;    // the preset's overhead factor under nsys (a guess, see docs/profile.md)
  int planned_iters = 0;    // iterations of the profiled run (warmup included); 0: unknown (a
                            // workload without the protocol: its whole wall time is scaled)
  double iter_scale = 1;    // the profiled run's iteration is up to this many times the probe's
                            // (e2e: planned diffusion steps / the probe's)
};

struct Measurement {
  double wall_s = 0;                    // the probe's whole launch
  std::map<int, int64_t> peak_by_rank;  // bytes, by global rank
  std::string peak_source;              // "the workload's cpprof-iter lines", "nvidia-smi", ""
  std::optional<double> iter_s;         // one iteration
  double iter_total_s = 0;              // all the probe's iterations
  // What could not be learned, said in the prediction's lines: the workload printed no
  // iteration lines (a workload cpprof does not know that does not use cpprof_workload).
  bool no_iteration_lines = false;
  // --probe-cap: a workload not known to print iteration lines is stopped after cap_s seconds
  // (0: no cap) unless a line appeared first (cap_lifted). A capped probe is no failure, but its
  // wall time says nothing of the whole run: the time is not predicted, only memory is checked.
  double cap_s = 0;
  bool capped = false;
  bool cap_lifted = false;
};

struct Prediction {
  bool memory_known = false, time_known = false;
  bool memory_ok = true, time_ok = true;
  std::vector<std::string> lines;     // what was measured and predicted, for the readout
  std::vector<std::string> problems;  // each a predicted failure with its fix
  std::vector<std::string> warnings;  // may fail (only the upper bound passes --timeout)
  double startup_s = 0;               // the probe's time outside iterations
  double predicted_s = 0;             // lower bound of the profiled run's wall time
  double predicted_max_s = 0;         // upper bound (iter_scale applied)
  bool ok() const { return memory_ok && time_ok; }
};

Prediction Predict(const Measurement& m, const ProbeLimits& limits);

// "1.5 GiB", "512.0 MiB".
std::string Bytes(int64_t b);

// <name>.probe.json (schema cpprof.probe/1).
nlohmann::ordered_json ProbeJson(const std::vector<std::string>& argv, const Measurement& m, const ProbeLimits& limits,
                                 const Prediction& p, const ProbeOutput& out);

}  // namespace cpprof::profile
