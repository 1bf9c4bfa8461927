// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Many append-only lists of int64 values, each read back in the order it was appended, in about
// 4 bytes a value: values are stored as 32-bit words (a value outside [0, 2^32 - 2] goes to a
// side table), the first value of a list inline, the rest in blocks of growing size in one
// arena (the last block of a list past its first in a side table). Made for per-group durations
// of nsys-style summaries, where most groups hold a few values (PyTorch's per-op NVTX texts
// repeat once per rank) and a few hold millions.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

namespace cpprof {

class ValueLists {
 public:
  // `first_block`: the values a list's first block holds (after its inline first value): 3 fits
  // lists of about 4 values, 7 lists of pairs.
  ValueLists() = default;
  explicit ValueLists(uint32_t first_block) : first_block_(first_block) {}

  // A new empty list; ids are dense from 0.
  uint32_t NewList();
  size_t size() const { return lists_.size(); }
  void Append(uint32_t list, int64_t v);
  uint32_t Count(uint32_t list) const { return lists_[list].count; }
  // Calls f(int64_t) for each value of `list`, in the order appended.
  template <class F>
  void ForEach(uint32_t list, F&& f) const;
  // Hints the CPU to fetch what ForEach(list) reads: first (blocks false) the list, then (blocks
  // true, a few steps later) its first block.
  void Prefetch(uint32_t list, bool blocks) const {
    if (!blocks) {
      __builtin_prefetch(&lists_[list]);
    } else if (lists_[list].head) {
      __builtin_prefetch(Word(lists_[list].head));
    }
  }

 private:
  static constexpr uint32_t kEscaped = 0xFFFFFFFF;
  static constexpr int kChunkBits = 20;  // words per arena chunk: 4 MiB
  static constexpr uint32_t kMaxBlock = 4096;
  struct List {  // 12 bytes: millions of lists, most within their first block
    uint32_t count = 0;
    uint32_t head = 0;   // arena address of the first block (0: none)
    uint32_t first = 0;  // the first value
  };
  // Where value number n (0-based, among those in blocks) lands: its position in its block and
  // whether it opens a new block.
  uint32_t PosInBlock(uint32_t n, uint32_t* cap) const;
  uint32_t* Word(uint32_t addr) { return chunks_[addr >> kChunkBits].get() + (addr & ((1u << kChunkBits) - 1)); }
  const uint32_t* Word(uint32_t addr) const {
    return chunks_[addr >> kChunkBits].get() + (addr & ((1u << kChunkBits) - 1));
  }
  uint32_t NewBlock(uint32_t cap);
  uint32_t Encode(int64_t v, uint64_t escape_key);
  int64_t Decode(uint32_t w, uint64_t escape_key) const;

  std::deque<List> lists_;  // a deque: no copy and no slack as it grows
  uint32_t first_block_ = 3;
  std::vector<std::unique_ptr<uint32_t[]>> chunks_;
  uint32_t used_ = 1u << kChunkBits;              // words used in the last chunk (full: none yet)
  std::unordered_map<uint64_t, int64_t> big_;     // escaped values by word address (inline: list | 1 << 63)
  std::unordered_map<uint32_t, uint32_t> tails_;  // the last block of each list past its first block
};

template <class F>
void ValueLists::ForEach(uint32_t list, F&& f) const {
  const List& l = lists_[list];
  if (l.count == 0) return;
  f(Decode(l.first, uint64_t{1} << 63 | list));
  uint32_t left = l.count - 1, block = l.head;
  for (uint32_t k = 0; left > 0; ++k) {
    uint32_t cap = k == 0 ? first_block_ : std::min<uint32_t>(8u << std::min<uint32_t>(k - 1, 20), kMaxBlock);
    const uint32_t* w = Word(block);
    uint32_t n = std::min(left, cap);
    for (uint32_t i = 0; i < n; ++i) f(Decode(w[1 + i], block + 1 + i));
    left -= n;
    block = w[0];
  }
}

}  // namespace cpprof
