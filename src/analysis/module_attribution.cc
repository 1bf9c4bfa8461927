// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/module_attribution.h"

#include <algorithm>

#include "model/global_id.h"

namespace cpprof::analysis {

namespace {

// `s` cut to at most `max` bytes plus an ellipsis, never inside a UTF-8 character.
std::string CutName(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return std::string(s.substr(0, end)) + "\u2026";
}

}  // namespace

ModuleAttribution::ModuleAttribution(std::vector<KeptRange> ranges, std::vector<std::string> names,
                                     const ModuleConfig& config, std::set<int64_t> autograd_threads)
    : ranges_(std::move(ranges)), names_(std::move(names)), autograd_(std::move(autograd_threads)) {
  nodes_.push_back({"[unattributed]", "", -1, 0, false});
  for (const auto& g : config.groups) group_names_.push_back(g.name);
  group_mask_.reserve(names_.size());
  for (const auto& n : names_) {
    group_mask_.push_back(config.GroupMask(n));
    short_names_.push_back(CutName(ShortModuleName(n), kMaxModuleNameBytes));
  }

  std::sort(ranges_.begin(), ranges_.end(), [](const KeptRange& a, const KeptRange& b) {
    if (a.tid != b.tid) return a.tid < b.tid;
    if (a.start != b.start) return a.start < b.start;
    return a.end > b.end;  // containers before what they contain
  });
  std::vector<bool> is_module_name(names_.size(), false);
  for (const auto& r : ranges_) {
    if (r.module) is_module_name[r.name] = true;
  }
  module_names_ = std::count(is_module_name.begin(), is_module_name.end(), true);

  // Parents with a stack per thread: push/pop ranges nest, so the tightest container of a range
  // is the innermost open one that still contains it.
  parent_.assign(ranges_.size(), -1);
  std::vector<size_t> stack;
  for (size_t i = 0; i < ranges_.size(); ++i) {
    if (i == 0 || ranges_[i].tid != ranges_[i - 1].tid) {
      stack.clear();
      threads_[ranges_[i].tid].first = i;
    }
    threads_[ranges_[i].tid].second = i + 1;
    while (!stack.empty() && ranges_[stack.back()].end < ranges_[i].end) stack.pop_back();
    if (!stack.empty()) parent_[i] = static_cast<int32_t>(stack.back());
    stack.push_back(i);
  }
  // evaluate_function ranges take the number of their first child with one (children come after
  // their parent, in order: one pass; a child's own number is still the one it was read with).
  for (size_t j = 0; j < ranges_.size(); ++j) {
    int32_t p = parent_[j];
    if (p >= 0 && ranges_[p].seq == kSeqOfChild && ranges_[j].seq >= 0) ranges_[p].seq = ranges_[j].seq;
  }
  for (auto& r : ranges_) {
    if (r.seq == kSeqOfChild) r.seq = -1;
  }
  ComputeNodes();
  // Jumps to the 2^k-th ancestor (k >= 1) for ForCall, where ranges nest deeper than a few levels.
  std::vector<int32_t> depth(ranges_.size(), 0);
  int32_t max_depth = 0;
  for (size_t i = 0; i < ranges_.size(); ++i) {
    if (parent_[i] >= 0) depth[i] = depth[static_cast<size_t>(parent_[i])] + 1;
    max_depth = std::max(max_depth, depth[i]);
  }
  if (max_depth > 16) {
    const std::vector<int32_t>* prev = &parent_;
    for (int32_t step = 2; step <= max_depth; step *= 2) {
      std::vector<int32_t> next(ranges_.size(), -1);
      for (size_t i = 0; i < ranges_.size(); ++i) {
        int32_t mid = (*prev)[i];
        next[i] = mid < 0 ? -1 : (*prev)[static_cast<size_t>(mid)];
      }
      jump_.push_back(std::move(next));
      prev = &jump_.back();
    }
  }
  // Backward work that cannot be mapped to a forward module (PyTorch's engine thread runs it,
  // outside the model's own ranges) gets a row of its own rather than landing in [unattributed].
  if (!autograd_.empty()) {
    backward_node_ = GroupNode("[backward]");
    MapBackward();
  }
}

int64_t AutogradSeq(std::string_view text) {
  constexpr std::string_view kKey = ", seq = ";
  size_t at = text.find(kKey);
  if (at == std::string_view::npos) return -1;
  int64_t seq = -1;
  for (size_t i = at + kKey.size(); i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (seq > (INT64_MAX - 9) / 10) return -1;
    seq = (seq < 0 ? 0 : seq * 10) + (text[i] - '0');
  }
  return seq;
}

bool IsAutogradEvaluate(std::string_view text) { return text.starts_with("autograd::engine::evaluate_function: "); }

void AppendOpRangeKey(std::string_view text, std::string& out) {
  size_t first = std::string_view::npos;
  bool seq = false, op_id = false;
  for (size_t at = text.find(", "); at != std::string_view::npos; at = text.find(", ", at + 2)) {
    std::string_view rest = text.substr(at + 2);
    bool is_seq = rest.starts_with("seq = "), is_op = rest.starts_with("op_id = ");
    if (!is_seq && !is_op && !rest.starts_with("sizes = ")) continue;
    if (first == std::string_view::npos) first = at;
    seq |= is_seq;
    op_id |= is_op;
  }
  if (first == std::string_view::npos) {
    out.append(text);
    return;
  }
  out.append(text.substr(0, first));
  if (seq) out.append(", seq = 0");
  if (op_id) out.append(", op_id = 0");
}

void ModuleAttribution::MapBackward() {
  // (process, seq) -> the module of the forward op that created autograd node `seq`: the last
  // range with that number on its thread (ops nested in it share the number until the node is
  // made). Sequence numbers count per thread: one seen on two threads of a process is ambiguous.
  struct Forward {
    uint16_t node;
    uint8_t flags;
    int64_t tid;  // -1: ambiguous
  };
  constexpr int64_t kSeqLimit = int64_t{1} << 40;
  auto key = [](int64_t tid, int64_t seq) {
    return static_cast<uint64_t>(model::PidOf(tid)) << 40 | static_cast<uint64_t>(seq);
  };
  std::unordered_map<uint64_t, Forward> forward;
  for (size_t i = 0; i < ranges_.size(); ++i) {
    const KeptRange& r = ranges_[i];
    if (r.seq < 0 || r.seq >= kSeqLimit || autograd_.count(r.tid)) continue;
    auto [it, fresh] = forward.try_emplace(key(r.tid, r.seq), Forward{node_[i], flags_[i], r.tid});
    if (fresh) continue;
    if (it->second.tid == r.tid) {
      it->second = {node_[i], flags_[i], r.tid};
    } else {
      it->second = {kUnattributed, 0, -1};
    }
  }
  // Per range, from its parent's (parents come first): `stop`, the innermost seq range on the
  // chain (the backward function running the call), and the forward module that function maps to
  // (`base`). Mapped: the modules inside `stop` hang below `base`; else the range keeps the node
  // its own module path gives (ComputeNodes).
  const std::vector<uint16_t> own = node_;
  std::vector<int64_t> stop_of(ranges_.size(), -1);
  std::vector<int32_t> base_of(ranges_.size(), -1);
  std::vector<uint8_t> forward_flags_of(ranges_.size(), 0);
  for (size_t i = 0; i < ranges_.size(); ++i) {
    const KeptRange& r = ranges_[i];
    if (!autograd_.count(r.tid)) continue;
    int32_t p = parent_[i];
    int64_t stop = r.seq >= 0 ? static_cast<int64_t>(i) : (p >= 0 ? stop_of[p] : -1);
    stop_of[i] = stop;
    int base = -1;
    uint8_t forward_flags = 0;
    if (stop == static_cast<int64_t>(i)) {
      if (r.seq < kSeqLimit) {
        auto it = forward.find(key(r.tid, r.seq));
        if (it != forward.end() && it->second.tid >= 0 && it->second.node != kUnattributed) {
          base = it->second.node;
          forward_flags = it->second.flags;
        }
      }
      base_of[i] = base;
      forward_flags_of[i] = forward_flags;
      if (p < 0 || ranges_[p].seq != r.seq) {
        ++backward_ranges_;  // one per backward node run (not its evaluate_function wrapper too)
        backward_mapped_ += base >= 0;
      }
    } else if (stop >= 0) {
      base = base_of[stop];
      forward_flags = forward_flags_of[stop];
    }
    flags_[i] |= forward_flags;
    if (base < 0) {
      node_[i] = own[i];
    } else {
      int under = stop == static_cast<int64_t>(i) ? base : node_[p];
      node_[i] = r.module ? Under(under, r.name) : static_cast<uint16_t>(under);
    }
  }
}

void ModuleAttribution::ComputeNodes() {
  const size_t n = ranges_.size();
  node_.assign(n, kUnattributed);
  optimizer_.assign(n, 0);
  flags_.assign(n, 0);
  std::vector<uint64_t> groups(n, 0);  // the groups on the range's module path
  auto first_group = [](uint64_t mask) { return mask ? __builtin_ctzll(mask) : -1; };
  for (size_t i = 0; i < n; ++i) {
    const KeptRange& r = ranges_[i];
    const int32_t p = parent_[i];
    flags_[i] =
        static_cast<uint8_t>((r.warmup ? kInWarmup : 0) | (r.excluded ? kExcluded : 0) | (p >= 0 ? flags_[p] : 0));
    optimizer_[i] = r.optimizer || (p >= 0 && optimizer_[p]);
    const uint16_t up = p >= 0 ? node_[p] : kUnattributed;
    const uint64_t up_groups = p >= 0 ? groups[p] : 0;
    if (!r.module) {
      node_[i] = up;
      groups[i] = up_groups;
      continue;
    }
    groups[i] = up_groups | group_mask_[r.name];
    // The path hangs below the first group (in priority order) found on it, from the outermost
    // module of that group: a group first found at this range starts the path here.
    const int g = first_group(groups[i]);
    int under;
    if (up == kUnattributed || g != first_group(up_groups)) {
      under = g >= 0 ? GroupNode(group_names_[static_cast<size_t>(g)]) : GroupNode("[other modules]");
    } else {
      under = up;
    }
    node_[i] = Under(under, r.name);
  }
}

uint16_t ModuleAttribution::Under(int parent, uint32_t name) {
  if (parent >= 0 && nodes_[static_cast<size_t>(parent)].depth + 1 >= kMaxModuleDepth) {
    too_deep_ = true;  // deeper ranges count in their ancestor at the limit
    return static_cast<uint16_t>(parent);
  }
  return static_cast<uint16_t>(InternRange(parent, name));
}

int ModuleAttribution::Intern(int parent, const std::string& name, const std::string& range, bool is_group) {
  auto key = std::make_pair(parent, is_group ? "group:" + name : range);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  if (nodes_.size() >= static_cast<size_t>(kMaxModuleNodes)) {
    overflowed_ = true;
    return parent < 0 ? kUnattributed : parent;
  }
  int depth = parent < 0 ? 0 : nodes_[parent].depth + 1;
  nodes_.push_back({name, range, parent, depth, is_group});
  index_[key] = static_cast<int>(nodes_.size() - 1);
  return static_cast<int>(nodes_.size() - 1);
}

int ModuleAttribution::InternRange(int parent, uint32_t name) {
  uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(parent)) << 32) | name;
  auto it = range_index_.find(key);
  if (it != range_index_.end()) return it->second;
  int node = Intern(parent, short_names_[name], CutName(names_[name], 5 * kMaxModuleNameBytes), false);
  range_index_[key] = node;
  return node;
}

