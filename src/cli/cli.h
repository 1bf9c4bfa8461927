// The cpprof command line. Main() is what the binary runs; Run() is the same with explicit
// arguments and streams, for in-process tests.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace cpprof::cli {

int Main(int argc, char** argv);
int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace cpprof::cli
