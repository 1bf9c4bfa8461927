// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Kernel classification: a table of name patterns (data, not code), first match wins.
#pragma once

#include <span>
#include <string_view>

#include "model/op_class.h"

namespace cpprof::analysis {

struct KernelPattern {
  enum class Match { kPrefix, kContains };
  Match match;
  std::string_view text;  // matched case-insensitively against the demangled name
  model::OpClass cls;
};

// The classification table, in priority order. Exposed for `cpprof help classes` and tests.
std::span<const KernelPattern> KernelPatterns();

// Classifies a kernel by its (demangled) name. Never returns kMemcpy/kMemset/kPeerCopy: those
// come from their own tables.
model::OpClass ClassifyKernel(std::string_view name);

}  // namespace cpprof::analysis
