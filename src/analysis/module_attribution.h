// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Module attribution: which module (and which phase: forward, backward, optimizer) launched each
// GPU op. A CUDA API call belongs to the innermost module range open on its thread when it
// started (nsys's own rule for GPU projection: same thread, the range contains the call); the
// op it launched, found by correlation id, inherits that. The module tree interns each module
// path once (groups first, see module_config.h); node ids are shared by all ranks.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/module_config.h"
#include "model/gpu_work.h"
#include "model/report.h"

namespace cpprof::analysis {

inline constexpr uint16_t kUnattributed = 0;  // node 0: no module range around the launch
inline constexpr int kMaxModuleNodes = 65535;
// Each node's path, "group/.../module" (the names from the root down, as the module table nests
// them), for any node list whose parents come before their children (ModuleTreeNode,
// model::ModuleNode).
template <typename Node>
std::vector<std::string> ModulePaths(const std::vector<Node>& nodes) {
  std::vector<std::string> paths(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    paths[n] = node.parent >= 0 ? paths[static_cast<size_t>(node.parent)] + "/" + node.name : node.name;
  }
  return paths;
}

// Module paths are at most this deep (the group included); deeper ranges count in their ancestor
// at the limit, so no output grows with the square of the nesting.
inline constexpr int kMaxModuleDepth = 32;
// Module names are cut to this many bytes (a UTF-8 character is never split) in the tree.
inline constexpr size_t kMaxModuleNameBytes = 200;

struct ModuleTreeNode {
  std::string name;   // short name, or the group's name
  std::string range;  // the NVTX range ("" for groups)
  int parent = -1;
  int depth = 0;
  bool is_group = false;
};

// An NVTX range kept for attribution: a module, or an optimizer marker (or both), or one of
// autograd's op ranges that carries a sequence number (see AutogradSeq).
struct KeptRange {
  int64_t start = 0, end = 0;
  int64_t tid = 0;    // globalTid
  uint32_t name = 0;  // index into the names given to Build (unused for seq ranges)
  bool module = false;
  bool optimizer = false;
  bool warmup = false;    // a warm-up range (ModuleConfig::IsWarmup)
  bool excluded = false;  // its GPU work is left out of the readout (--exclude-ranges)
  int64_t seq = -1;       // autograd's sequence number; -1: not an autograd op range
};

// The sequence number of one of autograd's NVTX ranges (`--pytorch=autograd-nvtx` and
// `autograd-shapes-nvtx`): "aten::mm, seq = 12, op_id = ..." on the forward thread and
// "MmBackward0, seq = 12, ..." on autograd's thread name the same autograd node. -1 when the
// text carries none.
int64_t AutogradSeq(std::string_view text);

// KeptRange::seq of autograd's "autograd::engine::evaluate_function: MmBackward0, op_id = ..."
// ranges: they carry no number, but wrap the node's own seq range and also the work that adds
// up the gradients it produced, so they take the number of the seq range inside them.
inline constexpr int64_t kSeqOfChild = -2;
bool IsAutogradEvaluate(std::string_view text);

// PyTorch's op ranges carry per-call numbers and shapes ("aten::view, op_id = 49486, sizes = [[512, 1]],
// input_op_ids = [...]", "MmBackward0, seq = 17, op_id = 220"): about half of a capture's NVTX texts
// are distinct only there. They are matched (module, group, iteration, warm-up patterns) in one
// canonical form per op name: the numbers of ", seq = " and ", op_id = " become 0 and the rest
// (shapes, input ids) is dropped: "aten::view, op_id = 0", "MmBackward0, seq = 0, op_id = 0".
// Other texts are appended whole. Appends to `out`.
void AppendOpRangeKey(std::string_view text, std::string& out);

// Launch flags (LaunchTag::flags, model::OpTag::flags).
inline constexpr uint8_t kInWarmup = model::kOpInWarmup, kExcluded = model::kOpExcluded;

struct LaunchTag {
  uint16_t node = kUnattributed;
  model::Phase phase = model::Phase::kForward;
  uint8_t flags = 0;  // kInWarmup, kExcluded
  bool operator==(const LaunchTag&) const = default;
};

// One call of a module: a module range that is a node of its own (not folded into an ancestor at
// kMaxModuleDepth or kMaxModuleNodes), where it started. Counted per window, they give a module's
// calls per iteration (the cost model's calls counted from the capture).
struct ModuleCall {
  int64_t global_pid = 0;
  int64_t start = 0;
  uint16_t node = kUnattributed;
};

class ModuleAttribution {
 public:
  // `names[i]` is the full range name ("domain:text") of KeptRange::name == i.
  // `autograd_threads`: globalTids of PyTorch's autograd engine threads (backward work).
  // Backward work goes to the module of the forward op with the same sequence number (the
  // innermost seq range around the call on autograd's thread; the forward op's innermost
  // module on its own thread), with any module ranges inside the backward range below it; work
  // that cannot be mapped so goes to a [backward] row.
  ModuleAttribution(std::vector<KeptRange> ranges, std::vector<std::string> names, const ModuleConfig& config,
                    std::set<int64_t> autograd_threads);

