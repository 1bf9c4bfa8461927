// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The model of `cpprof report`: plain structs, filled by analysis, printed by render.
// Times are nanoseconds. Every per-rank breakdown adds up to its total (see the invariants).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/capture.h"
#include "model/cost.h"
#include "model/memory.h"
#include "model/op_class.h"
#include "model/python_frames.h"
#include "model/replay.h"
#include "model/timeline.h"

namespace cpprof::model {

// What the export is and what it holds.
struct ExportInfo {
  std::string file;                       // as given on the command line (printed only when asked)
  std::string schema_version;             // META_DATA_EXPORT EXPORT_SCHEMA_VERSION, "" if absent
  std::string nsys_version;               // the nsys that made the report, when recorded
  std::vector<std::string> captured;      // optional tables present ("CUDA memcpy", ...)
  std::vector<std::string> not_captured;  // optional tables absent, with the option that makes them
};

// One export of a run captured in several (one nsys per rank or per node), and how its session
// clock was put on the run's clock: the first export's session clock. Empty for one export.
struct RunExport {
  std::string file;          // as given (printed only when asked)
  std::string name;          // the file's base name; with the parent folders that tell same-named exports apart
  std::string host;          // TARGET_INFO_SYSTEM_ENV Hostname; "" when not recorded
  std::vector<int> ranks;    // the global ranks of its GPU processes
  int64_t utc_start_ns = 0;  // TARGET_INFO_SESSION_START_TIME utcEpochNs; 0 when not recorded
  // Added to every timestamp of the export: coarse (the difference of the recorded session
  // starts) + refine_ns (from the ends of matched collectives).
  int64_t offset_ns = 0;
  int64_t refine_ns = 0;
  // After alignment: the median distance between this export's ends of matched collectives and
  // the reference export's (the alignment's error); -1 when no collective could be matched.
  int64_t residual_ns = -1;
  int64_t matched_ops = 0;  // collective ends used
  std::string method;       // "reference", "session start (UTC)", "session start + collective ends"
};

struct KernelTotal {
  std::string name;
  OpClass cls = OpClass::kComputeOther;
  int64_t total_ns = 0;
  int64_t instances = 0;
};

struct ClassTime {
  int64_t sum_ns = 0;     // sum of op durations (overlapping ops count twice, like nsys)
  int64_t union_ns = 0;   // wall time during which at least one op of the class ran
  int64_t hidden_ns = 0;  // communication classes: the part of union_ns during which compute ran
  int64_t instances = 0;
};

struct RankSummary {
  int rank = 0;
  int64_t global_pid = 0;
  int pid = 0;
  int device = -1;
  std::string process;  // process name
  int64_t first_start = 0, last_end = 0;
  int64_t span_ns = 0;  // last_end - first_start
  // Over the span: busy = compute_only + comm_only + both; span = busy + idle.
  int64_t busy_ns = 0;
  int64_t compute_only_ns = 0;
  int64_t comm_only_ns = 0;
  int64_t both_ns = 0;
  int64_t idle_ns = 0;
  int64_t comm_ns = 0;     // union of communication = comm_only + both
  int64_t compute_ns = 0;  // union of non-communication work = compute_only + both
  std::array<ClassTime, kNumOpClasses> classes{};
  std::vector<KernelTotal> top_kernels;  // by total time, then name
  // Instances of every kernel and memory op name over the whole capture, whatever the window:
  // what `diff --sanity` compares (the GPU work, not its timing).
  std::map<std::string, int64_t> capture_counts;
  int64_t ops = 0;          // kernels + memcpys + memsets
  int64_t invalid_ops = 0;  // end < start: left out
  // Peak GPU memory (driver-level: allocations minus frees of device memory, see model/memory.h);
  // -1 when the export has no memory events for this rank.
  int64_t peak_mem_bytes = -1;
  int64_t peak_mem_ns = 0;      // when (export timestamps)
  std::string peak_mem_module;  // the module path of the call that reached it; "" when unknown
  // Communication split by matching each NCCL op with its peers' (analysis/comm_match.h): the
  // sums over this rank's NCCL ops of the time spent waiting for the last peer to arrive and of
  // the rest (the transfer); ops with no matched peer are `unmatched_ns`.
  // wait_ns + transfer_ns + unmatched_ns = the sum of the NCCL ops' durations.
  int64_t wait_ns = 0;
  int64_t transfer_ns = 0;
  int64_t unmatched_ns = 0;
  // The span as a budget: compute (union of non-communication work) + exposed transfer
  // (communication-only time during which a transfer, or an unmatched op, ran) + waiting (the
  // rest of the communication-only time) + idle (no GPU work: the GPU waited for the host).
  // compute_ns + exposed_transfer_ns + exposed_wait_ns + idle_ns = span_ns.
  int64_t exposed_transfer_ns = 0;
  int64_t exposed_wait_ns = 0;
  // Idle in short gaps between GPU ops (< kLaunchGapNs: the host launching small kernels) and in
  // long ones (host work, synchronisation, sleeps); launch_gap_ns + host_stall_ns = idle_ns.
  int64_t launch_gap_ns = 0;
  int64_t host_stall_ns = 0;
  bool launch_bound = false;  // launch_gap_ns is a large part of the span (see analysis/verdict.h)
};

// An idle gap shorter than this between two GPU ops is counted as a launch gap (the host was
// launching the next kernel); longer ones as host stalls.
inline constexpr int64_t kLaunchGapNs = 100'000;

// One module's GPU work on one rank. busy_ns is attributed time: each instant during which the
// rank's GPU was busy goes to the innermost module range that launched the work running then
// (shared equally when work of several modules overlaps), so a module's busy_ns includes its
// children's and the top-level rows plus [unattributed] add up to the rank's busy_ns.
// comm_ns and the per-kind times are unions (wall time during which at least one communication
// op of the module or its children ran); hidden_ns is the part of comm_ns during which compute
// (any kernel or memory op that is not communication, of any module) ran at the same time.
struct ModuleRankTime {
  int64_t busy_ns = 0;
  int64_t own_ns = 0;  // busy_ns less the children's: work launched by this module itself
  // The part of busy_ns launched by the backward pass (autograd's threads), mapped to this
  // module through autograd's sequence numbers (see analysis/module_attribution.h).
  int64_t backward_ns = 0;
  int64_t comm_ns = 0;
  int64_t hidden_ns = 0;
  std::array<int64_t, kNumOpClasses> comm_kind_ns{};  // union per communication class
  int64_t ops = 0;                                    // GPU ops attributed to the module or its children
  // NCCL ops of the module or its children, split (see RankSummary::wait_ns): sums of durations.
  int64_t wait_ns = 0;
  int64_t transfer_ns = 0;
  int64_t exposed_transfer_ns = 0;  // the transfer part during which no compute ran
  // Waiting this rank's late arrivals cost its peers in the module's NCCL ops, and how many of
  // those ops it arrived last at.
  int64_t caused_wait_ns = 0;
  int64_t last_arrivals = 0;
  // GPU idle time ended by this module's launches (the GPU waited for the host to launch them).
  int64_t host_idle_ns = 0;
  // Calls: the module's own NVTX ranges (children not added in) that started in the window on
  // this rank; what the cost model counts per iteration (analysis/cost_efficiency.h).
  int64_t calls = 0;
};

struct ModuleNode {
  std::string name;                      // short: "TriangleMultiplicationOutgoing.forward", or a group: "trunk"
  std::string range;                     // the NVTX range as nsys names it ("cpfold:cpfold....forward"); "" for groups
  int parent = -1;                       // index into Report::modules; -1 for top-level rows
  int depth = 0;                         // 0 for groups and the [unattributed] row
  bool is_group = false;                 // a row of the grouping (trunk, diffusion, ...) rather than a range
  bool cp_distributed = false;           // its GPU work includes communication on two or more ranks
  std::vector<ModuleRankTime> per_rank;  // by rank
  int64_t mean_busy_ns = 0, max_busy_ns = 0;
  // The rank the others waited for in this module's communication: the largest caused_wait_ns
  // (lowest rank on a tie); -1 when no rank kept another waiting.
  int straggler_rank = -1;
};

// How the module table was built, said in the output.
struct ModuleGrouping {
  std::string source;                 // "built-in AF3/Boltz grouping" or the config file's name
  std::vector<std::string> groups;    // in priority order
  int64_t module_ranges = 0;          // distinct NVTX ranges that counted as modules
  BacktraceModuleSummary backtraces;  // module rows from Python backtraces (empty: none)
};

// Forward / backward / optimizer, when the export holds a backward pass.
enum class Phase : uint8_t { kForward, kBackward, kOptimizer, kCount };
inline constexpr int kNumPhases = static_cast<int>(Phase::kCount);
inline constexpr std::array<std::string_view, kNumPhases> kPhaseNames = {"forward", "backward", "optimizer"};

struct PhaseTimes {
  bool has_backward = false;                  // any GPU work launched from autograd's threads
  std::array<int64_t, kNumPhases> busy_ns{};  // attributed, adds up to the rank's busy_ns
};

// One rank's part of one kind of communication, its ops matched with their peers' by time
// (analysis/comm_match.h). time_ns = wait_ns + transfer_ns + unmatched_ns.
struct CommSplit {
  int64_t ops = 0;
  int64_t unmatched_ops = 0;  // ops with no op of another rank to match (not split)
  int64_t time_ns = 0;        // sum of durations
  int64_t wait_ns = 0;        // before the last peer arrived
  int64_t transfer_ns = 0;    // after it
  int64_t unmatched_ns = 0;
  int64_t exposed_transfer_ns = 0;  // the part of transfer_ns during which no compute ran
  int64_t last_arrivals = 0;        // matched instances in which this rank started last
  int64_t caused_wait_ns = 0;       // the others' waiting in those instances
  // wait_ns by the rank waited for (the instance's last arrival), indexed by rank; empty when the
  // rank did not wait. Sums to wait_ns.
  std::vector<int64_t> waited_for_ns;
};

// One kind of communication (AllGather, SendRecv, ...) over all ranks. An instance is a set of
// ops, at most one per rank, that overlap and end together: one collective, or one ring shift.
struct CollectiveStats {
  OpClass kind = OpClass::kNcclOther;
  int64_t instances = 0;       // matched instances (ops of two or more ranks) with an op in the window
  int64_t edge_instances = 0;  // of them, those the window's edges cut (matched whole, then clipped)
  std::vector<int64_t> per_rank_count;
  int64_t start_spread_sum_ns = 0;  // sum over instances of (latest start - earliest start)
  int64_t start_spread_max_ns = 0;
  std::vector<CommSplit> per_rank;  // by rank
  // The matched instances by the set of ranks that took part (one collective's group, one ring),
  // in the order first seen: what each set's ranks waited, by the rank they waited for.
  struct Group {
    std::vector<int> ranks;  // ascending
    int64_t instances = 0;
    int64_t wait_ns = 0;
    std::vector<int64_t> waited_for_ns;  // by rank waited for (indexed by rank)
  };
  std::vector<Group> groups;
};

// The CP grid the ranks form (cpfold: rank = row x cols + col; a row ring and a column ring per
// rank), when the run says it: --dims grid=RxC or cpfold's config line beside the export, and only
// when rows x cols is the run's rank count. rows == 0: unknown.
struct CpGrid {
  int rows = 0, cols = 0;
  std::string source;  // "--dims", "cpfold's config line in run.log"
  bool known() const { return rows > 0 && cols > 0; }
  bool two_d() const { return rows > 1 && cols > 1; }  // a rank's place is worth saying
  int row(int rank) const { return rank / cols; }
  int col(int rank) const { return rank % cols; }
  // " (row 1, col 0)" on a 2-D grid, "" otherwise: what follows "rank N" where a rank is named.
  std::string Place(int rank) const {
    if (!two_d() || rank < 0) return "";
    return " (row " + std::to_string(row(rank)) + ", col " + std::to_string(col(rank)) + ")";
  }
};

// The waiting the ranks of one ring of the grid did for one another (analysis/cp_grid.h).
struct RingWait {
  // "row 0 ring", "column 1 ring", "the ring" (1 x q or q x 1), "whole grid" (instances of every
  // rank: a collective of the whole grid, or grouped p2p launches that reach both of a rank's
  // rings, as cpfold's Cannon shifts do in one batch), "across rings" (any other set on no ring)
  std::string ring;
  std::vector<int> ranks;    // its ranks (every rank for the last two)
  int64_t wait_ns = 0;       // the waiting its ranks did for one another, in the window
  int most_waited_for = -1;  // the rank its ranks waited for most
  int64_t most_ns = 0;
};

// Who kept whom waiting. The straggler is the rank whose late arrivals at NCCL ops cost the
// other ranks the most waiting, not the rank with the most GPU busy time (in a CP run that one
// is usually the victim: its NCCL kernels spin while it waits).
struct Imbalance {
  int straggler_rank = -1;  // -1: no rank kept another waiting (or one rank)
  int64_t straggler_caused_wait_ns = 0;
  int64_t straggler_last_arrivals = 0;
  int64_t instances = 0;                     // matched NCCL instances, all kinds
  int busiest_rank = -1;                     // largest busy_ns (lowest on a tie)
  double busy_spread = 0;                    // (max - min) / max of busy_ns over ranks
  double compute_spread = 0;                 // (max - min) / max of compute_ns over ranks
  std::vector<CollectiveStats> collectives;  // by kind
  // waited_for_ns[w][l]: the waiting rank w did for rank l over every kind (CommSplit::waited_for_ns).
  std::vector<std::vector<int64_t>> waited_for_ns;
  std::vector<RingWait> ring_waits;  // by ring of the grid, when Report::grid is known
};

// The window the numbers cover (analysis/window.h). Iterations are found from NVTX ranges; the
// default window is the steady state: the iterations after warm-up, so that start-up, warm-up
// and tear-down are left out.
struct IterationTime {
  std::string name;                  // the marker range ("cpfold:iter1")
  int64_t start_ns = 0, end_ns = 0;  // earliest start and latest end over the ranks' markers
  bool warmup = false;               // a warm-up iteration (by name, or the first when none is named so)
  bool in_window = false;
};

struct Window {
  std::string requested = "steady";       // --window: steady, all, iter:N, A:B
  std::string kind = "all";               // what was applied: steady, all, iteration, time
  std::string method;                     // how iterations were found; "" when none were
  std::string description;                // one line for the readout's top
  bool whole_capture = true;              // no window applied: every op counts
  int64_t start_ns = 0, end_ns = 0;       // session clock, when !whole_capture
  std::vector<IterationTime> iterations;  // by start
  // Per-iteration wall time over the iterations in the window (0 when none).
  int64_t iter_median_ns = 0, iter_min_ns = 0, iter_max_ns = 0;
  int64_t left_out_ops = 0;  // GPU ops entirely outside the window (all ranks)
  int64_t left_out_ns = 0;   // their GPU time
  int64_t clipped_ops = 0;   // ops cut at the window's edges
};

// The readout's top: one paragraph and the largest opportunities, with numbers.
struct Verdict {
  std::string summary;
  std::vector<std::string> opportunities;  // at most three, largest first
  std::vector<std::string> warnings;       // timings not to trust, and why
  // The rank the summary names as the straggler (-1: none). With the replay, only a consistent
  // one worth kStragglerGain of the iteration (analysis/verdict.h); else Imbalance's.
  int straggler_rank = -1;
};

struct Report {
  static constexpr int kSchemaVersion = 2;  // of the JSON output; bump on breaking changes
  ExportInfo export_info;                   // of the first export
  std::vector<RunExport> run_exports;       // when the run was read from several exports
  std::string rank_method;                  // how ranks were assigned, said in words
  int world_size = 0;
  std::vector<RankSummary> ranks;
  // Modules: groups first, each followed by its subtree (depth-first, by mean busy time), then
  // the [unattributed] row. Empty when the export has no NVTX ranges.
  std::vector<ModuleNode> modules;
  ModuleGrouping grouping;
  std::vector<PhaseTimes> phases;  // by rank; empty when no rank ran a backward pass
  Imbalance imbalance;
  CpGrid grid;
  Window window;
  Verdict verdict;
  CaptureInfo capture;                  // the nsys options and messages the export records
  std::vector<Diagnostic> diagnostics;  // what a user must know about the capture
  MemoryUsage memory;                   // memory over time per process and device
  std::string interconnect;             // from doctor's findings beside the export; "" unknown
  Efficiency efficiency;                // model FLOPs vs measured time (analysis/cost_efficiency.h)
  OverlapTax overlap_tax;               // compute slowed under communication (analysis/overlap_tax.h)
  // The op shapes recorded under each module (--pytorch autograd-shapes-nvtx), by path: where the
  // efficiency's sizes are found (analysis/size_inference.h). Not printed.
  std::vector<ModuleShapes> module_shapes;
  Replay replay;                   // the steady window replayed: critical paths, what-ifs (analysis/replay.h)
  std::vector<std::string> notes;  // diagnostics for stderr / the readout ("not captured: ...")
  bool invalid_utf8 = false;       // some names read were not UTF-8 (shown as U+FFFD): the CLI says so
  Timeline timeline;  // lanes per rank for the HTML report; built only when asked (ReportOptions::timeline)
};

}  // namespace cpprof::model
