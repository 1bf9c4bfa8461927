// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/op_sweep.h"

namespace cpprof::analysis::op_sweep_detail {

namespace {

bool ByStart(const model::GpuOp& a, const model::GpuOp& b) { return OpBefore(a, b); }

// Sorts a nearly sorted chunk (ops of one stream interleaved with a few of another) by insertion
// in O(n + moves), `hosts` (empty, or parallel to the chunk) alike. Gives up after `budget` moves,
// leaving the chunk a permutation of itself (and `hosts` the same one).
bool InsertionSort(std::span<model::GpuOp> ch, std::span<model::HostLaunch> hosts, size_t budget) {
  size_t moves = 0;
  const bool both = !hosts.empty();
  for (size_t i = 1; i < ch.size(); ++i) {
    if (!OpBefore(ch[i], ch[i - 1])) continue;
    model::GpuOp x = ch[i];
    model::HostLaunch h = both ? hosts[i] : model::HostLaunch{};
    size_t j = i;
    while (j > 0 && OpBefore(x, ch[j - 1])) {
      ch[j] = ch[j - 1];
      if (both) hosts[j] = hosts[j - 1];
      --j;
      if (++moves > budget) {
        ch[j] = x;
        if (both) hosts[j] = h;
        return false;
      }
    }
    ch[j] = x;
    if (both) hosts[j] = h;
  }
  return true;
}

// A chunk sorted by start, `hosts` (empty, or parallel to it) alike.
void SortChunk(std::span<model::GpuOp> ch, std::span<model::HostLaunch> hosts) {
  if (InsertionSort(ch, hosts, 8 * ch.size())) return;
  if (hosts.empty()) {
    std::sort(ch.begin(), ch.end(), ByStart);
    return;
  }
  std::vector<uint32_t> order(ch.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return OpBefore(ch[a], ch[b]); });
  std::vector<model::GpuOp> ops(ch.begin(), ch.end());
  std::vector<model::HostLaunch> launches(hosts.begin(), hosts.end());
  for (size_t i = 0; i < order.size(); ++i) ch[i] = ops[order[i]], hosts[i] = launches[order[i]];
}

}  // namespace

std::vector<RunCursor> PrepareRuns(model::ProcessGpuWork& w) {
  std::sort(w.long_ops.begin(), w.long_ops.end(),
            [](const model::LongOp& a, const model::LongOp& b) { return OpBefore(a, b); });
  std::vector<RunCursor> runs;
  model::GpuOp last{};
  const bool hosts = w.op_hosts.size() == w.ops.size() && w.op_hosts.num_chunks() == w.ops.num_chunks();
  for (size_t c = 0; c < w.ops.num_chunks(); ++c) {
    auto ch = w.ops.chunk(c);
    if (ch.empty()) continue;
    const std::span<model::HostLaunch> h = hosts ? w.op_hosts.chunk(c) : std::span<model::HostLaunch>{};
    SortChunk(ch, h.size() == ch.size() ? h : std::span<model::HostLaunch>{});
    if (!runs.empty() && !OpBefore(ch.front(), last)) {
      runs.back().last = c;  // continues the run
    } else {
      runs.push_back({ch.data(), ch.data() + ch.size(), c, c});
    }
    last = ch.back();
  }
  return runs;
}

}  // namespace cpprof::analysis::op_sweep_detail
