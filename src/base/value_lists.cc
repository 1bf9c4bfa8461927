// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "base/value_lists.h"

#include <algorithm>

namespace cpprof {

uint32_t ValueLists::NewList() {
  lists_.emplace_back();
  return static_cast<uint32_t>(lists_.size() - 1);
}

uint32_t ValueLists::PosInBlock(uint32_t n, uint32_t* cap) const {
  *cap = first_block_;
  if (n < first_block_) return n;
  n -= first_block_;
  for (uint32_t c = 8; c < kMaxBlock; c *= 2) {
    *cap = c;
    if (n < c) return n;
    n -= c;
  }
  *cap = kMaxBlock;
  return n % kMaxBlock;
}

uint32_t ValueLists::NewBlock(uint32_t cap) {
  const uint32_t words = cap + 1;  // the next block's address, then the values
  if (used_ + words > (1u << kChunkBits)) {
    chunks_.emplace_back(new uint32_t[1u << kChunkBits]);
    used_ = chunks_.size() == 1 ? 1 : 0;  // address 0 means "no block"
  }
  uint32_t addr = static_cast<uint32_t>(chunks_.size() - 1) << kChunkBits | used_;
  used_ += words;
  *Word(addr) = 0;
  return addr;
}

uint32_t ValueLists::Encode(int64_t v, uint64_t escape_key) {
  if (v >= 0 && v < kEscaped) return static_cast<uint32_t>(v);
  big_[escape_key] = v;
  return kEscaped;
}

int64_t ValueLists::Decode(uint32_t w, uint64_t escape_key) const {
  return w == kEscaped ? big_.at(escape_key) : static_cast<int64_t>(w);
}

void ValueLists::Append(uint32_t list, int64_t v) {
  List& l = lists_[list];
  if (l.count == 0) {
    l.first = Encode(v, uint64_t{1} << 63 | list);
    l.count = 1;
    return;
  }
  uint32_t cap;
  const uint32_t n = l.count - 1;  // the value's place among those in blocks
  const uint32_t pos = PosInBlock(n, &cap);
  uint32_t tail;
  if (pos == 0 && n == 0) {
    tail = l.head = NewBlock(cap);
  } else if (pos == 0) {
    tail = NewBlock(cap);
    uint32_t& last = n == first_block_ ? l.head : tails_[list];  // the list's last block so far
    *Word(last) = tail;
    tails_[list] = tail;
  } else {
    tail = n < first_block_ ? l.head : tails_.at(list);
  }
  uint32_t addr = tail + 1 + pos;
  *Word(addr) = Encode(v, addr);
  ++l.count;
}

}  // namespace cpprof
