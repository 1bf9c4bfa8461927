// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Range names interned as they are first seen (name -> dense id), with what a classifier says
// about each, computed once per distinct name. A capture repeats a few thousand names over
// millions of ranges (a real 4-rank export: 103 k NVTX ranges, 45 k distinct names), so matching
// patterns per event rather than per name is what made module attribution slow.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cpprof::analysis {

template <typename Info>
class NameCache {
 public:
  using Classifier = std::function<Info(const std::string& name)>;
  explicit NameCache(Classifier classify) : classify_(std::move(classify)) {}
  NameCache(const NameCache&) = delete;  // the map's keys view this object's strings
  NameCache& operator=(const NameCache&) = delete;

  // The id of `name` (0, 1, 2, ... in order of first sight); classifies it when it is new.
  uint32_t Intern(std::string_view name) {
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    auto id = static_cast<uint32_t>(names_.size());
    names_.emplace_back(name);
    infos_.push_back(classify_(names_.back()));
    ids_.emplace(std::string_view(names_.back()), id);
    return id;
  }
  const std::string& name(uint32_t id) const { return names_[id]; }
  const Info& info(uint32_t id) const { return infos_[id]; }
  size_t size() const { return names_.size(); }  // distinct names seen = times the classifier ran

 private:
  Classifier classify_;
  // One copy of each name: the map's keys view the deque's strings, which never move (a deque
  // does not relocate its elements when it grows; a vector would, short strings' characters too).
  std::deque<std::string> names_;
  std::unordered_map<std::string_view, uint32_t> ids_;
  std::vector<Info> infos_;
};

}  // namespace cpprof::analysis
