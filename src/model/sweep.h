// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The model of `cpprof sweep`: a workload run over a matrix of sizes (N) and CP grids, each point
// timed without the profiler and captured once under nsys (the fast preset). Plain structs,
// filled by sweep/ (the runs, the ladder, resume), printed by render/sweep_render (sweep.json,
// sweep.md, sweep.html). docs/sweep.md says how each number is measured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cpprof::model {

// What makes two sweeps the same: a rerun with the same --out resumes only when these are equal.
struct SweepSpec {
  std::string workload;                 // "cpfold trunk" or "-m pkg.module" (--arg-template's module)
  std::string mode;                     // cpfold's --mode (trunk, e2e, train); "" for a user's module
  std::string arg_template;             // --arg-template, as given; "" for cpfold
  std::vector<std::string> extra_args;  // cpfold: arguments after -- (passed to every point)
  std::string dtype;                    // --dtype; "" = the workload's default
  std::vector<int> sizes;               // --n, ascending, distinct
  std::vector<std::string> grids;       // --grids "RxC", in the order given
  int iters = 5, warmup = 1;            // the timing run's iterations (--iters, --warmup)
  int capture_iters = 2;                // the nsys capture's timed iterations (--capture-iters)
  bool largest = false;                 // --largest: refine the largest N per grid
  int step = 256;                       // --step: the bisection stops when the gap is this small
  int max_n = 0;                        // --max-n: --largest doubles past the ladder up to here (0: no doubling)
};

// One module row of the capture's readout, per steady-state iteration (mean over ranks).
struct SweepModule {
  std::string name;  // "TriangleMultiplicationOutgoing.forward", or a group ("trunk")
  std::string path;  // "trunk/Trunk.forward/..."
  int depth = 0;
  bool is_group = false;
  bool leaf = false;     // no child rows
  bool cp = false;       // communicates on two or more ranks
  double ms = 0;         // GPU busy time per iteration, mean over ranks
  double max_ms = 0;     // the busiest rank's
  double comm_ms = 0;    // its communication's wall time per iteration (mean)
  std::string cost_key;  // the cost model's formula, when it has one ("" otherwise)
  double tflops = -1;    // achieved TFLOP/s (efficiency); -1 unknown
  double percent_of_peak = -1;
};

// One (N, grid) point.
struct SweepPoint {
  int n = 0;
  std::string grid;  // "1x2"
  int cp0 = 1, cp1 = 1;
  int ranks = 1;
  std::string origin = "ladder";  // ladder | doubling | bisection (--largest)
  // ok: the timing run finished; oom: it ran out of GPU memory; timeout: it passed --timeout;
  // failed: it failed otherwise; skipped: not run (a smaller N of its grid ran out of memory or
  // time). A point is finished (kept on resume) when ok (with its capture ok or skipped) or oom.
  std::string status;
  std::string detail;  // why, when not ok (with the logs to read)
  // ---- the timing run (no profiler) ----
  std::vector<std::string> timing_argv;
  double timing_wall_s = 0;
  std::vector<double> iter_s;           // per steady iteration: the slowest rank's wall_s
  double median_iter_s = 0;             // the median of iter_s
  int warmup_iters = 0;                 // iterations the workload marked warm-up (left out)
  std::vector<int64_t> peak_mem_bytes;  // per rank (index = rank), from the workload's lines; -1 unknown
  std::string peak_mem_kind;            // cuda_max_allocated | cpu_max_rss | ""
  // ---- the nsys capture (fast preset) ----
  std::vector<std::string> capture_argv;
  // ok | skipped (predicted not to fit) | oom (ran out of memory under nsys) | failed | "" (not tried)
  std::string capture_status;
  std::string capture_detail;
  double capture_wall_s = 0;
  std::string capture_files;   // the result's base path, relative to the sweep's folder
  double capture_iter_ms = 0;  // the capture's median steady iteration
  int capture_iterations = 0;  // steady iterations in its window
  // Of each rank's window, mean over ranks (fractions): exposed transfer, waiting, compute, idle.
  double exposed_transfer_share = -1;
  double waiting_share = -1;
  double compute_share = -1;
  double idle_share = -1;
  std::vector<int64_t> capture_peak_mem_bytes;  // per rank, driver-level; empty: not captured
  std::vector<SweepModule> modules;
  std::string efficiency_json;  // the readout's "efficiency" object (render/efficiency_render), "" none

  bool Finished() const {
    return status == "oom" ||
           (status == "ok" && (capture_status == "ok" || capture_status == "skipped" || capture_status == "oom"));
  }
};

// The largest N that fits per grid.
struct SweepFit {
  std::string grid;
  int largest_ok = 0;  // the largest N that ran; 0: none did
  int first_oom = 0;   // the smallest N that ran out of memory; 0: none did
  std::string how;     // "ladder", "bisection to a step of 256", "no size ran out of memory (at least ...)"
  // The N at which the largest rank's peak memory would reach the GPU's capacity, extrapolated
  // from its growth between the two largest sizes that ran (N^k); 0 when it cannot be told.
  int predicted_n = 0;
  std::string predicted_how;
};

// The machine, from the doctor (no host names).
struct SweepMachine {
  std::vector<std::string> gpus;  // "0: NVIDIA H200, 143771 MiB, cc 9.0"
  std::string gpu_name;           // of the first target GPU
  int64_t gpu_memory_bytes = 0;   // of the first target GPU; 0 unknown
  std::string interconnect;       // "NVLink (NV18)" ...; "" unknown
  std::string nsys;               // path (version)
  std::string python, torch;      // versions
  std::string cpprof_version;
};

struct SweepResult {
  static constexpr const char* kSchema = "cpprof.sweep/1";
  SweepSpec spec;
  SweepMachine machine;
  std::vector<SweepPoint> points;  // by grid (in --grids order), then N ascending
  std::vector<SweepFit> fits;      // by grid, in --grids order
  std::vector<std::string> notes;  // what a reader must know (resumed points, skipped captures)
};

}  // namespace cpprof::model
