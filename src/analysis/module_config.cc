// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/module_config.h"

#include <fmt/format.h>
#include <re2/set.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/regex.h"

namespace cpprof::analysis {

namespace {

// Groups are tried in this order, so a Pairformer inside the confidence head counts as
// confidence, an atom encoder inside diffusion as diffusion, and an MSA module inside the trunk
// as MSA. Patterns are RE2 regular expressions searched in "domain:text".
constexpr std::string_view kDefaultConfig = R"json({
  "exclude": [
    "^NCCL:", "^CCCL:", "^(cuBLAS|cuBLASLt|cuDNN|CUDA|NVTX|cuFFT|cuSOLVER|cuSPARSE)[^:]*:",
    {"match": "^PyTorch:", "unless": "^PyTorch:torch\\.optim"},
    ", seq = \\d+", ", op_id = \\d+",
    "^:(aten|autograd|c10d|nccl|record_param_comms|cudaStream|ProfilerStep|Optimizer)",
    "^[^:]*:([A-Za-z_][A-Za-z0-9_]*:)?(iter|iteration|step|warmup|epoch)[ _#-]?\\d+$"
  ],
  "groups": [
    {"name": "optimizer", "match": "optim\\.|Optimizer|optimizer"},
    {"name": "diffusion", "match": "Diffusion|EDMSampler|Sampler\\.sample|AtomAttentionDecoder"},
    {"name": "confidence", "match": "Confidence|[Pp]LDDT|PAE|PDE|Distogram"},
    {"name": "MSA", "match": "MSA|OuterProductMean"},
    {"name": "input embedder", "match": "InputEmbedder|InputFeatureEmbedder|RelativePosition|AtomAttentionEncoder"},
    {"name": "trunk", "match": "[Tt]runk|Pairformer|Triangle|TriMul|Transition|AttentionPairBias|Template"}
  ],
  "optimizer": "optim\\.|Optimizer\\.step|optimizer_step",
  "warmup": "(^|[^A-Za-z])[Ww]arm[-_ ]?up"
})json";

constexpr std::string_view kSearchedIn = "'domain:text' of each NVTX range";

}  // namespace

// Every pattern of a config in one RE2::Set (one pass over a name answers them all), and each
// alone, for the rare name the Set's DFA runs out of memory on.
class CompiledPatterns {
 public:
  enum Role : uint8_t { kExclude, kUnless, kGroup, kOptimizer, kWarmup, kExcludeWork };

  Status Add(const std::string& pattern, Role role, uint32_t index, std::string_view what, const std::string& source,
             ExitCode code) {
    auto re = CompileRegex(pattern, source.empty() ? std::string(what) : fmt::format("{}: {}", source, what), code,
                           kSearchedIn);
    if (!re.ok()) {
      if (role != kExclude || pattern.find("(?!") == std::string::npos) return re.status();
      return Status(code, re.status().message() +
                              " Write an exclude pattern's exceptions as {\"match\": \"^PyTorch:\", "
                              "\"unless\": \"^PyTorch:torch\\\\.optim\"}.");
    }
    std::string error;
    if (set_.Add(pattern, &error) != static_cast<int>(entries_.size())) {  // cannot happen: `re` compiled
      return Status(code, fmt::format("{}: {} '{}' cannot be added to a set ({})", source, what, pattern, error));
    }
    entries_.push_back({role, index, std::move(re).value()});
    return OkStatus();
  }

  Status Finish(size_t excludes) {
    excludes_ = excludes;
    if (!entries_.empty() && !set_.Compile()) {
      return Status(ExitCode::kBadInput, "the module patterns together are too large for RE2 (out of memory)");
    }
    return OkStatus();
  }

