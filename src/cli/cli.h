// The cpprof command line. Main() is what the binary runs; Run() is the same with explicit
// arguments and streams, for in-process tests.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace cpprof::cli {

int Main(int argc, char** argv);
// `out_is_terminal`: `out` is a terminal (Main: stdout is a tty); output too big for one is refused.
int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool out_is_terminal = false);

}  // namespace cpprof::cli