uint16_t ModuleAttribution::GroupNode(const std::string& name) {
  return static_cast<uint16_t>(Intern(-1, name, "", true));
}

LaunchTag ModuleAttribution::ForCall(int64_t tid, int64_t t) const {
  LaunchTag tag;
  bool autograd = autograd_.count(tid) > 0;
  if (autograd) tag.phase = model::Phase::kBackward;
  auto th = threads_.find(tid);
  if (th != threads_.end()) {
    auto [begin, end] = th->second;
    // The last range that started at or before t; its innermost container of t is on its chain.
    auto it = std::upper_bound(ranges_.begin() + begin, ranges_.begin() + end, t,
                               [](int64_t v, const KeptRange& r) { return v < r.start; });
    int64_t cur = (it - ranges_.begin()) - 1;
    if (cur >= static_cast<int64_t>(begin) && ranges_[cur].end < t) {
      // Ends grow up the chain: skip the ancestors that ended before t, 2^k at a time.
      for (size_t k = jump_.size(); k-- > 0;) {
        int32_t up = jump_[k][static_cast<size_t>(cur)];
        if (up >= 0 && ranges_[up].end < t) cur = up;
      }
      while (cur >= 0 && ranges_[cur].end < t) cur = parent_[cur];
    }
    if (cur >= static_cast<int64_t>(begin)) {
      tag.node = node_[cur];
      if (optimizer_[cur]) tag.phase = model::Phase::kOptimizer;
      tag.flags = flags_[cur];
    }
  }
  if (autograd && tag.node == kUnattributed) tag.node = backward_node_;
  return tag;
}

