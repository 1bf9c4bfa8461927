// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// NVTX GPU projection, nsys's contract (nvtx_gpu_proj_sum): a GPU op belongs to every NVTX range
// on the same thread whose time contains the CUDA API call that launched it; a range's projected
// time runs from the first start to the last end of its ops. Ranges that end on another thread
// take no part. Each range's parent is the tightest range on its thread that contains it (ties:
// the first by start, then longest, then table order); its level is its depth in that tree (-1
// when its ancestors form a cycle: identical ranges contain each other); its children are the
// projected ranges whose parent it is.
//
// NvtxProjector computes this in one sweep per thread, holding only the ranges still open, in
// time linear in the ranges and launches while each thread's open ranges nest, and otherwise in
// O(log n) per range plus the open ranges that hold each launch (see Thread).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

namespace cpprof::analysis {

struct NvtxRange {
  int64_t start = 0, end = 0;
  int64_t tid = 0;  // globalTid
};

// One CUDA API call that launched GPU work, with the span of that work.
struct Launch {
  int64_t tid = 0;  // globalTid of the API call
  int64_t api_start = 0, api_end = 0;
  int64_t op_start = 0, op_end = 0;  // first start and last end of the ops it launched
  int64_t correlation = 0;           // a runtime call and the driver call inside it share one id
};

struct RangeProjection {
  bool projected = false;  // at least one GPU op
  int64_t proj_start = 0, proj_end = 0;
  int64_t launches = 0;  // distinct correlation ids whose ops it holds ("GPU ops" in nsys)
  int level = -1;        // depth in the parent tree; -1 when the tree has a cycle there
  int64_t children = 0;  // projected ranges whose parent this is
};

// A range handed back by NvtxProjector once nothing can change its projection any more.
struct ClosedRange {
  int64_t start = 0, end = 0;
  int64_t tid = 0;
  uint64_t seq = 0;    // as given to Range (table order)
  uint32_t group = 0;  // the caller's tag
  RangeProjection proj;
};

// The streaming projection. Per thread, Range and Launch calls must come in nondecreasing time
// (a range at its start, a launch at its API start; at equal times ranges first): exports list
// NVTX ranges and API calls by start. Threads may interleave freely. A range is handed to the
// sink once the sweep on its thread has passed its end (or at Finish), so only open ranges are
// held: memory follows the nesting depth, not the number of ranges.
class NvtxProjector {
 public:
  using Sink = std::function<void(const ClosedRange&)>;
  explicit NvtxProjector(Sink sink) : sink_(std::move(sink)) {}

  // `seq` orders ranges of one start and end (and is handed back): the table order.
  void Range(int64_t tid, int64_t start, int64_t end, uint32_t group, uint64_t seq);
  // A launch of the API call [api_start, api_end] on `tid` whose ops ran over [op_start, op_end].
  void Launch(int64_t tid, int64_t api_start, int64_t api_end, int64_t correlation, int64_t op_start, int64_t op_end);
  // False once a call came out of time order on its thread (the results are then not valid).
  bool in_order() const { return in_order_; }
  // Closes every range still open.
  void Finish();
  size_t max_open() const { return max_open_; }

 private:
  struct Open {
    int64_t start, end;
    int64_t tid;
    uint64_t seq;
    uint32_t group;
    int32_t parent;        // slot, -1 none
    int32_t level;         // -1: in a cycle
    bool has_twin;         // an identical range later in sort order became its parent
    RangeProjection proj;  // nested mode: its own launches and those of its closed descendants
    int64_t first_corr, last_corr;
    uint32_t run_first;   // nested mode: the first open range identical to it (itself if none)
    uint64_t order = 0;   // opening order on its thread (= sort order)
    bool closed = false;  // general mode: closed, its slot still listed in its thread's open
  };
  // General mode: (end, opening order) -> slot.
  using ByEnd = std::map<std::pair<int64_t, uint64_t>, uint32_t>;
  struct Pending {
    int64_t end;
    uint64_t seq;
    uint32_t group;
  };
  // A thread's open ranges are nested while each contains the next in sort order (push/pop
  // ranges always are). Then a range's parent is the innermost open one, a launch is folded into
  // the innermost only and a closing range folds its projection into the one around it: O(1)
  // per call, however deep the nesting. A range or launch that breaks the nesting turns the
  // thread to the general mode (projections kept whole, every open range updated per launch)
  // until its open ranges are all closed. There a range's parent is the shortest open range that
  // ends no earlier (all open ones started no later), found in O(log n) in `tightest`: the open
  // ranges that can still be someone's tightest parent, by end, their lengths rising with their
  // ends (one shorter or as long and earlier, ending no earlier, outlives and beats any other
  // for good); `closing` yields the ranges in end order; closed slots leave `open` in batches.
  struct Thread {
    std::vector<uint32_t> open;  // slots in sort order (start, end descending, seq)
    bool nested = true;
    std::vector<Pending> pending;  // ranges starting at pending_start, not opened yet
    int64_t pending_start = 0;
    int64_t last_time = INT64_MIN;
    uint64_t opened = 0;  // ranges opened so far (their `order`)
    // General mode only:
    ByEnd tightest;
    ByEnd closing;
    size_t stale = 0;  // closed slots still in `open`
  };

