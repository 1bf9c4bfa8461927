// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/rank_summary.h"

#include <algorithm>
#include <limits>

#include "analysis/intervals.h"
#include "analysis/op_sweep.h"
#include "base/saturating.h"

namespace cpprof::analysis {

using model::OpClass;

namespace {

void TopKernels(const model::ProcessGpuWork& work, const model::GpuNames& names, size_t top, model::RankSummary& s) {
  for (const auto& [id, t] : work.kernels) {
    if (t.instances == 0) continue;  // ran only outside the window
    s.top_kernels.push_back({names.kernel_names.at(id), names.kernel_classes.at(id), t.total_ns, t.instances});
  }
  for (const auto& [kind, t] : work.mem_ops) {
    if (t.instances == 0) continue;
    s.top_kernels.push_back({names.mem_op_names.at(kind), t.cls, t.total_ns, t.instances});
  }
  std::sort(s.top_kernels.begin(), s.top_kernels.end(), [](const auto& a, const auto& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  if (top && s.top_kernels.size() > top) s.top_kernels.resize(top);
}

}  // namespace

model::RankSummary SummarizeRankFromSweep(const model::ProcessGpuWork& work, const model::GpuNames& names, size_t top,
                                          const RankModuleTimes& sweep) {
  model::RankSummary s;
  s.global_pid = work.global_pid;
  s.pid = work.pid;
  s.device = work.MainDevice();
  s.process = work.name;
  s.invalid_ops = work.invalid_ops;
  for (int c = 0; c < model::kNumOpClasses; ++c) {
    s.classes[c].sum_ns = sweep.class_sum_ns[c];
    s.classes[c].union_ns = sweep.class_union_ns[c];
    s.classes[c].instances = sweep.class_instances[c];
    s.classes[c].hidden_ns = sweep.hidden_ns[c];
  }
  for (const auto& [id, t] : work.kernels) s.capture_counts[names.kernel_names.at(id)] += t.capture_instances;
  for (const auto& [kind, t] : work.mem_ops) s.capture_counts[names.mem_op_names.at(kind)] += t.capture_instances;
  s.ops = sweep.ops;
  if (s.ops == 0) return s;
  s.first_start = sweep.first_start;
  s.last_end = sweep.last_end;
  s.span_ns = s.last_end - s.first_start;
  s.busy_ns = sweep.busy_ns;
  s.comm_ns = sweep.comm_union_ns;
  s.compute_ns = sweep.compute_union_ns;
  s.both_ns = s.comm_ns + s.compute_ns - s.busy_ns;
  s.comm_only_ns = s.comm_ns - s.both_ns;
  s.compute_only_ns = s.compute_ns - s.both_ns;
  s.idle_ns = s.span_ns - s.busy_ns;
  TopKernels(work, names, top, s);
  return s;
}

model::RankSummary SummarizeRank(model::ProcessGpuWork& work, const model::GpuNames& names, size_t top) {
  model::RankSummary s;
  s.global_pid = work.global_pid;
  s.pid = work.pid;
  s.device = work.MainDevice();
  s.process = work.name;
  s.invalid_ops = work.invalid_ops;

  // One sweep in start order: union lengths need O(1) memory each. The split follows from
  // |comm u compute| = |comm| + |compute| - |comm n compute|.
  std::array<UnionLength, model::kNumOpClasses> class_union;
  UnionLength all, comm, compute;
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  ForEachOpByStart(work, [&](const SweptOp& op) {
    const int64_t start = op.start, end = op.end;
    const OpClass cls = op.cls;
    int c = static_cast<int>(cls);
    auto& ct = s.classes[c];
    SatAdd(ct.sum_ns, end - start);
    ++ct.instances;
    class_union[c].Add(start, end);
    all.Add(start, end);
    (model::IsComm(cls) ? comm : compute).Add(start, end);
    first = std::min(first, start);
    last = std::max(last, end);
  });
  for (int c = 0; c < model::kNumOpClasses; ++c) {
    s.classes[c].union_ns = class_union[c].length();
    s.ops += s.classes[c].instances;
  }
  if (s.ops == 0) return s;
  s.first_start = first;
  s.last_end = last;
  s.span_ns = last - first;
  s.busy_ns = all.length();
  s.comm_ns = comm.length();
  s.compute_ns = compute.length();
  s.both_ns = s.comm_ns + s.compute_ns - s.busy_ns;
  s.comm_only_ns = s.comm_ns - s.both_ns;
  s.compute_only_ns = s.compute_ns - s.both_ns;
  s.idle_ns = s.span_ns - s.busy_ns;

  TopKernels(work, names, top, s);
  return s;
}

}  // namespace cpprof::analysis