  // The tag of a CUDA call that started at `t` on thread `tid`.
  LaunchTag ForCall(int64_t tid, int64_t t) const;

  const std::vector<ModuleTreeNode>& nodes() const { return nodes_; }
  // Frees what ForCall needs (the ranges) once every launch is tagged; nodes() stays.
  void ReleaseRanges();
  // Every module range's call, by process then start (before ReleaseRanges).
  std::vector<ModuleCall> ModuleCalls() const;
  int64_t module_ranges() const { return module_names_; }  // distinct names that are modules
  // Backward ranges (seq ranges on autograd's threads) whose forward op was found in a module.
  int64_t backward_ranges_mapped() const { return backward_mapped_; }
  int64_t backward_ranges() const { return backward_ranges_; }
  bool overflowed() const { return overflowed_; }  // more than kMaxModuleNodes paths
  bool too_deep() const { return too_deep_; }      // a path was cut at kMaxModuleDepth

 private:
  int Intern(int parent, const std::string& name, const std::string& range, bool is_group);
  int InternRange(int parent, uint32_t name);  // Intern for a range name, with a cheap key
  // node_, flags_, optimizer_ of every range from its parent's: linear in the ranges, however
  // deep they nest (a push without its pop in a loop nests thousands deep).
  void ComputeNodes();
  uint16_t Under(int parent, uint32_t name);  // InternRange, or `parent` at kMaxModuleDepth
  void MapBackward();
  uint16_t GroupNode(const std::string& name);

  std::vector<KeptRange> ranges_;  // by (tid, start, longest first)
  std::vector<std::string> names_;
  std::vector<uint64_t> group_mask_;        // per name
  std::vector<int32_t> parent_;             // per range: tightest containing kept range on its thread
  std::vector<std::vector<int32_t>> jump_;  // [k][range]: its 2^(k+1)-th ancestor (deep nesting only)
  std::vector<uint16_t> node_;              // per range: the node of a call whose innermost range it is
  std::vector<uint8_t> optimizer_;          // per range: an optimizer range is on its path
  std::vector<uint8_t> flags_;              // per range: kInWarmup, kExcluded from its path
  std::unordered_map<int64_t, std::pair<size_t, size_t>> threads_;  // tid -> [begin, end)
  std::set<int64_t> autograd_;
  std::vector<std::string> group_names_;
  std::vector<ModuleTreeNode> nodes_;
  std::map<std::pair<int, std::string>, int> index_;  // (parent, range or group name) -> node
  std::unordered_map<uint64_t, int> range_index_;     // (parent, name index) -> node
  std::vector<std::string> short_names_;              // per name
  uint16_t backward_node_ = kUnattributed;
  int64_t module_names_ = 0;
  int64_t backward_mapped_ = 0, backward_ranges_ = 0;
  bool overflowed_ = false;
  bool too_deep_ = false;
};

// Tags of CUDA calls by (process, correlation id), for the ops they launched. Built from the
// runtime table streamed in any order; lookups are cheap when asked in correlation order.
class CallTags {
 private:
  // 8 bytes: CUPTI correlation ids are 32-bit; anything else (never seen) goes to `wide_`.
  struct Entry {
    uint32_t correlation;
    LaunchTag tag;
  };
  static_assert(sizeof(Entry) == 8, "a tag per CUDA call: exports hold millions");

 public:
  void Add(int64_t global_pid, int64_t correlation, LaunchTag tag);
  void Finish();  // sorts; call once after the last Add
  size_t size() const;

  // Lookups with a memory of the last answer (cheap when asked in correlation order). One
  // Reader per thread: readers of the same CallTags may run at once.
  class Reader {
   public:
    explicit Reader(const CallTags& tags) : tags_(&tags) {}
    LaunchTag Find(int64_t global_pid, int64_t correlation);

   private:
    const CallTags* tags_;
    int64_t last_pid_ = -1;
    const std::vector<CallTags::Entry>* last_ = nullptr;
    size_t hint_ = 0;  // where the last lookup landed: ops come in nearly ascending correlation order
  };
  // One lookup (a binary search); a Reader is faster for many.
  LaunchTag Find(int64_t global_pid, int64_t correlation) const { return Reader(*this).Find(global_pid, correlation); }

 private:
  std::unordered_map<int64_t, std::vector<Entry>> by_process_;
  std::map<std::pair<int64_t, int64_t>, LaunchTag> wide_;  // (process, correlation) outside uint32
};

}  // namespace cpprof::analysis
