#include "analysis/rank_summary.h"

#include <algorithm>
#include <limits>

#include "analysis/intervals.h"

namespace cpprof::analysis {

using model::OpClass;

model::RankSummary SummarizeRank(model::ProcessGpuWork& work,
                                 const std::function<std::string(int64_t)>& kernel_name,
                                 const std::function<model::OpClass(int64_t)>& kernel_class,
                                 size_t top) {
  model::RankSummary s;
  s.global_pid = work.global_pid;
  s.pid = work.pid;
  s.device = work.MainDevice();
  s.process = work.name;
  s.invalid_ops = work.invalid_ops;

  std::array<Segments, model::kNumOpClasses> unions;
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (int c = 0; c < model::kNumOpClasses; ++c) {
    auto& v = work.by_class[c];
    auto& ct = s.classes[c];
    ct.instances = static_cast<int64_t>(v.size());
    for (const auto& iv : v) {
      ct.sum_ns += iv.end - iv.start;
      first = std::min(first, iv.start);
      last = std::max(last, iv.end);
    }
    SortByStart(v);
    unions[c] = UnionSorted(v);
    ct.union_ns = Length(unions[c]);
    s.ops += ct.instances;
  }
  if (s.ops == 0) return s;
  s.first_start = first;
  s.last_end = last;
  s.span_ns = last - first;

  std::vector<const Segments*> comm_lists, compute_lists;
  for (int c = 0; c < model::kNumOpClasses; ++c) {
    (model::IsComm(static_cast<OpClass>(c)) ? comm_lists : compute_lists).push_back(&unions[c]);
  }
  Segments comm = UnionOf(comm_lists);
  Segments compute = UnionOf(compute_lists);
  s.comm_ns = Length(comm);
  s.compute_ns = Length(compute);
  s.both_ns = IntersectionLength(comm, compute);
  s.comm_only_ns = s.comm_ns - s.both_ns;
  s.compute_only_ns = s.compute_ns - s.both_ns;
  s.busy_ns = s.comm_only_ns + s.compute_only_ns + s.both_ns;
  s.idle_ns = s.span_ns - s.busy_ns;

  for (const auto& [id, t] : work.kernels) {
    s.top_kernels.push_back({kernel_name(id), kernel_class(id), t.total_ns, t.instances});
  }
  for (const auto& [name, t] : work.mem_ops) {
    s.top_kernels.push_back({name, t.cls, t.total_ns, t.instances});
  }
  std::sort(s.top_kernels.begin(), s.top_kernels.end(), [](const auto& a, const auto& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  if (top && s.top_kernels.size() > top) s.top_kernels.resize(top);
  return s;
}

}  // namespace cpprof::analysis