  NameClass Classify(std::string_view name) const {
    NameClass c;
    if (entries_.empty()) return c;
    name = name.substr(0, kMaxMatchedBytes);  // as RegexSearch: patterns see a name's first 64 KiB
    std::vector<int> hits;
    RE2::Set::ErrorInfo info{RE2::Set::kNoError};
    if (!set_.Match(name, &hits, &info) && info.kind != RE2::Set::kNoError) {
      hits.clear();  // the DFA gave up: ask each pattern alone
      for (size_t i = 0; i < entries_.size(); ++i) {
        if (RegexSearch(name, *entries_[i].re)) hits.push_back(static_cast<int>(i));
      }
    }
    std::vector<uint8_t> excluded(excludes_, 0);  // per exclude entry: 1 found, 3 its "unless" too
    for (int h : hits) {
      const Entry& e = entries_[static_cast<size_t>(h)];
      switch (e.role) {
        case kExclude:
          excluded[e.index] |= 1;
          break;
        case kUnless:
          excluded[e.index] |= 2;
          break;
        case kGroup:
          c.group_mask |= uint64_t{1} << e.index;
          break;
        case kOptimizer:
          c.optimizer = true;
          break;
        case kWarmup:
          c.warmup = true;
          break;
        case kExcludeWork:
          c.excluded_work = true;
          break;
      }
    }
    c.module = std::none_of(excluded.begin(), excluded.end(), [](uint8_t x) { return x == 1; });
    return c;
  }

 private:
  struct Entry {
    Role role;
    uint32_t index;  // the exclude entry or the group
    std::shared_ptr<const RE2> re;
  };
  RE2::Set set_{RegexOptions(), RE2::UNANCHORED};
  std::vector<Entry> entries_;
  size_t excludes_ = 0;
};

NameClass ModuleConfig::Classify(std::string_view range) const {
  return compiled_ ? compiled_->Classify(range) : NameClass{};
}

Status ModuleConfig::Compile() {
  auto c = std::make_shared<CompiledPatterns>();
  using R = CompiledPatterns::Role;
  for (size_t i = 0; i < exclude.size(); ++i) {
    auto index = static_cast<uint32_t>(i);
    CPPROF_RETURN_IF_ERROR(
        c->Add(exclude[i].pattern, R::kExclude, index, "exclude pattern", source, ExitCode::kBadInput));
    if (!exclude[i].unless.empty()) {
      CPPROF_RETURN_IF_ERROR(
          c->Add(exclude[i].unless, R::kUnless, index, "exclude 'unless' pattern", source, ExitCode::kBadInput));
    }
  }
  for (size_t g = 0; g < groups.size() && g < 64; ++g) {
    CPPROF_RETURN_IF_ERROR(c->Add(groups[g].pattern, R::kGroup, static_cast<uint32_t>(g),
                                  "group '" + groups[g].name + "' match", source, ExitCode::kBadInput));
  }
  if (!optimizer_pattern.empty()) {
    CPPROF_RETURN_IF_ERROR(
        c->Add(optimizer_pattern, R::kOptimizer, 0, "optimizer pattern", source, ExitCode::kBadInput));
  }
  if (!warmup_pattern.empty()) {
    CPPROF_RETURN_IF_ERROR(c->Add(warmup_pattern, R::kWarmup, 0, "warmup pattern", source, ExitCode::kBadInput));
  }
  if (!exclude_work_pattern.empty()) {
    CPPROF_RETURN_IF_ERROR(c->Add(exclude_work_pattern, R::kExcludeWork, 0, "--exclude-ranges", "", ExitCode::kUsage));
  }
  CPPROF_RETURN_IF_ERROR(c->Finish(exclude.size()));
  compiled_ = std::move(c);
  return OkStatus();
}

Status ModuleConfig::SetExcludedWork(const std::string& pattern) {
  // Checked alone first, so that the error names the flag, not the config.
  auto re = CompileRegex(pattern, "--exclude-ranges", ExitCode::kUsage, kSearchedIn);
  if (!re.ok()) return re.status();
  exclude_work_pattern = pattern;
  return Compile();
}

std::string_view DefaultModuleConfigJson() { return kDefaultConfig; }

ModuleConfig DefaultModuleConfig() {
  auto c = ParseModuleConfig(kDefaultConfig, "built-in AF3/Boltz grouping");
  return std::move(c).value();
}

