// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The cpprof command line. Main() is what the binary runs; Run() is the same with explicit
// arguments and streams, for in-process tests.
#pragma once

#include <sys/types.h>

#include <ostream>
#include <string>
#include <vector>

namespace cpprof::cli {

int Main(int argc, char** argv);
// Where a command's output may go straight to `out` because it can be taken back (Main: stdout
// is a regular file with nothing after its write position, or /dev/null).
struct DirectOutput {
  int fd = -1;  // a regular file: cut back to `length` bytes on an error or Ctrl-C; -1: /dev/null
  off_t length = 0;
};

// `out_is_terminal`: `out` is a terminal (Main: stdout is a tty); output too big for one is refused.
// A command's output is held until it succeeded (all or nothing on `out`), in a temporary file past
// 8 MiB, unless `direct` says that `out` can take it as it comes.
int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool out_is_terminal = false,
        const DirectOutput* direct = nullptr);

}  // namespace cpprof::cli
