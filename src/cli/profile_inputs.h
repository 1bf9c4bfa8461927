// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// What `cpprof profile` and `cpprof sweep` plan runs from besides the doctor's findings: where the
// launcher, cpfold and the workload kit are, the caller's environment, the user and host.
#pragma once

#include "profile/plan.h"
#include "runner/environment.h"

namespace cpprof::cli {

profile::PlanInputs MakePlanInputs(const runner::Environment& env);

}  // namespace cpprof::cli
