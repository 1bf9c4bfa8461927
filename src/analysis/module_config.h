// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Which NVTX ranges are modules of the model, and how modules are grouped (AF3/Boltz-style by
// default: input embedder, MSA, trunk, diffusion, confidence, optimizer). Data, not code: the
// built-in grouping is a JSON document a user can print (`cpprof report --print-modules-config`),
// edit and pass back with `--modules FILE`.
//
//   {"exclude": ["^NCCL:", ...,                  // ranges that are never modules (regex, searched)
//                {"match": "^PyTorch:", "unless": "^PyTorch:torch\\.optim"}],  // with an exception
//    "groups": [{"name": "diffusion", "match": "Diffusion|EDMSampler"}, ...]}  // priority order
//
// Patterns are RE2 regular expressions (base/regex.h: no lookarounds, so an exclude pattern's
// exceptions are its "unless" pattern) searched in the range's name ("domain:text", as nsys names
// it). A range is a module unless an "exclude" pattern is found in its name (and that entry's
// "unless" pattern is not). All patterns are compiled into one RE2::Set, so one pass over a name
// answers every question below (Classify); callers classify each distinct name once. A GPU op belongs to the innermost
// module range around the CUDA call that launched it; its group is the first group (in the listed order) whose pattern
// is found in any module on that path, and the group's subtree starts at the outermost module the group's pattern
// matches (wrappers above it, such as a CP wrapper's forward, are left out of the tree).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cpprof::analysis {

struct ModuleGroup {
  std::string name;
  std::string pattern;
};

struct ExcludePattern {
  std::string pattern;
  std::string unless;  // "": no exception
};

// What the config says about one range name.
struct NameClass {
  bool module = true;
  bool optimizer = false;
  bool warmup = false;
  bool excluded_work = false;
  uint64_t group_mask = 0;  // bit g set when groups[g]'s pattern is found (at most 64 groups)
  bool operator==(const NameClass&) const = default;
};

class CompiledPatterns;  // module_config.cc: the RE2::Set and, as a fallback, one RE2 per pattern

struct ModuleConfig {
  std::string source;  // "built-in AF3/Boltz grouping" or the file's path
  std::vector<ExcludePattern> exclude;
  std::vector<ModuleGroup> groups;
  std::string optimizer_pattern;     // ranges that mark the optimizer step (phase), modules or not
  std::string warmup_pattern;        // ranges that mark warm-up iterations (said in the readout)
  std::string exclude_work_pattern;  // --exclude-ranges: GPU work launched inside is left out

  // One pass over `range` (an RE2::Set of every pattern above).
  NameClass Classify(std::string_view range) const;
  bool IsModule(std::string_view range) const { return Classify(range).module; }
  bool IsOptimizer(std::string_view range) const { return Classify(range).optimizer; }
  bool IsWarmup(std::string_view range) const { return Classify(range).warmup; }
  bool IsExcludedWork(std::string_view range) const { return Classify(range).excluded_work; }
  uint64_t GroupMask(std::string_view range) const { return Classify(range).group_mask; }
  // Sets exclude_work_pattern (errors: kUsage, naming --exclude-ranges).
  Status SetExcludedWork(const std::string& pattern);
  // Compiles the patterns above (after changing them by hand; ParseModuleConfig and
  // SetExcludedWork call it). Errors (kBadInput) name `source` and the bad pattern.
  Status Compile();

 private:
  std::shared_ptr<const CompiledPatterns> compiled_;  // shared: configs stay copyable
};

// The built-in grouping, as JSON text (what --print-modules-config prints).
std::string_view DefaultModuleConfigJson();
ModuleConfig DefaultModuleConfig();
// Parses a config (errors name the file and the bad field or pattern: kBadInput).
StatusOr<ModuleConfig> ParseModuleConfig(std::string_view json, const std::string& source);
StatusOr<ModuleConfig> LoadModuleConfig(const std::string& path);

// "cpfold:cpfold.model.pairformer.TriangleMultiplicationOutgoing.forward" ->
// "TriangleMultiplicationOutgoing.forward": the domain is dropped and, for dotted Python names,
// the last two components are kept (Class.method or module.function).
std::string ShortModuleName(std::string_view range);

}  // namespace cpprof::analysis
