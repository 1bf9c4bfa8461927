// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#pragma once
// cpfold's preset runtime defaults, read from the cpfold package (python/cpfold/presets.json,
// written by `python -m cpfold.config --write`) instead of copying its numbers into cpprof.

#include <map>
#include <string>

#include "base/status.h"

namespace cpprof::profile {

struct CpfoldPresets {
  std::string default_preset;                  // what cpfold.run uses without --preset
  std::map<std::string, int> diffusion_steps;  // preset name -> diffusion steps
};

// Reads <cpfold_root>/cpfold/presets.json. Errors name the file and how to regenerate it.
StatusOr<CpfoldPresets> ReadCpfoldPresets(const std::string& cpfold_root);

}  // namespace cpprof::profile
