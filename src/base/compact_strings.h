// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A set of many similar byte strings in little memory. Each string is split into its numbers
// (runs of decimal digits, stored as varints) and its template (the rest, stored once for all the
// strings that share it). PyTorch's autograd NVTX texts are nearly all distinct and nearly all
// alike ("aten::view, op_id = 12610, sizes = [[256, 1024], [1024, 4]], input_op_ids =
// [(12609,0), (0,-1)]"): about 100 bytes each as text, about 25 here. A 1 GB export shaped
// like a real training capture holds a million of them, so this is what keeps `stats --report
// nvtx_sum` in bounded memory.
//
// The encoding is lossless and canonical: equal strings get equal encodings and Text() gives back
// the exact bytes (a digit run that is not a plain number, "007" or one of 20 digits, stays in
// the template).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cpprof {

class CompactStringSet {
 public:
  // The id of (tag, s); ids are dense: 0, 1, 2, ... in order of first appearance. `tag` is a
  // small number the caller keys by as well (a style, a domain).
  uint32_t Intern(uint32_t tag, std::string_view s);

  // Intern in two steps, for a pipeline that splits on one core and interns on another: Split
  // appends s's split form (its template and numbers, each with its hash) to `out`, touching no
  // set; InternSplit(tag, that form) is Intern(tag, s). Split costs most of Intern's time.
  static void Split(std::string_view s, std::string& out);
  uint32_t InternSplit(uint32_t tag, std::string_view split);

  size_t size() const { return count_; }
  uint32_t Tag(uint32_t id) const;
  // Appends the string of `id` to `out`; returns its tag.
  uint32_t AppendText(uint32_t id, std::string& out) const;
  std::string Text(uint32_t id) const;

  // Reads a set's strings by id in increasing order (a merge, a naming pass): each is found by
  // walking on from the one before, where Tag(id) and AppendText(id) walk from a sampled id.
  class Cursor {
   public:
    explicit Cursor(const CompactStringSet& set) : set_(&set) {}
    uint32_t Tag(uint32_t id) { return set_->TagAt(Key(id)); }
    uint32_t AppendText(uint32_t id, std::string& out) { return set_->AppendTextAt(Key(id), out); }

   private:
    friend class CompactStringSet;
    const uint8_t* Key(uint32_t id);
    const CompactStringSet* set_;
    uint32_t id_ = UINT32_MAX;  // where it stands: none yet
    size_t chunk_ = 0;
    const uint8_t* entry_ = nullptr;  // id_'s arena entry
  };

  // The same as Intern(tag, from's string `id`), without spelling the string out: its numbers
  // are copied as they are, its template looked up once. `templates` caches from's template ids
  // in this set: one per `from`, empty at first.
  uint32_t InternFrom(Cursor& from, uint32_t id, uint32_t tag, std::vector<uint32_t>& templates);

  // Hints the CPU to fetch what AppendText(id) reads: first (key false) where the key is, then
  // (key true, a few steps later) the key itself.
  void Prefetch(uint32_t id, bool key) const;

  // Frees the lookup index: Intern may not be called again (the strings stay readable).
  void FreezeLookup();

 private:
  // A template looked up with the hash Split took of it.
  struct HashedView {
    std::string_view text;
    size_t hash;
  };
  struct TemplateHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
    size_t operator()(const HashedView& t) const { return t.hash; }
  };
  struct TemplateEqual {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
    bool operator()(const HashedView& a, std::string_view b) const { return a.text == b; }
    bool operator()(std::string_view a, const HashedView& b) const { return a == b.text; }
  };
  const uint8_t* At(uint64_t offset) const;
  const uint8_t* Key(uint32_t id) const;  // the encoding: varint length, then the bytes
  // The arena entry of the sampled id at or before `id`, and its chunk (set).
  const uint8_t* SampledEntry(uint32_t id, size_t& chunk) const;
  // From id's arena entry in `chunk` (updated) to the next id's.
  const uint8_t* NextEntry(const uint8_t* entry, size_t& chunk) const;
  uint32_t TagAt(const uint8_t* key) const;
  uint32_t AppendTextAt(const uint8_t* key, std::string& out) const;
  // Stores [id][varint length][key] in the arena; returns its offset (from 1).
  uint64_t Store(uint32_t id, std::string_view key);
  // Calls f(offset, key) for each key in id order (the arena's order).
  template <class F>
  void ForEachStored(F&& f) const;
  void Grow();
  uint32_t TemplateId(HashedView tmpl);  // adds the template when new
  uint32_t InternKey(uint64_t hash);     // the id of key_ (of KeyHash `hash`), added when new

  // Templates: the string with each number replaced by the pair "\0\1" (a literal NUL is "\0\0").
  std::unordered_map<std::string, uint32_t, TemplateHash, TemplateEqual> template_ids_;
  // Per template, the literal text around its numbers: its pieces are piece_text_ up to
  // piece_ends_[template_pieces_[t]], ... (one more piece than numbers).
  std::string piece_text_;
  std::vector<size_t> piece_ends_;
  std::vector<uint32_t> template_pieces_;

  // Keys in an arena of fixed chunks, in id order, each [id as 4 bytes] then its encoding:
  // varint(length) varint(tag) varint(template) varint(number)...
  static constexpr int kChunkBits = 22;
  std::vector<std::unique_ptr<uint8_t[]>> chunks_;
  std::vector<uint32_t> chunk_ends_;             // per chunk: the bytes used
  size_t chunk_used_ = size_t{1} << kChunkBits;  // forces the first chunk
  uint32_t count_ = 0;
  // The arena offset (chunk << kChunkBits | pos, plus 1) of every kSampleEvery-th id; an id
  // between two is found by walking the keys after the one before it: half a byte per key
  // instead of eight (a million keys per GB of export), for a few keys' walk where a key's text
  // is wanted (printing, naming), not where one is looked up (its slot points at it).
  static constexpr uint32_t kSampleEvery = 16;
  std::deque<uint64_t> samples_;
  std::vector<uint64_t> slots_;  // open addressing: 0 empty, else hash bits << 40 | arena offset
  std::string key_;              // scratch
  std::string split_;            // Intern's scratch
};

}  // namespace cpprof
