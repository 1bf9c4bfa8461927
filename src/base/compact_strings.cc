// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "base/compact_strings.h"

#include <algorithm>
#include <cstring>

namespace cpprof {

namespace {

constexpr int kOffsetBits = 40;
constexpr uint64_t kOffsetMask = (uint64_t{1} << kOffsetBits) - 1;

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

uint64_t GetVarint(const uint8_t*& p) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A run of digits is stored as a number when it reads back the same: "0", or no leading zero
// and at most 19 digits (below 10^19, which fits 64 bits).
bool IsPlainNumber(std::string_view run) { return run.size() <= 19 && (run.size() == 1 || run[0] != '0'); }

uint64_t Hash(std::string_view bytes) { return std::hash<std::string_view>()(bytes); }

// A key's hash: its tag and template id mixed into its numbers' hash (Split takes that on
// another core; the template's hash picks the template id), then finished as murmur3's fmix64
// so that every bit counts for the slot and the fingerprint.
uint64_t KeyHash(uint64_t tag, uint64_t tmpl, uint64_t numbers_hash) {
  uint64_t h = numbers_hash ^ ((tag << 32 | tmpl) * 0x9e3779b97f4a7c15ULL);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

// The hash bits kept in a slot (the top 24); the low ones pick the slot.
uint64_t Fingerprint(uint64_t h) { return h >> kOffsetBits; }

// The hash of a stored key: varint(tag) varint(template id) numbers.
uint64_t StoredKeyHash(std::string_view key) {
  const auto* p = reinterpret_cast<const uint8_t*>(key.data());
  const uint64_t tag = GetVarint(p);
  const uint64_t tmpl = GetVarint(p);
  const auto head = static_cast<size_t>(p - reinterpret_cast<const uint8_t*>(key.data()));
  return KeyHash(tag, tmpl, Hash(key.substr(head)));
}

}  // namespace

// Split's form: [template hash, 8 bytes][numbers hash, 8][template length, 4][template][numbers].
constexpr size_t kSplitHead = 2 * sizeof(uint64_t) + sizeof(uint32_t);

void CompactStringSet::Split(std::string_view s, std::string& out) {
  // Written through raw pointers into room that fits any split of `s`: the template takes at
  // most two bytes per byte of `s` (a digit run becomes "\0\1", a NUL "\0\0"), the numbers at
  // most one (a varint of a run of d digits takes at most d bytes). The numbers are written
  // past the template's room and moved down after it.
  const size_t at = out.size();
  out.resize(at + kSplitHead + 3 * s.size());
  char* const tmpl = out.data() + at + kSplitHead;
  char* const nums = tmpl + 2 * s.size();
  char* t = tmpl;
  char* n = nums;
  const char* p = s.data();
  const char* const end = p + s.size();
  while (p < end) {
    const char c = *p;
    if (!IsDigit(c)) {
      *t++ = c;
      if (c == '\0') *t++ = '\0';
      ++p;
      continue;
    }
    const char* q = p;
    while (q < end && IsDigit(*q)) ++q;
    const std::string_view run(p, static_cast<size_t>(q - p));
    if (IsPlainNumber(run)) {
      uint64_t v = 0;
      for (char d : run) v = v * 10 + static_cast<uint64_t>(d - '0');
      *t++ = '\0';
      *t++ = '\1';
      while (v >= 0x80) {
        *n++ = static_cast<char>((v & 0x7f) | 0x80);
        v >>= 7;
      }
      *n++ = static_cast<char>(v);
    } else {
      std::memcpy(t, run.data(), run.size());
      t += run.size();
    }
    p = q;
  }
  const auto tmpl_len = static_cast<uint32_t>(t - tmpl);
  const auto nums_len = static_cast<size_t>(n - nums);
  const uint64_t tmpl_hash = Hash(std::string_view(tmpl, tmpl_len));
  const uint64_t nums_hash = Hash(std::string_view(nums, nums_len));
  std::memmove(t, nums, nums_len);
  char* head = out.data() + at;
  std::memcpy(head, &tmpl_hash, sizeof tmpl_hash);
  std::memcpy(head + sizeof tmpl_hash, &nums_hash, sizeof nums_hash);
  std::memcpy(head + 2 * sizeof(uint64_t), &tmpl_len, sizeof tmpl_len);
  out.resize(at + kSplitHead + tmpl_len + nums_len);
}

uint32_t CompactStringSet::InternSplit(uint32_t tag, std::string_view split) {
  uint64_t tmpl_hash, nums_hash;
  uint32_t tmpl_len;
  std::memcpy(&tmpl_hash, split.data(), sizeof tmpl_hash);
  std::memcpy(&nums_hash, split.data() + sizeof tmpl_hash, sizeof nums_hash);
  std::memcpy(&tmpl_len, split.data() + 2 * sizeof(uint64_t), sizeof tmpl_len);
  const uint32_t tid = TemplateId({split.substr(kSplitHead, tmpl_len), static_cast<size_t>(tmpl_hash)});
  key_.clear();
  PutVarint(key_, tag);
  PutVarint(key_, tid);
  key_.append(split.substr(kSplitHead + tmpl_len));
  return InternKey(KeyHash(tag, tid, nums_hash));
}

uint32_t CompactStringSet::Intern(uint32_t tag, std::string_view s) {
  split_.clear();
  Split(s, split_);
  return InternSplit(tag, split_);
}

uint32_t CompactStringSet::InternFrom(Cursor& cursor, uint32_t id, uint32_t tag, std::vector<uint32_t>& templates) {
  const CompactStringSet& from = *cursor.set_;
  const uint8_t* p = cursor.Key(id);
  const uint64_t len = GetVarint(p);
  const uint8_t* end = p + len;
  GetVarint(p);  // its tag
  const auto t = static_cast<size_t>(GetVarint(p));
  if (templates.size() <= t) templates.resize(from.template_pieces_.size(), UINT32_MAX);
  uint32_t& mine = templates[t];
  if (mine == UINT32_MAX) {
    // The template as Intern wrote it: the pieces, a literal NUL as "\0\0", "\0\1" between.
    const size_t first = from.template_pieces_[t];
    const size_t last =
        t + 1 < from.template_pieces_.size() ? from.template_pieces_[t + 1] - 1 : from.piece_ends_.size() - 1;
    std::string tmpl;
    size_t begin = first == 0 ? 0 : from.piece_ends_[first - 1];
    for (size_t k = first;; ++k) {
      for (size_t c = begin; c < from.piece_ends_[k]; ++c) {
        tmpl += from.piece_text_[c];
        if (from.piece_text_[c] == '\0') tmpl += '\0';
      }
      begin = from.piece_ends_[k];
      if (k == last) break;
      tmpl.append("\0\1", 2);
    }
    mine = TemplateId({tmpl, static_cast<size_t>(Hash(tmpl))});
  }
  const std::string_view numbers(reinterpret_cast<const char*>(p), static_cast<size_t>(end - p));
  key_.clear();
  PutVarint(key_, tag);
  PutVarint(key_, mine);
  key_.append(numbers);  // as they are
  return InternKey(KeyHash(tag, mine, Hash(numbers)));
}

uint32_t CompactStringSet::TemplateId(HashedView tmpl) {
  auto it = template_ids_.find(tmpl);
  if (it == template_ids_.end()) {
    it = template_ids_.emplace(std::string(tmpl.text), static_cast<uint32_t>(template_pieces_.size())).first;
    // The literal pieces around the numbers, unescaped, for AppendText.
    template_pieces_.push_back(static_cast<uint32_t>(piece_ends_.size()));
    const std::string& t = it->first;
    for (size_t k = 0; k < t.size(); ++k) {
      if (t[k] != '\0') {
        piece_text_ += t[k];
      } else if (t[++k] == '\1') {
        piece_ends_.push_back(piece_text_.size());
      } else {
        piece_text_ += '\0';
      }
    }
    piece_ends_.push_back(piece_text_.size());
  }
  return it->second;
}

uint32_t CompactStringSet::InternKey(uint64_t h) {
  if (slots_.empty() || (size_t{count_} + 1) * 10 > slots_.size() * 7) Grow();
  // A slot holds the key's arena offset and hash bits: a probe touches the slot, then the key.
  const uint64_t fp = Fingerprint(h);
  const size_t mask = slots_.size() - 1;
  for (size_t slot = h & mask;; slot = (slot + 1) & mask) {
    uint64_t v = slots_[slot];
    if (v == 0) {
      const uint32_t id = count_++;
      const uint64_t offset = Store(id, key_);
      if (id % kSampleEvery == 0) samples_.push_back(offset);
      slots_[slot] = fp << kOffsetBits | offset;
      return id;
    }
    if ((v >> kOffsetBits) != fp) continue;
    const uint8_t* p = At(v & kOffsetMask);
    uint32_t id;
    std::memcpy(&id, p, sizeof id);
    p += sizeof id;
    uint64_t len = GetVarint(p);
    if (len == key_.size() && std::memcmp(p, key_.data(), len) == 0) return id;
  }
}

uint64_t CompactStringSet::Store(uint32_t id, std::string_view key) {
  std::string head(sizeof id, '\0');
  std::memcpy(head.data(), &id, sizeof id);
  PutVarint(head, key.size());
  const size_t need = head.size() + key.size();
  const size_t chunk_size = size_t{1} << kChunkBits;
  size_t pos = chunk_used_;
  if (chunk_used_ + need > chunk_size) {
    // A key longer than a chunk gets a chunk of its own, full at once.
    chunks_.emplace_back(new uint8_t[std::max(need, chunk_size)]);
    chunk_ends_.push_back(0);
    pos = 0;
  }
  uint8_t* p = chunks_.back().get() + pos;
  std::memcpy(p, head.data(), head.size());
  std::memcpy(p + head.size(), key.data(), key.size());
  chunk_used_ = std::min(pos + need, chunk_size);
  chunk_ends_.back() = static_cast<uint32_t>(pos + need);
  // Offsets start at 1 (a slot of 0 is empty): chunk 0's offsets are shifted by one.
  return ((chunks_.size() - 1) << kChunkBits | pos) + 1;
}

const uint8_t* CompactStringSet::At(uint64_t offset) const {
  offset -= 1;
  return chunks_[offset >> kChunkBits].get() + (offset & ((uint64_t{1} << kChunkBits) - 1));
}

const uint8_t* CompactStringSet::NextEntry(const uint8_t* entry, size_t& chunk) const {
  const uint8_t* p = entry + sizeof(uint32_t);
  const uint64_t len = GetVarint(p);
  p += len;
  // A chunk's keys end at chunk_ends_; the next key is at the start of the next chunk.
  if (p == chunks_[chunk].get() + chunk_ends_[chunk]) p = chunks_[++chunk].get();
  return p;
}

const uint8_t* CompactStringSet::SampledEntry(uint32_t id, size_t& chunk) const {
  const uint64_t offset = samples_[id / kSampleEvery];
  chunk = (offset - 1) >> kChunkBits;
  return At(offset);
}

const uint8_t* CompactStringSet::Key(uint32_t id) const {
  size_t chunk;
  const uint8_t* p = SampledEntry(id, chunk);
  for (uint32_t left = id % kSampleEvery; left > 0; --left) p = NextEntry(p, chunk);
  return p + sizeof(uint32_t);
}

const uint8_t* CompactStringSet::Cursor::Key(uint32_t id) {
  if (id_ == UINT32_MAX || id < id_ || id - id_ > kSampleEvery) {
    entry_ = set_->SampledEntry(id, chunk_);
    id_ = id / kSampleEvery * kSampleEvery;
  }
  for (; id_ < id; ++id_) entry_ = set_->NextEntry(entry_, chunk_);
  return entry_ + sizeof(uint32_t);
}

template <class F>
void CompactStringSet::ForEachStored(F&& f) const {
  for (size_t chunk = 0; chunk < chunks_.size(); ++chunk) {
    const uint8_t* base = chunks_[chunk].get();
    for (const uint8_t* p = base; p != base + chunk_ends_[chunk];) {
      const uint64_t offset = (uint64_t{chunk} << kChunkBits | static_cast<uint64_t>(p - base)) + 1;
      p += sizeof(uint32_t);
      const uint64_t len = GetVarint(p);
      f(offset, std::string_view(reinterpret_cast<const char*>(p), len));
      p += len;
    }
  }
}

void CompactStringSet::Grow() {
  std::vector<uint64_t> slots(slots_.empty() ? 1024 : slots_.size() * 2, 0);
  const size_t mask = slots.size() - 1;
  ForEachStored([&](uint64_t offset, std::string_view key) {
    const uint64_t h = StoredKeyHash(key);
    size_t slot = h & mask;
    while (slots[slot] != 0) slot = (slot + 1) & mask;
    slots[slot] = Fingerprint(h) << kOffsetBits | offset;
  });
  slots_ = std::move(slots);
}

void CompactStringSet::Prefetch(uint32_t id, bool key) const {
  if (!key) {
    __builtin_prefetch(&samples_[id / kSampleEvery]);
    return;
  }
  // The walk from the sample reads on from there: its first lines.
  const uint8_t* p = At(samples_[id / kSampleEvery]);
  for (int line = 0; line < 4; ++line) __builtin_prefetch(p + 64 * line);
}

void CompactStringSet::FreezeLookup() {
  slots_ = {};
  slots_.shrink_to_fit();
}

uint32_t CompactStringSet::Tag(uint32_t id) const { return TagAt(Key(id)); }

uint32_t CompactStringSet::AppendText(uint32_t id, std::string& out) const { return AppendTextAt(Key(id), out); }

uint32_t CompactStringSet::TagAt(const uint8_t* p) const {
  GetVarint(p);
  return static_cast<uint32_t>(GetVarint(p));
}

uint32_t CompactStringSet::AppendTextAt(const uint8_t* p, std::string& out) const {
  GetVarint(p);  // length
  const auto tag = static_cast<uint32_t>(GetVarint(p));
  // Template t's pieces end at piece_ends_[template_pieces_[t] ...], the last where the next
  // template's begin; between two pieces, one number.
  const auto t = static_cast<size_t>(GetVarint(p));
  const size_t first = template_pieces_[t];
  const size_t last = t + 1 < template_pieces_.size() ? template_pieces_[t + 1] - 1 : piece_ends_.size() - 1;
  size_t begin = first == 0 ? 0 : piece_ends_[first - 1];
  for (size_t k = first;; ++k) {
    out.append(piece_text_, begin, piece_ends_[k] - begin);
    begin = piece_ends_[k];
    if (k == last) break;
    char digits[24];
    char* end = digits + sizeof digits;
    char* d = end;
    uint64_t v = GetVarint(p);
    do {
      *--d = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    out.append(d, static_cast<size_t>(end - d));
  }
  return tag;
}

std::string CompactStringSet::Text(uint32_t id) const {
  std::string s;
  AppendText(id, s);
  return s;
}

}  // namespace cpprof
