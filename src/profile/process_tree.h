// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The process tree under cpprof, for stopping a profiled run completely: nsys forks torchrun,
// torchrun starts the ranks (possibly in sessions of their own), so killing one process group is
// not enough. Descendants are found by their parent links in /proc, snapshotted before any is
// killed (an orphan is re-parented and cannot be found afterwards).
#pragma once

#include <sys/types.h>

#include <vector>

namespace cpprof::profile {

// Every live descendant of `root` (not `root` itself), parents before children.
std::vector<pid_t> Descendants(pid_t root);

// SIGTERM to every descendant of `root`, then after up to `grace_s` SIGKILL to all still alive
// (including those started meanwhile). Returns how many processes were signalled.
int KillDescendants(pid_t root, double grace_s);

}  // namespace cpprof::profile
