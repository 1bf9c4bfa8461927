// The model of `cpprof report`: plain structs, filled by analysis, printed by render.
// Times are nanoseconds. Every per-rank breakdown adds up to its total (see the invariants).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/capture.h"
#include "model/memory.h"
#include "model/op_class.h"
#include "model/timeline.h"

namespace cpprof::model {

// What the export is and what it holds.
struct ExportInfo {
  std::string file;            // as given on the command line (printed only when asked)
  std::string schema_version;  // META_DATA_EXPORT EXPORT_SCHEMA_VERSION, "" if absent
  std::string nsys_version;    // the nsys that made the report, when recorded
  std::vector<std::string> captured;      // optional tables present ("CUDA memcpy", ...)
  std::vector<std::string> not_captured;  // optional tables absent, with the option that makes them
};

struct KernelTotal {
  std::string name;
  OpClass cls = OpClass::kComputeOther;
  int64_t total_ns = 0;
  int64_t instances = 0;
};

struct ClassTime {
  int64_t sum_ns = 0;    // sum of op durations (overlapping ops count twice, like nsys)
  int64_t union_ns = 0;  // wall time during which at least one op of the class ran
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
  int64_t ops = 0;                       // kernels + memcpys + memsets
  int64_t invalid_ops = 0;               // end < start: left out
  // Peak GPU memory (driver-level: allocations minus frees of device memory, see model/memory.h);
  // -1 when the export has no memory events for this rank.
  int64_t peak_mem_bytes = -1;
  int64_t peak_mem_ns = 0;          // when (export timestamps)
  std::string peak_mem_module;      // the module path of the call that reached it; "" when unknown
};

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
  int64_t ops = 0;  // GPU ops attributed to the module or its children
};

struct ModuleNode {
  std::string name;        // short: "TriangleMultiplicationOutgoing.forward", or a group: "trunk"
  std::string range;       // the NVTX range as nsys names it ("cpfold:cpfold....forward"); "" for groups
  int parent = -1;         // index into Report::modules; -1 for top-level rows
  int depth = 0;           // 0 for groups and the [unattributed] row
  bool is_group = false;   // a row of the grouping (trunk, diffusion, ...) rather than a range
  bool cp_distributed = false;  // its GPU work includes communication on two or more ranks
  std::vector<ModuleRankTime> per_rank;  // by rank
  int64_t mean_busy_ns = 0, max_busy_ns = 0;
  int slowest_rank = -1;  // the rank with max_busy_ns (lowest on a tie)
};

// How the module table was built, said in the output.
struct ModuleGrouping {
  std::string source;  // "built-in AF3/Boltz grouping" or the config file's name
  std::vector<std::string> groups;  // in priority order
  int64_t module_ranges = 0;        // distinct NVTX ranges that counted as modules
};

// Forward / backward / optimizer, when the export holds a backward pass.
enum class Phase : uint8_t { kForward, kBackward, kOptimizer, kCount };
inline constexpr int kNumPhases = static_cast<int>(Phase::kCount);
inline constexpr std::array<std::string_view, kNumPhases> kPhaseNames = {"forward", "backward", "optimizer"};

struct PhaseTimes {
  bool has_backward = false;                  // any GPU work launched from autograd's threads
  std::array<int64_t, kNumPhases> busy_ns{};  // attributed, adds up to the rank's busy_ns
};

// One collective (or send/recv) matched across ranks: the i-th op of a kind on every rank.
struct CollectiveStats {
  OpClass kind = OpClass::kNcclOther;
  int64_t instances = 0;           // matched instances (ops per rank, when all ranks agree)
  bool matched = false;            // false when ranks ran different numbers of this kind
  std::vector<int64_t> per_rank_count;
  int64_t start_spread_sum_ns = 0;  // sum over instances of (latest start - earliest start)
  int64_t start_spread_max_ns = 0;
  std::vector<int64_t> wait_ns;     // per rank: sum of (duration - shortest duration of the instance)
  int64_t transfer_ns = 0;          // sum over instances of the shortest duration
  std::vector<int64_t> last_arrivals;  // per rank: instances in which it started last
};

struct Imbalance {
  int slowest_rank = -1;  // largest busy_ns
  double busy_spread = 0;  // (max - min) / max of busy_ns over ranks
  std::vector<CollectiveStats> collectives;  // by kind
};

struct Report {
  static constexpr int kSchemaVersion = 1;  // of the JSON output; bump on breaking changes
  ExportInfo export_info;
  std::string rank_method;  // how ranks were assigned, said in words
  int world_size = 0;
  std::vector<RankSummary> ranks;
  // Modules: groups first, each followed by its subtree (depth-first, by mean busy time), then
  // the [unattributed] row. Empty when the export has no NVTX ranges.
  std::vector<ModuleNode> modules;
  ModuleGrouping grouping;
  std::vector<PhaseTimes> phases;  // by rank; empty when no rank ran a backward pass
  Imbalance imbalance;
  CaptureInfo capture;                   // the nsys options and messages the export records
  std::vector<Diagnostic> diagnostics;   // what a user must know about the capture
  MemoryUsage memory;                    // memory over time per process and device
  std::string interconnect;              // from doctor's findings beside the export; "" unknown
  std::vector<std::string> notes;  // diagnostics for stderr / the readout ("not captured: ...")
  Timeline timeline;  // lanes per rank for the HTML report; built only when asked (ReportOptions::timeline)
};

}  // namespace cpprof::model
