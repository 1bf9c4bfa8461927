// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A fixture: the CLI may read the environment.
#include <cstdlib>

bool Timing() { return std::getenv("CPPROF_TIMING") != nullptr; }