  Thread& ThreadOf(int64_t tid);
  void Advance(Thread& t, int64_t tid, int64_t time, bool is_range);
  void FlushPending(Thread& t, int64_t tid);
  void OpenOne(Thread& t, int64_t tid, int64_t start, const Pending& p);
  void CloseBefore(Thread& t, int64_t time);  // closes the ranges that end before `time`
  void CloseAll(Thread& t);
  void CloseBatch(Thread& t, const std::vector<uint32_t>& closing, bool free_slots);
  void ToGeneral(Thread& t);  // each open range's projection made whole
  void AddTightest(Thread& t, uint32_t slot);
  void DropStale(Thread& t);  // closed slots out of `open`, back to the free list
  static void Fold(RangeProjection& into, int64_t& into_first, int64_t& into_last, const RangeProjection& later,
                   int64_t later_first, int64_t later_last);

  Sink sink_;
  std::vector<Open> slots_;
  std::vector<uint32_t> free_;
  std::unordered_map<int64_t, Thread> threads_;
  int64_t last_tid_ = 0;
  Thread* last_thread_ = nullptr;
  bool in_order_ = true;
  size_t open_count_ = 0, max_open_ = 0;
  std::vector<uint32_t> closing_;  // scratch
};

// Index i of the result describes ranges[i]: the projector fed with sorted copies (for tests and
// small inputs).
std::vector<RangeProjection> ProjectRanges(const std::vector<NvtxRange>& ranges, const std::vector<Launch>& launches);

// Range indices per thread, by start then longest first (containers before what they contain).
std::map<int64_t, std::vector<size_t>> RangesByThread(const std::vector<NvtxRange>& ranges);

// The tightest enclosing range on the same thread, per range (-1: none). A plain reference
// implementation of the parent rule, for tests.
std::vector<int64_t> NvtxParents(const std::vector<NvtxRange>& ranges);

// The span of the GPU ops of each launch, by (process, correlation id), built from the op tables
// read in any order: 16 bytes per launch.
class LaunchSpans {
 public:
  // `expected` (an upper bound on Add calls) lets the storage be allocated once.
  void Reserve(size_t expected) { entries_.reserve(expected); }
  void Add(int64_t global_pid, int64_t correlation, int64_t start, int64_t end);
  void Finish();  // sorts and merges the ops of one launch; call once after the last Add
  // The span of the ops of (global_pid, correlation); false when it launched none.
  bool Find(int64_t global_pid, int64_t correlation, int64_t* start, int64_t* end);
  size_t size() const { return entries_.size() + wide_.size(); }

 private:
  // 16 bytes: hi = process index (16 bits) | correlation (32) | length bits 0..15;
  // lo = start (48 bits, signed) | length bits 16..31. Sorted by hi: by launch.
  struct Packed {
    uint64_t hi;
    int64_t lo;
  };
  struct Span {
    int64_t start, end;
  };
  uint32_t ProcessIndex(int64_t global_pid);
  std::vector<Packed> entries_;
  std::map<std::pair<int64_t, int64_t>, Span> wide_;  // what does not pack
  std::unordered_map<int64_t, uint32_t> process_index_;
  int64_t last_pid_ = -1;
  uint32_t last_index_ = 0;
  size_t hint_ = 0;
};

}  // namespace cpprof::analysis
