#include "analysis/module_config.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace cpprof::analysis {

namespace {

// Groups are tried in this order, so a Pairformer inside the confidence head counts as
// confidence, an atom encoder inside diffusion as diffusion, and an MSA module inside the trunk
// as MSA. Patterns are ECMAScript regular expressions searched in "domain:text".
constexpr std::string_view kDefaultConfig = R"json({
  "exclude": [
    "^NCCL:", "^CCCL:", "^(cuBLAS|cuBLASLt|cuDNN|CUDA|NVTX|cuFFT|cuSOLVER|cuSPARSE)[^:]*:",
    "^PyTorch:(?!torch\\.optim)",
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

StatusOr<std::regex> Compile(const std::string& pattern, const std::string& where, const std::string& source) {
  try {
    return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return Status(ExitCode::kBadInput,
                  fmt::format("{}: {} '{}' is not a valid regular expression ({}). Patterns are "
                              "ECMAScript regexes searched in 'domain:text'.",
                              source, where, pattern, e.what()));
  }
}

}  // namespace

bool ModuleConfig::IsModule(std::string_view range) const {
  for (const auto& re : exclude) {
    if (std::regex_search(range.begin(), range.end(), re)) return false;
  }
  return true;
}

bool ModuleConfig::IsOptimizer(std::string_view range) const {
  return !optimizer_pattern.empty() && std::regex_search(range.begin(), range.end(), optimizer);
}

bool ModuleConfig::IsWarmup(std::string_view range) const {
  return !warmup_pattern.empty() && std::regex_search(range.begin(), range.end(), warmup);
}

bool ModuleConfig::IsExcludedWork(std::string_view range) const {
  return !exclude_work_pattern.empty() && std::regex_search(range.begin(), range.end(), exclude_work);
}

Status ModuleConfig::SetExcludedWork(const std::string& pattern) {
  auto re = Compile(pattern, "--exclude-ranges", "the command line");
  if (!re.ok()) return Status(ExitCode::kUsage, re.status().message());
  exclude_work_pattern = pattern;
  exclude_work = std::move(re).value();
  return OkStatus();
}

uint64_t ModuleConfig::GroupMask(std::string_view range) const {
  uint64_t mask = 0;
  for (size_t g = 0; g < groups.size() && g < 64; ++g) {
    if (std::regex_search(range.begin(), range.end(), groups[g].re)) mask |= uint64_t{1} << g;
  }
  return mask;
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
                  fmt::format("{}: {}. The format: {{\"exclude\": [regex, ...], \"groups\": [{{\"name\": "
                              "\"trunk\", \"match\": regex}}, ...], \"optimizer\": regex}}; 'cpprof report "
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
    if (!j["exclude"].is_array()) return bad("'exclude' must be a list of regexes");
    for (const auto& p : j["exclude"]) {
      if (!p.is_string()) return bad("'exclude' must be a list of regexes");
      CPPROF_ASSIGN_OR_RETURN(auto re, Compile(p.get<std::string>(), "exclude pattern", source));
      c.exclude_patterns.push_back(p.get<std::string>());
      c.exclude.push_back(std::move(re));
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
      CPPROF_ASSIGN_OR_RETURN(auto re, Compile(g["match"].get<std::string>(), "group '" + name + "' match", source));
      c.groups.push_back({name, g["match"].get<std::string>(), std::move(re)});
    }
    if (c.groups.size() > 64) return bad("at most 64 groups");
  }
  if (j.contains("optimizer")) {
    if (!j["optimizer"].is_string()) return bad("'optimizer' must be a regex");
    c.optimizer_pattern = j["optimizer"].get<std::string>();
    if (!c.optimizer_pattern.empty()) {
      CPPROF_ASSIGN_OR_RETURN(c.optimizer, Compile(c.optimizer_pattern, "optimizer pattern", source));
    }
  }
  if (j.contains("warmup")) {
    if (!j["warmup"].is_string()) return bad("'warmup' must be a regex");
    c.warmup_pattern = j["warmup"].get<std::string>();
    if (!c.warmup_pattern.empty()) {
      CPPROF_ASSIGN_OR_RETURN(c.warmup, Compile(c.warmup_pattern, "warmup pattern", source));
    }
  }
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
