// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The reduce step of a run too big for one machine: the partials of its exports (`cpprof report
// --partial`, one per export, made where the exports are) merged into one RunPartial that
// FinishReport turns into the readout, as if the exports had been read together.
//
// What differs from reading the exports together: each export's numbers cover its own window
// (its own steady iterations), chosen before the others were seen; read together, every rank
// covers the run's window (earliest iteration start to latest end over all ranks). The
// difference is idle time at the window's edges, about the ranks' start spread; the readout
// says it.
#pragma once

#include <vector>

#include "base/status.h"
#include "pipeline/run_partial.h"

namespace cpprof::pipeline {

// `names[i]` names parts[i] in errors. Partials of different runs or options are refused
// (kUsage) unless `force`.
StatusOr<RunPartial> MergePartials(std::vector<RunPartial> parts, const std::vector<std::string>& names, bool force);

}  // namespace cpprof::pipeline
