// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "profile/cpfold_presets.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace cpprof::profile {

StatusOr<CpfoldPresets> ReadCpfoldPresets(const std::string& cpfold_root) {
  const std::string path = cpfold_root + "/cpfold/presets.json";
  const std::string fix = "regenerate it with 'python -m cpfold.config --write' (run from " + cpfold_root + ")";
  std::ifstream in(path);
  if (!in) return Error(ExitCode::kBadInput, fmt::format("cannot read {}: {}", path, fix));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  CpfoldPresets p;
  if (j.is_object() && j.contains("default_preset") && j["default_preset"].is_string() && j.contains("presets") &&
      j["presets"].is_object()) {
    p.default_preset = j["default_preset"].get<std::string>();
    for (const auto& [name, v] : j["presets"].items()) {
      if (!v.is_object() || !v.contains("diffusion_steps") || !v["diffusion_steps"].is_number_integer()) {
        return Error(ExitCode::kBadInput,
                     fmt::format("{}: preset '{}' has no integer diffusion_steps: {}", path, name, fix));
      }
      p.diffusion_steps[name] = v["diffusion_steps"].get<int>();
    }
  }
  if (p.default_preset.empty() || !p.diffusion_steps.count(p.default_preset)) {
    return Error(ExitCode::kBadInput,
                 fmt::format("{} is not cpfold's preset table (default_preset and presets.<name>.diffusion_steps): {}",
                             path, fix));
  }
  return p;
}

}  // namespace cpprof::profile
