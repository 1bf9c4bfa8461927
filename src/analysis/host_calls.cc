// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/host_calls.h"

#include <algorithm>

namespace cpprof::analysis {

bool IsHostSync(std::string_view name) {
  if (const size_t v = name.rfind("_v"); v != std::string_view::npos && v + 2 < name.size() &&
                                         name.find_first_not_of("0123456789", v + 2) == std::string_view::npos) {
    name = name.substr(0, v);
  }
  for (std::string_view s : {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaThreadSynchronize",
                             "cudaEventSynchronize", "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize"}) {
    if (name == s) return true;
  }
  const bool memcpy = name.starts_with("cudaMemcpy") || name.starts_with("cuMemcpy");
  return memcpy && name.find("Async") == std::string_view::npos;
}

void HostCalls::Add(int64_t global_pid, int64_t global_tid, int64_t correlation, int64_t start, int64_t end,
                    bool sync) {
  if (!last_ || global_pid != last_pid_ || global_tid != last_tid_) {  // calls come in long runs of one thread
    last_ = &by_process_[global_pid];
    auto [it, added] = last_->thread_index.try_emplace(global_tid, static_cast<uint32_t>(last_->thread_index.size()));
    last_pid_ = global_pid, last_tid_ = global_tid, last_thread_ = it->second;
  }
  Process& p = *last_;
  if (sync) p.syncs.push_back({start, end, last_thread_});
  if (correlation < 0 || correlation > int64_t{UINT32_MAX}) return;  // never seen: CUPTI's ids are 32-bit
  p.calls.push_back({static_cast<uint32_t>(correlation), last_thread_, start});
  ++calls_;
}

void HostCalls::Finish() {
  for (auto& [pid, p] : by_process_) {
    auto by_corr = [](const Entry& a, const Entry& b) { return a.correlation < b.correlation; };
    if (!std::is_sorted(p.calls.begin(), p.calls.end(), by_corr))
      std::stable_sort(p.calls.begin(), p.calls.end(), by_corr);
    std::stable_sort(p.syncs.begin(), p.syncs.end(),
                     [](const model::HostSync& a, const model::HostSync& b) { return a.start < b.start; });
    p.thread_index = {};
  }
  last_ = nullptr;
}

const std::vector<model::HostSync>& HostCalls::Syncs(int64_t global_pid) const {
  static const std::vector<model::HostSync> none;
  auto it = by_process_.find(global_pid);
  return it == by_process_.end() ? none : it->second.syncs;
}

model::HostLaunch HostCalls::Reader::Find(int64_t global_pid, int64_t wide_correlation) {
  const model::HostLaunch none{model::kNoLaunch, 0};
  if (wide_correlation < 0 || wide_correlation > int64_t{UINT32_MAX}) return none;
  const auto correlation = static_cast<uint32_t>(wide_correlation);
  if (last_pid_ != global_pid) {
    auto it = calls_->by_process_.find(global_pid);
    last_ = it == calls_->by_process_.end() ? nullptr : &it->second.calls;
    last_pid_ = global_pid;
    hint_ = 0;
  }
  if (!last_) return none;
  const std::vector<Entry>& v = *last_;
  if (v.empty()) return none;
  // Near the last answer first (ops come in nearly ascending correlation order), else search.
  size_t h = std::min(hint_, v.size() - 1);
  if (v[h].correlation != correlation && h + 1 < v.size() && v[h + 1].correlation == correlation) ++h;
  if (v[h].correlation != correlation) {
    auto it =
        std::lower_bound(v.begin(), v.end(), correlation, [](const Entry& e, uint32_t c) { return e.correlation < c; });
    if (it == v.end() || it->correlation != correlation) return none;
    h = static_cast<size_t>(it - v.begin());
  }
  hint_ = h;
  return {v[h].start, v[h].thread};
}

}  // namespace cpprof::analysis
