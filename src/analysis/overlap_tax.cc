// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/overlap_tax.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <unordered_map>

#include "analysis/intervals.h"
#include "analysis/summary_stats.h"

namespace cpprof::analysis {
namespace {

bool IsNcclKernel(model::OpClass c) { return model::IsComm(c) && c != model::OpClass::kPeerCopy; }

// The union of a rank's NCCL kernels (cut at the window's edges).
model::Segments NcclUnion(const model::ProcessGpuWork& p, const model::Interval* window) {
  std::vector<model::Interval> iv;
  auto add = [&](int64_t s, int64_t e) {
    if (window) s = std::max(s, window->start), e = std::min(e, window->end);
    if (e > s) iv.push_back({s, e});
  };
  for (size_t c = 0; c < p.ops.num_chunks(); ++c) {
    for (const auto& op : p.ops.chunk(c)) {
      if (IsNcclKernel(op.cls)) add(op.start, op.end());
    }
  }
  for (const auto& op : p.long_ops) {
    if (IsNcclKernel(op.cls)) add(op.iv.start, op.iv.end);
  }
  return Union(std::move(iv));
}

struct Samples {
  std::vector<uint32_t> under, alone;
};

// A kernel as compared: its name, module and launch (grid and block sizes).
struct KernelKey {
  int64_t name;
  uint16_t node;
  uint32_t launch;
  bool operator==(const KernelKey&) const = default;
};
struct KernelKeyHash {
  size_t operator()(const KernelKey& k) const {
    return std::hash<int64_t>()(k.name) ^ (std::hash<uint64_t>()((uint64_t{k.launch} << 16) | k.node) * 31);
  }
};
using ByKernel = std::unordered_map<KernelKey, Samples, KernelKeyHash>;

void Add(model::ModuleOverlapTax& to, const model::ModuleOverlapTax& k) {
  to.kernels += k.kernels;
  to.ops_under += k.ops_under;
  to.ops_alone += k.ops_alone;
  to.alone_ns += k.alone_ns;
  to.extra_ns += k.extra_ns;
}

// One rank's compute kernels classified against its NCCL union, by kernel.
ByKernel ClassifyRank(const model::ProcessGpuWork& p, const model::Interval* window, model::OverlapTax& out) {
  const model::Segments nccl = NcclUnion(p, window);
  ByKernel by_kernel;
  for (size_t c = 0; c < p.ops.num_chunks(); ++c) {
    auto ops = p.ops.chunk(c);
    auto keys = p.op_keys.chunk(c);
    auto launches = p.op_launches.chunk(c);
    for (size_t i = 0; i < ops.size(); ++i) {
      const model::GpuOp& op = ops[i];
      if (!model::IsKernelCompute(op.cls) || op.duration == 0 || (keys[i] & model::kOpKeyMemOp)) continue;
      // Strictly inside: an op the loader cut at an edge cannot be told from one that ends there.
      if (window && (op.start <= window->start || op.end() >= window->end)) continue;
      const int64_t covered = LengthWithin(nccl, {op.start, op.end()});
      const KernelKey key{keys[i] & model::kOpKeyName, op.node, launches[i]};
      if (covered == 0) {
        by_kernel[key].alone.push_back(op.duration);
        ++out.ops_alone;
      } else if (2 * covered >= op.duration) {
        by_kernel[key].under.push_back(op.duration);
        ++out.ops_under;
      } else {
        ++out.ops_partial;
      }
    }
  }
  return by_kernel;
}

// The nodes' paths; with no tree, the one node [unattributed].
std::vector<std::string> PathsOf(const std::vector<ModuleTreeNode>* nodes) {
  return nodes && !nodes->empty() ? ModulePaths(*nodes) : std::vector<std::string>{"[unattributed]"};
}

}  // namespace

model::OverlapTax ComputeOverlapTax(const OverlapTaxInput& in) {
  model::OverlapTax out;
  out.why_not.clear();
  out.ranks = static_cast<int>(in.ranks.size());
  out.iterations = in.iterations;
  out.all.module = "all GPU work";
  for (const auto* p : in.ranks) {
    if (p->op_keys.size() != p->ops.size() || p->op_launches.size() != p->ops.size()) {
      out.why_not = "the ops' kernel names and launches were not kept";
      return out;
    }
  }
  const size_t n_nodes = in.nodes ? in.nodes->size() : 1;
  std::vector<model::ModuleOverlapTax> per_node(n_nodes);
  for (const auto* p : in.ranks) {
    for (auto& [key, s] : ClassifyRank(*p, in.window, out)) {
      if (static_cast<int64_t>(s.under.size()) < model::kMinOverlapSamples ||
          static_cast<int64_t>(s.alone.size()) < model::kMinOverlapSamples) {
        continue;
      }
      model::ModuleOverlapTax k;
      k.kernels = 1;
      k.ops_under = static_cast<int64_t>(s.under.size());
      k.ops_alone = static_cast<int64_t>(s.alone.size());
      const double alone = MedianInPlace(s.alone);
      k.alone_ns = std::llround(static_cast<double>(k.ops_under) * alone);
      k.extra_ns = std::llround(static_cast<double>(k.ops_under) * (MedianInPlace(s.under) - alone));
      Add(out.all, k);
      // The module and each of its ancestors (a parent's id is smaller than its children's).
      const int node = in.nodes ? key.node : 0;
      for (int n = node; n >= 0 && n < static_cast<int>(n_nodes); n = in.nodes ? (*in.nodes)[n].parent : -1) {
        Add(per_node[n], k);
      }
    }
  }
  const double per = std::max(1, out.ranks) * static_cast<double>(std::max(1, out.iterations));
  auto finish = [&](model::ModuleOverlapTax& m) {
    m.slowdown = m.alone_ns > 0 ? static_cast<double>(m.extra_ns) / static_cast<double>(m.alone_ns) : 0;
    m.extra_ns_per_iteration = static_cast<double>(m.extra_ns) / per;
  };
  finish(out.all);
  const std::vector<std::string> paths = PathsOf(in.nodes);
  for (size_t n = 0; n < n_nodes; ++n) {
    model::ModuleOverlapTax& m = per_node[n];
    if (m.kernels == 0) continue;
    m.module = in.nodes ? (*in.nodes)[n].name : "[unattributed]";
    m.path = paths[n];
    m.is_group = in.nodes && (*in.nodes)[n].is_group;
    finish(m);
    out.modules.push_back(std::move(m));
  }
  std::sort(out.modules.begin(), out.modules.end(),
            [](const auto& a, const auto& b) { return std::tie(b.extra_ns, a.path) < std::tie(a.extra_ns, b.path); });
  out.computed = out.all.kernels > 0;
  if (!out.computed) {
    out.why_not = out.ops_under == 0
                      ? "no compute kernel ran under communication"
                      : "no kernel ran both under communication and alone " +
                            std::to_string(model::kMinOverlapSamples) + " times (in one module, on one rank)";
  }
  return out;
}

std::vector<double> OverlapTaxByNode(const model::OverlapTax& tax, const std::vector<ModuleTreeNode>* nodes) {
  if (!tax.computed) return {};
  std::unordered_map<std::string, double> by_path;
  for (const auto& m : tax.modules) by_path[m.path] = m.slowdown;
  const std::vector<std::string> paths = PathsOf(nodes);
  std::vector<double> out(paths.size());
  for (size_t n = 0; n < paths.size(); ++n) {
    const int parent = nodes && !nodes->empty() ? (*nodes)[n].parent : -1;
    auto it = by_path.find(paths[n]);
    out[n] = std::max(0.0, it != by_path.end() ? it->second : parent >= 0 ? out[parent] : tax.all.slowdown);
  }
  return out;
}

}  // namespace cpprof::analysis