std::vector<ModuleCall> ModuleAttribution::ModuleCalls() const {
  std::vector<ModuleCall> calls;
  for (size_t i = 0; i < ranges_.size() && i < node_.size(); ++i) {
    const KeptRange& r = ranges_[i];
    if (!r.module || r.seq != -1) continue;
    const ModuleTreeNode& n = nodes_[node_[i]];
    // A range folded into an ancestor (depth or node limit) is not a call of that ancestor.
    if (n.is_group || node_[i] == kUnattributed || n.name != short_names_[r.name]) continue;
    calls.push_back({model::GlobalPidOf(r.tid), r.start, node_[i]});
  }
  std::sort(calls.begin(), calls.end(), [](const ModuleCall& a, const ModuleCall& b) {
    return a.global_pid != b.global_pid ? a.global_pid < b.global_pid : a.start < b.start;
  });
  return calls;
}

void ModuleAttribution::ReleaseRanges() {
  std::vector<KeptRange>().swap(ranges_);
  std::vector<int32_t>().swap(parent_);
  std::vector<std::vector<int32_t>>().swap(jump_);
  std::vector<uint16_t>().swap(node_);
  std::vector<uint8_t>().swap(optimizer_);
  std::vector<uint8_t>().swap(flags_);
  threads_ = {};
  range_index_ = {};
}

