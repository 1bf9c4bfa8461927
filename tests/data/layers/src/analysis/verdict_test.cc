// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Tests beside the code are exempt.
#include "render/good.h"
