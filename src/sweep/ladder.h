// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The matrix of a sweep and its size ladders: parsing --n and --grids, filling --arg-template,
// which point runs next (each grid's sizes upwards, stopped at the first one that runs out of
// memory or time; then, with --largest, doubling past the ladder and bisecting between the last
// fit and the first out-of-memory), telling an out-of-memory failure from the workload's output,
// and the largest N per grid. Pure: no process, no file (sweep/run_sweep runs the points).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/sweep.h"

namespace cpprof::sweep {

// "512,1024,2048" -> {512, 1024, 2048} (sorted, duplicates dropped); an error names the bad item.
StatusOr<std::vector<int>> ParseSizes(const std::string& list);
// "1x1,1x2,2x2" -> {"1x1", "1x2", "2x2"} (order kept, duplicates dropped).
StatusOr<std::vector<std::string>> ParseGrids(const std::string& list);
// "2x2" -> {2, 2}; false when not ROWSxCOLS with positive integers.
bool ParseGrid(const std::string& grid, int& cp0, int& cp1);

// The placeholders of --arg-template, each replaced by the point's value.
struct TemplateValues {
  int n = 0, cp0 = 1, cp1 = 1, iters = 0, warmup = 0;
  std::string dtype;
};
inline constexpr const char* kTemplatePlaceholders[] = {"{n}",     "{grid}",  "{cp0}",    "{cp1}",
                                                        "{ranks}", "{iters}", "{warmup}", "{dtype}"};
// Splits the template into arguments (on spaces; '...' and "..." group, as a shell would) and
// fills the placeholders. An unknown {name}, a template without {n}, or an unclosed quote is an
// error that lists the placeholders.
StatusOr<std::vector<std::string>> ExpandTemplate(const std::string& tmpl, const TemplateValues& v);
// Checks the template once, before anything runs.
Status CheckTemplate(const std::string& tmpl);

// What differs between the spec an earlier run recorded and this one ("" when nothing): the
// reason a resume is refused.
std::string SpecChange(const model::SweepSpec& before, const model::SweepSpec& now);

// Whether a failed run ran out of GPU memory, from its output (PyTorch's "CUDA out of memory",
// torch.OutOfMemoryError, CUDA's CUDA_ERROR_OUT_OF_MEMORY / cudaErrorMemoryAllocation, NCCL's
// "out of memory"). Only for runs that failed: a successful run that prints the words is not one.
bool LooksLikeOutOfMemory(const std::string& stdout_text, const std::string& stderr_text);

// The median of the steady iterations' times (the slowest rank per iteration; warm-up left out);
// the iterations used in `iters` (by iteration number), the warm-up count in `warmup`.
struct SteadyTimes {
  std::vector<double> iter_s;
  int warmup = 0;
  double median_s = 0;
};
struct IterLine {
  int rank = 0, iter = 0;
  bool warmup = false;
  double wall_s = 0;
};
SteadyTimes Steady(const std::vector<IterLine>& lines);

// The next point to run, or none when the sweep is done. `points` are those known so far.
struct NextPoint {
  int n = 0;
  std::string grid;
  std::string origin;  // ladder | doubling | bisection
};
std::optional<NextPoint> Next(const model::SweepSpec& spec, const std::vector<model::SweepPoint>& points);

// The points not run because a smaller size of their grid ran out of memory or time (status
// "skipped"), added for the ladder's sizes that have no point.
void AddSkipped(const model::SweepSpec& spec, std::vector<model::SweepPoint>& points);

// Points by grid (in the spec's order), then N; the largest fit per grid.
void SortPoints(const model::SweepSpec& spec, std::vector<model::SweepPoint>& points);
// `gpu_memory_bytes` > 0: each fit also extrapolates the N at which the largest rank's peak
// memory (the workload's lines) would reach it, from the two largest sizes that ran.
std::vector<model::SweepFit> Fits(const model::SweepSpec& spec, const std::vector<model::SweepPoint>& points,
                                  int64_t gpu_memory_bytes = 0);

}  // namespace cpprof::sweep
