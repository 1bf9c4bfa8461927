// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A fixture for the no_getenv_check_catches_a_read test: a reader that looks up a knob itself.
#include <cstdlib>

// CPPROF_THREADS in a comment is fine.
int Threads() { return std::getenv("CPPROF_THREADS") ? 1 : 2; }