StatusOr<ModuleConfig> ParseModuleConfig(std::string_view text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return Status(ExitCode::kBadInput, fmt::format("{}: not valid JSON ({}). See 'cpprof report "
                                                   "--print-modules-config' for the format.",
                                                   source, e.what()));
  }
  auto bad = [&](const std::string& what) {
    return Status(ExitCode::kBadInput,
                  fmt::format("{}: {}. The format: {{\"exclude\": [regex or {{\"match\": regex, \"unless\": regex}}, "
                              "...], \"groups\": [{{\"name\": \"trunk\", \"match\": regex}}, ...], \"optimizer\": "
                              "regex, \"warmup\": regex}} (RE2 regexes); 'cpprof report "
                              "--print-modules-config' prints the built-in one.",
                              source, what));
  };
  if (!j.is_object()) return bad("the top level must be an object");
  for (const auto& [key, value] : j.items()) {
    if (key != "exclude" && key != "groups" && key != "optimizer" && key != "warmup") {
      return bad(fmt::format("unknown field '{}'", key));
    }
  }
  ModuleConfig c;
  c.source = source;
  if (j.contains("exclude")) {
    const char* format = "'exclude' must be a list of regexes or {\"match\": regex, \"unless\": regex}";
    if (!j["exclude"].is_array()) return bad(format);
    for (const auto& p : j["exclude"]) {
      if (p.is_string()) {
        c.exclude.push_back({p.get<std::string>(), ""});
        continue;
      }
      if (!p.is_object() || !p.contains("match") || !p["match"].is_string()) return bad(format);
      for (const auto& [key, value] : p.items()) {
        if (key != "match" && key != "unless") return bad(fmt::format("unknown field '{}' in an exclude entry", key));
        if (!value.is_string()) return bad(format);
      }
      c.exclude.push_back({p["match"].get<std::string>(), p.value("unless", "")});
    }
  }
  if (j.contains("groups")) {
    if (!j["groups"].is_array()) return bad("'groups' must be a list of {\"name\", \"match\"}");
    for (const auto& g : j["groups"]) {
      if (!g.is_object() || !g.contains("name") || !g.contains("match") || !g["name"].is_string() ||
          !g["match"].is_string()) {
        return bad("each group needs a \"name\" and a \"match\" (strings)");
      }
      std::string name = g["name"].get<std::string>();
      if (name.empty() || name.front() == '[') return bad(fmt::format("group name '{}' is reserved or empty", name));
      for (const auto& other : c.groups) {
        if (other.name == name) return bad(fmt::format("group '{}' is listed twice", name));
      }
      c.groups.push_back({name, g["match"].get<std::string>()});
    }
    if (c.groups.size() > 64) return bad("at most 64 groups");
  }
  if (j.contains("optimizer")) {
    if (!j["optimizer"].is_string()) return bad("'optimizer' must be a regex");
    c.optimizer_pattern = j["optimizer"].get<std::string>();
  }
  if (j.contains("warmup")) {
    if (!j["warmup"].is_string()) return bad("'warmup' must be a regex");
    c.warmup_pattern = j["warmup"].get<std::string>();
  }
  CPPROF_RETURN_IF_ERROR(c.Compile());
  return c;
}

StatusOr<ModuleConfig> LoadModuleConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Status(ExitCode::kBadInput, fmt::format("cannot read the modules config '{}'. 'cpprof report "
                                                   "--print-modules-config > modules.json' writes one to edit.",
                                                   path));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseModuleConfig(ss.str(), path);
}

std::string ShortModuleName(std::string_view range) {
  // The domain is everything before the first ':' (the default domain is empty: ":text").
  size_t colon = range.find(':');
  std::string_view text = colon == std::string_view::npos ? range : range.substr(colon + 1);
  // Only dotted Python names are shortened; free text (spaces, parentheses) stays as it is.
  if (text.find_first_of(" ()[]<>,") != std::string_view::npos) return std::string(text);
  size_t last = text.rfind('.');
  if (last == std::string_view::npos || last == 0) return std::string(text);
  size_t prev = text.rfind('.', last - 1);
  return std::string(prev == std::string_view::npos ? text : text.substr(prev + 1));
}

}  // namespace cpprof::analysis