void CallTags::Add(int64_t global_pid, int64_t correlation, LaunchTag tag) {
  if (correlation < 0 || correlation > int64_t{UINT32_MAX}) {
    wide_[{global_pid, correlation}] = tag;
    return;
  }
  by_process_[global_pid].push_back({static_cast<uint32_t>(correlation), tag});
}

void CallTags::Finish() {
  for (auto& [pid, v] : by_process_) {
    if (!std::is_sorted(v.begin(), v.end(),
                        [](const Entry& a, const Entry& b) { return a.correlation < b.correlation; })) {
      std::sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return a.correlation < b.correlation; });
    }
  }
}

LaunchTag CallTags::Reader::Find(int64_t global_pid, int64_t wide_correlation) {
  if (wide_correlation < 0 || wide_correlation > int64_t{UINT32_MAX}) {
    auto it = tags_->wide_.find({global_pid, wide_correlation});
    return it == tags_->wide_.end() ? LaunchTag{} : it->second;
  }
  const auto correlation = static_cast<uint32_t>(wide_correlation);
  if (last_pid_ != global_pid) {
    auto it = tags_->by_process_.find(global_pid);
    last_ = it == tags_->by_process_.end() ? nullptr : &it->second;
    last_pid_ = global_pid;
    hint_ = 0;
  }
  if (!last_ || last_->empty()) return {};
  const std::vector<Entry>& v = *last_;
  // Near the last answer first (O(1) for ascending lookups, hits and misses alike), else search.
  size_t h = hint_ < v.size() ? hint_ : v.size() - 1;
  if (v[h].correlation == correlation) return v[h].tag;
  if (v[h].correlation < correlation) {
    if (h + 1 == v.size() || v[h + 1].correlation > correlation) return {};
    if (v[h + 1].correlation == correlation) {
      hint_ = h + 1;
      return v[h + 1].tag;
    }
  }
  auto it =
      std::lower_bound(v.begin(), v.end(), correlation, [](const Entry& e, uint32_t c) { return e.correlation < c; });
  hint_ = it == v.end() ? v.size() - 1 : static_cast<size_t>(it - v.begin());
  return it != v.end() && it->correlation == correlation ? it->tag : LaunchTag{};
}

size_t CallTags::size() const {
  size_t n = wide_.size();
  for (const auto& [pid, v] : by_process_) n += v.size();
  return n;
}

}  // namespace cpprof::analysis
