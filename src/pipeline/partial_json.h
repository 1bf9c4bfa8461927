// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The partial of one export as JSON (`cpprof report --partial X.sqlite -o X.partial.json`, schema
// cpprof.partial/2): everything FinishReport needs, with the large arrays (communication ops,
// compute under communication) as delta-coded varints in base64. Read back by `cpprof merge`.
#pragma once

#include <istream>
#include <ostream>
#include <string>

#include "base/status.h"
#include "pipeline/run_partial.h"

namespace cpprof::pipeline {

// /2: the efficiency section's inputs (sizes, cost config) and each module's calls per rank.
inline constexpr const char* kPartialSchema = "cpprof.partial/2";

void WritePartialJson(const RunPartial& run, std::ostream& out);
// Errors (kBadInput) name `name` and say what is wrong.
StatusOr<RunPartial> ReadPartialJson(std::istream& in, const std::string& name);

}  // namespace cpprof::pipeline
