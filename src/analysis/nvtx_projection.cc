#include "analysis/nvtx_projection.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

namespace cpprof::analysis {

namespace {

// Range indices per thread, by start then longest first (containers before what they contain).
std::map<int64_t, std::vector<size_t>> ByThread(const std::vector<NvtxRange>& ranges) {
  std::map<int64_t, std::vector<size_t>> out;
  for (size_t i = 0; i < ranges.size(); ++i) out[ranges[i].tid].push_back(i);
  for (auto& [tid, idx] : out) {
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      if (ranges[a].start != ranges[b].start) return ranges[a].start < ranges[b].start;
      if (ranges[a].end != ranges[b].end) return ranges[a].end > ranges[b].end;
      return a < b;
    });
  }
  return out;
}

}  // namespace

std::vector<int64_t> NvtxParents(const std::vector<NvtxRange>& ranges) {
  std::vector<int64_t> parent(ranges.size(), -1);
  for (const auto& [tid, idx] : ByThread(ranges)) {
    std::vector<size_t> active;  // ranges started so far that may still contain later ones
    for (size_t k = 0; k < idx.size(); ++k) {
      const NvtxRange& cr = ranges[idx[k]];
      std::erase_if(active, [&](size_t a) { return ranges[a].end < cr.start; });
      int64_t best = std::numeric_limits<int64_t>::max();
      auto consider = [&](size_t p) {
        const NvtxRange& pr = ranges[p];
        if (p == idx[k] || pr.start > cr.start || pr.end < cr.end) return;
        int64_t tight = (cr.start - pr.start) + (pr.end - cr.end);
        if (tight < best) best = tight, parent[idx[k]] = static_cast<int64_t>(p);
      };
      for (size_t a : active) consider(a);
      // An identical range sorted after this one contains it too.
      for (size_t j = k + 1; j < idx.size() && ranges[idx[j]].start == cr.start; ++j) consider(idx[j]);
      active.push_back(idx[k]);
    }
  }
  return parent;
}

std::vector<RangeProjection> ProjectRanges(const std::vector<NvtxRange>& ranges,
                                           const std::vector<Launch>& launches) {
  std::vector<RangeProjection> out(ranges.size());
  // The last correlation id counted per range: calls sharing an id (a runtime call and the
  // driver call it makes) nest, so they arrive one after the other on their thread.
  std::vector<int64_t> last_corr(ranges.size(), std::numeric_limits<int64_t>::min());
  auto threads = ByThread(ranges);

  // Launches per thread by API start; sweep each thread's ranges alongside.
  std::map<int64_t, std::vector<const Launch*>> by_thread;
  for (const auto& l : launches) by_thread[l.tid].push_back(&l);
  for (auto& [tid, ls] : by_thread) {
    auto it = threads.find(tid);
    if (it == threads.end()) continue;
    const auto& idx = it->second;
    std::sort(ls.begin(), ls.end(), [](const Launch* a, const Launch* b) { return a->api_start < b->api_start; });
    std::vector<size_t> active;
    size_t next = 0;
    for (const Launch* l : ls) {
      while (next < idx.size() && ranges[idx[next]].start <= l->api_start) active.push_back(idx[next++]);
      std::erase_if(active, [&](size_t a) { return ranges[a].end < l->api_start; });
      for (size_t a : active) {
        if (ranges[a].end < l->api_end) continue;
        RangeProjection& p = out[a];
        if (!p.projected) {
          p.projected = true;
          p.proj_start = l->op_start;
          p.proj_end = l->op_end;
        } else {
          p.proj_start = std::min(p.proj_start, l->op_start);
          p.proj_end = std::max(p.proj_end, l->op_end);
        }
        if (last_corr[a] != l->correlation) ++p.launches;
        last_corr[a] = l->correlation;
      }
    }
  }

  std::vector<int64_t> parent = NvtxParents(ranges);
  // Levels: depth from a root; a cycle (identical ranges parent each other) has no level.
  std::vector<int> level(ranges.size(), -2);  // -2 unknown
  for (size_t i = 0; i < ranges.size(); ++i) {
    std::vector<size_t> path;
    size_t cur = i;
    int base = 0;
    while (true) {
      if (level[cur] != -2) {
        base = level[cur] < 0 ? -1 : level[cur] + 1;
        break;
      }
      if (parent[cur] < 0) {
        level[cur] = 0;
        base = 1;
        break;
      }
      if (std::find(path.begin(), path.end(), cur) != path.end()) {
        base = -1;  // cycle
        break;
      }
      path.push_back(cur);
      cur = static_cast<size_t>(parent[cur]);
    }
    for (auto p = path.rbegin(); p != path.rend(); ++p) {
      if (level[*p] != -2) continue;
      level[*p] = base < 0 ? -1 : base;
      if (base >= 0) ++base;
    }
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    out[i].level = level[i];
    if (out[i].projected && parent[i] >= 0) ++out[parent[i]].children;
  }
  return out;
}

}  // namespace cpprof::analysis
