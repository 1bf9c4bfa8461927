// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/nvtx_projection.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <utility>

namespace cpprof::analysis {

std::map<int64_t, std::vector<size_t>> RangesByThread(const std::vector<NvtxRange>& ranges) {
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

std::vector<int64_t> NvtxParents(const std::vector<NvtxRange>& ranges) {
  std::vector<int64_t> parent(ranges.size(), -1);
  for (const auto& thread : RangesByThread(ranges)) {
    const auto& idx = thread.second;  // not a structured binding: lambdas capture it (C++17 rules in clang 14)
    std::vector<size_t> active;       // ranges started so far that may still contain later ones
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

NvtxProjector::Thread& NvtxProjector::ThreadOf(int64_t tid) {
  if (last_thread_ && last_tid_ == tid) return *last_thread_;
  last_tid_ = tid;
  last_thread_ = &threads_[tid];  // unordered_map: references stay valid as it grows
  return *last_thread_;
}

void NvtxProjector::Advance(Thread& t, int64_t tid, int64_t time, bool is_range) {
  if (time < t.last_time) in_order_ = false;
  t.last_time = std::max(t.last_time, time);
  if (!t.pending.empty() && (!is_range || time > t.pending_start)) FlushPending(t, tid);
  CloseBefore(t, time);
}

void NvtxProjector::Range(int64_t tid, int64_t start, int64_t end, uint32_t group, uint64_t seq) {
  Thread& t = ThreadOf(tid);
  Advance(t, tid, start, true);
  if (t.pending.empty()) t.pending_start = start;
  t.pending.push_back({end, seq, group});
}

void NvtxProjector::FlushPending(Thread& t, int64_t tid) {
  // Ranges of one start open longest first, then in the order given.
  std::sort(t.pending.begin(), t.pending.end(),
            [](const Pending& a, const Pending& b) { return a.end != b.end ? a.end > b.end : a.seq < b.seq; });
  for (const Pending& p : t.pending) OpenOne(t, tid, t.pending_start, p);
  t.pending.clear();
}

void NvtxProjector::OpenOne(Thread& t, int64_t tid, int64_t start, const Pending& p) {
  // Every open range started no later than this one and ends no earlier than `start`.
  if (t.nested && !t.open.empty() && slots_[t.open.back()].end < p.end) ToGeneral(t);
  // The tightest open range that contains this one; the first of equals (sort order).
  int32_t parent = -1;
  int64_t best = std::numeric_limits<int64_t>::max();
  if (t.nested) {
    // Nested: each open range contains the next, so the innermost is the tightest (the first
    // of the identical ranges it may end).
    if (!t.open.empty()) {
      const Open& inner = slots_[t.open.back()];
      parent = static_cast<int32_t>(inner.run_first);
      best = (start - inner.start) + (inner.end - p.end);
    }
  } else if (auto it = t.tightest.lower_bound({p.end, 0}); it != t.tightest.end()) {
    // Every open range started no later: the tightest is the shortest that ends no earlier.
    const Open& o = slots_[it->second];
    parent = static_cast<int32_t>(it->second);
    best = (start - o.start) + (o.end - p.end);
  }
  int32_t level = 0;
  if (parent >= 0) {
    Open& par = slots_[parent];
    if (best == 0) {
      // An identical range: the first of them takes the second as its parent, and the rest
      // take the first: a cycle, without levels (nor levels below it).
      level = -1;
    } else {
      level = par.level < 0 ? -1 : par.level + 1;
    }
  }
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  if (parent >= 0 && best == 0 && !slots_[parent].has_twin) {
    Open& first = slots_[parent];
    first.has_twin = true;
    first.parent = static_cast<int32_t>(slot);
    first.level = -1;
  }
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  const uint32_t run_first = parent >= 0 && best == 0 ? static_cast<uint32_t>(parent) : slot;
  Open& o = slots_[slot];
  o = Open{start, p.end, tid,       p.seq,      p.group, parent, level, false, RangeProjection{},
           kNone, kNone, run_first, t.opened++, false};
  o.proj.level = level;
  t.open.push_back(slot);
  if (!t.nested) {
    t.closing.emplace(std::pair{o.end, o.order}, slot);
    AddTightest(t, slot);
  }
  max_open_ = std::max(max_open_, ++open_count_);
}

void NvtxProjector::Fold(RangeProjection& into, int64_t& into_first, int64_t& into_last, const RangeProjection& later,
                         int64_t later_first, int64_t later_last) {
  if (!later.projected) return;
  if (!into.projected) {
    into.projected = true;
    into.proj_start = later.proj_start;
    into.proj_end = later.proj_end;
    into.launches = later.launches;
    into_first = later_first;
    into_last = later_last;
    return;
  }
  into.proj_start = std::min(into.proj_start, later.proj_start);
  into.proj_end = std::max(into.proj_end, later.proj_end);
  // `later` counted its first id as new unless it was the initial "none"; after `into` it is
  // new unless it repeats into's last.
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  into.launches += later.launches - (later_first != kNone ? 1 : 0) + (later_first != into_last ? 1 : 0);
  into_last = later_last;
}

void NvtxProjector::AddTightest(Thread& t, uint32_t slot) {
  const Open& g = slots_[slot];
  const int64_t len = g.end - g.start;
  auto length = [&](ByEnd::iterator i) { return slots_[i->second].end - slots_[i->second].start; };
  auto it = t.tightest.lower_bound({g.end, 0});
  // One ending no earlier and no longer, opened earlier, is always the better parent.
  if (it != t.tightest.end() && length(it) <= len) return;
  // Those ending no later and longer never will be again (they close first).
  while (it != t.tightest.end() && it->first.first == g.end) it = t.tightest.erase(it);
  while (it != t.tightest.begin() && length(std::prev(it)) > len) t.tightest.erase(std::prev(it));
  t.tightest.emplace_hint(it, std::pair{g.end, g.order}, slot);
}

void NvtxProjector::DropStale(Thread& t) {
  std::erase_if(t.open, [&](uint32_t s) {
    if (!slots_[s].closed) return false;
    free_.push_back(s);
    return true;
  });
  t.stale = 0;
}

void NvtxProjector::ToGeneral(Thread& t) {
  // An open range's launches came before those of the next one (nested: they were folded into
  // the innermost open range, and into its parent when it closed).
  for (size_t i = t.open.size(); i-- > 1;) {
    const Open& inner = slots_[t.open[i]];
    Open& outer = slots_[t.open[i - 1]];
    Fold(outer.proj, outer.first_corr, outer.last_corr, inner.proj, inner.first_corr, inner.last_corr);
  }
  t.nested = false;
  for (uint32_t s : t.open) {
    t.closing.emplace(std::pair{slots_[s].end, slots_[s].order}, s);
    AddTightest(t, s);
  }
}

void NvtxProjector::Launch(int64_t tid, int64_t api_start, int64_t api_end, int64_t correlation, int64_t op_start,
                           int64_t op_end) {
  Thread& t = ThreadOf(tid);
  Advance(t, tid, api_start, false);
  if (t.open.empty()) return;
  if (t.nested && slots_[t.open.back()].end < api_end) ToGeneral(t);
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  if (t.nested) {
    // Every open range holds it: the innermost takes it, the others when it closes.
    Open& o = slots_[t.open.back()];
    RangeProjection one;
    one.projected = true;
    one.proj_start = op_start;
    one.proj_end = op_end;
    one.launches = correlation != kNone ? 1 : 0;
    Fold(o.proj, o.first_corr, o.last_corr, one, correlation, correlation);
    return;
  }
  for (uint32_t s : t.open) {
    Open& o = slots_[s];
    if (o.closed || o.end < api_end) continue;
    RangeProjection& p = o.proj;
    if (!p.projected) {
      p.projected = true;
      p.proj_start = op_start;
      p.proj_end = op_end;
    } else {
      p.proj_start = std::min(p.proj_start, op_start);
      p.proj_end = std::max(p.proj_end, op_end);
    }
    // Calls sharing an id (a runtime call and the driver call it makes) nest: they come one
    // after the other on their thread.
    if (o.last_corr != correlation) ++p.launches;
    o.last_corr = correlation;
  }
}

void NvtxProjector::CloseBefore(Thread& t, int64_t time) {
  closing_.clear();
  if (t.nested) {
    // The ranges that end first are the innermost: the last ones, each folded into its parent.
    while (!t.open.empty() && slots_[t.open.back()].end < time) {
      const uint32_t s = t.open.back();
      t.open.pop_back();
      if (!t.open.empty()) {
        Open& outer = slots_[t.open.back()];
        const Open& inner = slots_[s];
        Fold(outer.proj, outer.first_corr, outer.last_corr, inner.proj, inner.first_corr, inner.last_corr);
      }
      closing_.push_back(s);
    }
    std::reverse(closing_.begin(), closing_.end());  // handed back in sort order, as below
    if (!closing_.empty()) CloseBatch(t, closing_, true);
    return;
  }
  while (!t.closing.empty() && t.closing.begin()->first.first < time) {
    const uint32_t s = t.closing.begin()->second;
    t.tightest.erase(t.closing.begin()->first);
    t.closing.erase(t.closing.begin());
    slots_[s].closed = true;
    closing_.push_back(s);
  }
  if (closing_.empty()) return;
  // Handed back in sort order (their slots stay listed in `open` until a batch is dropped).
  std::sort(closing_.begin(), closing_.end(),
            [&](uint32_t a, uint32_t b) { return slots_[a].order < slots_[b].order; });
  CloseBatch(t, closing_, false);
  t.stale += closing_.size();
  if (t.closing.empty()) {
    DropStale(t);
    t.tightest.clear();
    t.nested = true;
  } else if (2 * t.stale > t.open.size()) {
    DropStale(t);
  }
}

void NvtxProjector::CloseAll(Thread& t) {
  if (t.nested) ToGeneral(t);  // once per thread, at the end
  DropStale(t);
  closing_.assign(t.open.begin(), t.open.end());
  t.open.clear();
  t.closing.clear();
  t.tightest.clear();
  t.nested = true;
  if (!closing_.empty()) CloseBatch(t, closing_, true);
}

void NvtxProjector::CloseBatch(Thread&, const std::vector<uint32_t>& closing, bool free_slots) {
  // A parent ends no earlier than its children: it is still open or closes in this batch (and
  // the projections of a nested batch were folded into their parents above).
  for (uint32_t s : closing) {
    const Open& o = slots_[s];
    if (o.proj.projected && o.parent >= 0) ++slots_[o.parent].proj.children;
  }
  ClosedRange c;
  for (uint32_t s : closing) {
    const Open& o = slots_[s];
    c.start = o.start;
    c.end = o.end;
    c.tid = o.tid;
    c.seq = o.seq;
    c.group = o.group;
    c.proj = o.proj;
    c.proj.level = o.level;
    sink_(c);
    if (free_slots) free_.push_back(s);
    --open_count_;
  }
}

void NvtxProjector::Finish() {
  for (auto& [tid, t] : threads_) {
    if (!t.pending.empty()) FlushPending(t, tid);
    CloseAll(t);
  }
}

std::vector<RangeProjection> ProjectRanges(const std::vector<NvtxRange>& ranges, const std::vector<Launch>& launches) {
  std::vector<RangeProjection> out(ranges.size());
  NvtxProjector projector([&](const ClosedRange& c) { out[c.seq] = c.proj; });
  std::map<int64_t, std::vector<size_t>> range_idx;
  std::map<int64_t, std::vector<const Launch*>> launch_of;
  for (size_t i = 0; i < ranges.size(); ++i) range_idx[ranges[i].tid].push_back(i);
  for (const auto& l : launches) launch_of[l.tid].push_back(&l);
  for (auto& [tid, idx] : range_idx) {
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return ranges[a].start < ranges[b].start; });
    auto& ls = launch_of[tid];
    std::stable_sort(ls.begin(), ls.end(),
                     [](const Launch* a, const Launch* b) { return a->api_start < b->api_start; });
    size_t next = 0;
    for (const Launch* l : ls) {
      for (; next < idx.size() && ranges[idx[next]].start <= l->api_start; ++next) {
        projector.Range(tid, ranges[idx[next]].start, ranges[idx[next]].end, 0, idx[next]);
      }
      projector.Launch(tid, l->api_start, l->api_end, l->correlation, l->op_start, l->op_end);
    }
    for (; next < idx.size(); ++next) {
      projector.Range(tid, ranges[idx[next]].start, ranges[idx[next]].end, 0, idx[next]);
    }
  }
  projector.Finish();
  return out;
}

namespace {

constexpr int64_t kStartLimit = int64_t{1} << 47;

}  // namespace

uint32_t LaunchSpans::ProcessIndex(int64_t global_pid) {
  if (global_pid == last_pid_) return last_index_;
  auto [it, inserted] = process_index_.try_emplace(global_pid, static_cast<uint32_t>(process_index_.size()));
  last_pid_ = global_pid;
  last_index_ = it->second;
  return last_index_;
}

void LaunchSpans::Add(int64_t global_pid, int64_t correlation, int64_t start, int64_t end) {
  uint32_t proc = ProcessIndex(global_pid);
  int64_t len = end - start;
  if (proc < (1u << 16) && correlation >= 0 && correlation <= 0xFFFFFFFFll && len >= 0 && len <= 0xFFFFFFFFll &&
      start >= -kStartLimit && start < kStartLimit) {
    auto ulen = static_cast<uint64_t>(len);
    entries_.push_back(
        {(static_cast<uint64_t>(proc) << 48) | (static_cast<uint64_t>(correlation) << 16) | (ulen & 0xFFFF),
         static_cast<int64_t>((static_cast<uint64_t>(start) << 16) | (ulen >> 16))});
    return;
  }
  auto [it, inserted] = wide_.try_emplace({global_pid, correlation}, Span{start, end});
  if (!inserted) {
    it->second.start = std::min(it->second.start, start);
    it->second.end = std::max(it->second.end, end);
  }
}

namespace {

int64_t StartOf(int64_t lo) { return lo >> 16; }
int64_t LengthOf(uint64_t hi, int64_t lo) {
  return static_cast<int64_t>((hi & 0xFFFF) | ((static_cast<uint64_t>(lo) & 0xFFFF) << 16));
}

}  // namespace

void LaunchSpans::Finish() {
  std::sort(entries_.begin(), entries_.end(), [](const Packed& a, const Packed& b) { return a.hi < b.hi; });
  // Several ops of one launch (graph launches): one entry with their span.
  std::vector<std::pair<int64_t, uint32_t>> pids(process_index_.begin(), process_index_.end());
  std::vector<int64_t> pid_of(pids.size());
  for (const auto& [pid, idx] : pids) pid_of[idx] = pid;
  size_t out = 0;
  for (size_t i = 0; i < entries_.size();) {
    uint64_t key = entries_[i].hi >> 16;
    int64_t start = StartOf(entries_[i].lo), end = start + LengthOf(entries_[i].hi, entries_[i].lo);
    size_t j = i + 1;
    for (; j < entries_.size() && (entries_[j].hi >> 16) == key; ++j) {
      int64_t s = StartOf(entries_[j].lo);
      start = std::min(start, s);
      end = std::max(end, s + LengthOf(entries_[j].hi, entries_[j].lo));
    }
    i = j;
    auto len = static_cast<uint64_t>(end - start);
    if (len > 0xFFFFFFFFull) {
      auto k = std::make_pair(pid_of[key >> 32], static_cast<int64_t>(key & 0xFFFFFFFF));
      auto [it, inserted] = wide_.try_emplace(k, Span{start, end});
      if (!inserted) {
        it->second.start = std::min(it->second.start, start);
        it->second.end = std::max(it->second.end, end);
      }
      continue;
    }
    entries_[out++] = {(key << 16) | (len & 0xFFFF),
                       static_cast<int64_t>((static_cast<uint64_t>(start) << 16) | (len >> 16))};
  }
  entries_.resize(out);  // no shrink_to_fit: a copy would double the peak for a few percent
}

bool LaunchSpans::Find(int64_t global_pid, int64_t correlation, int64_t* start, int64_t* end) {
  bool found = false;
  if (correlation >= 0 && correlation <= 0xFFFFFFFFll) {
    auto it = process_index_.find(global_pid);
    if (it != process_index_.end() && it->second < (1u << 16)) {
      uint64_t key = (static_cast<uint64_t>(it->second) << 32) | static_cast<uint64_t>(correlation);
      auto at = [&](size_t i) { return entries_[i].hi >> 16; };
      size_t i;
      // Calls come in nearly ascending correlation order: try next to the last answer first.
      if (hint_ < entries_.size() && at(hint_) == key) {
        i = hint_;
      } else if (hint_ + 1 < entries_.size() && at(hint_ + 1) == key) {
        i = hint_ + 1;
      } else {
        auto lb = std::lower_bound(entries_.begin(), entries_.end(), key,
                                   [](const Packed& e, uint64_t k) { return (e.hi >> 16) < k; });
        i = static_cast<size_t>(lb - entries_.begin());
      }
      if (i < entries_.size() && at(i) == key) {
        hint_ = i;
        *start = StartOf(entries_[i].lo);
        *end = *start + LengthOf(entries_[i].hi, entries_[i].lo);
        found = true;
      }
    }
  }
  if (!wide_.empty()) {
    auto w = wide_.find({global_pid, correlation});
    if (w != wide_.end()) {
      *start = found ? std::min(*start, w->second.start) : w->second.start;
      *end = found ? std::max(*end, w->second.end) : w->second.end;
      found = true;
    }
  }
  return found;
}

}  // namespace cpprof::analysis
