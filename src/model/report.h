// The model of `cpprof report`: plain structs, filled by analysis, printed by render.
// Times are nanoseconds. Every per-rank breakdown adds up to its total (see the invariants).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/op_class.h"

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
};

struct Report {
  static constexpr int kSchemaVersion = 1;  // of the JSON output; bump on breaking changes
  ExportInfo export_info;
  std::string rank_method;  // how ranks were assigned, said in words
  int world_size = 0;
  std::vector<RankSummary> ranks;
  std::vector<std::string> notes;  // diagnostics for stderr / the readout ("not captured: ...")
};

}  // namespace cpprof::model
