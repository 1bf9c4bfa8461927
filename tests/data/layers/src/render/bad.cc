// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Not allowed: render may not use analysis.
#include <vector>
#include "model/report.h"
  #include "analysis/verdict.h"
