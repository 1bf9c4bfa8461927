// Which NVTX ranges are modules of the model, and how modules are grouped (AF3/Boltz-style by
// default: input embedder, MSA, trunk, diffusion, confidence, optimizer). Data, not code: the
// built-in grouping is a JSON document a user can print (`cpprof report --print-modules-config`),
// edit and pass back with `--modules FILE`.
//
//   {"exclude": ["^NCCL:", ...],                 // ranges that are never modules (regex, searched)
//    "groups": [{"name": "diffusion", "match": "Diffusion|EDMSampler"}, ...]}  // priority order
//
// A range is a module unless an "exclude" pattern is found in its name ("domain:text", as nsys
// names it). A GPU op belongs to the innermost module range around the CUDA call that launched
// it; its group is the first group (in the listed order) whose pattern is found in any module
// on that path, and the group's subtree starts at the outermost module the group's pattern
// matches (wrappers above it, such as a CP wrapper's forward, are left out of the tree).
#pragma once

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cpprof::analysis {

struct ModuleGroup {
  std::string name;
  std::string pattern;
  std::regex re;
};

struct ModuleConfig {
  std::string source;  // "built-in AF3/Boltz grouping" or the file's path
  std::vector<std::string> exclude_patterns;
  std::vector<std::regex> exclude;
  std::vector<ModuleGroup> groups;
  std::string optimizer_pattern;  // ranges that mark the optimizer step (phase), modules or not
  std::regex optimizer;
  std::string warmup_pattern;     // ranges that mark warm-up iterations (said in the readout)
  std::regex warmup;
  std::string exclude_work_pattern;  // --exclude-ranges: GPU work launched inside is left out
  std::regex exclude_work;

  bool IsModule(std::string_view range) const;
  bool IsOptimizer(std::string_view range) const;
  bool IsWarmup(std::string_view range) const;
  bool IsExcludedWork(std::string_view range) const;
  // Sets exclude_work (errors: kUsage, naming the option).
  Status SetExcludedWork(const std::string& pattern);
  // Bit g set when groups[g]'s pattern is found in `range` (at most 64 groups).
  uint64_t GroupMask(std::string_view range) const;
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
