// Range names interned as they are first seen (name -> dense id), with what a classifier says
// about each, computed once per distinct name. A capture repeats a few thousand names over
// millions of ranges (a real 4-rank export: 103 k NVTX ranges, 45 k distinct names), so matching
// patterns per event rather than per name is what made module attribution slow.
#pragma once

#include <cstdint>
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

  // The id of `name` (0, 1, 2, ... in order of first sight); classifies it when it is new.
  uint32_t Intern(std::string_view name) {
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    auto id = static_cast<uint32_t>(names_.size());
    names_.emplace_back(name);
    infos_.push_back(classify_(names_.back()));
    ids_.emplace(names_.back(), id);
    return id;
  }
  const std::string& name(uint32_t id) const { return names_[id]; }
  const Info& info(uint32_t id) const { return infos_[id]; }
  size_t size() const { return names_.size(); }  // distinct names seen = times the classifier ran

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  Classifier classify_;
  // std::string elements move when the vector grows, and a short string's characters move with
  // it, so the map owns its keys (a second copy of each distinct name, not one per range).
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> ids_;
  std::vector<std::string> names_;
  std::vector<Info> infos_;
};

}  // namespace cpprof::analysis
