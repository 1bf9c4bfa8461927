// A fixture: the CLI may read the environment.
#include <cstdlib>

bool Timing() { return std::getenv("CPPROF_TIMING") != nullptr; }
