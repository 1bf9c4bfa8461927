#include "runner/helpers.h"

#include <cstdlib>

#include "runner/environment.h"

namespace cpprof::runner {

std::vector<std::string> HelperSearchDirs() {
  std::vector<std::string> dirs;
  if (const char* d = std::getenv("CPPROF_HELPERS_DIR"); d && *d) dirs.emplace_back(d);
  std::string exe = Environment::RealPath("/proc/self/exe");
  if (size_t slash = exe.rfind('/'); slash != std::string::npos) {
    std::string exe_dir = exe.substr(0, slash);
    dirs.push_back(exe_dir + "/../python/cpprof_helpers");
    dirs.push_back(exe_dir + "/../share/cpprof/python/cpprof_helpers");
  }
#ifdef CPPROF_SOURCE_DIR
  dirs.push_back(std::string(CPPROF_SOURCE_DIR) + "/python/cpprof_helpers");
#endif
  return dirs;
}

std::optional<std::string> FindHelper(const std::string& file) {
  for (const auto& dir : HelperSearchDirs()) {
    std::string p = dir + "/" + file;
    if (Environment::IsFile(p)) return Environment::RealPath(p);
  }
  return std::nullopt;
}

std::optional<std::string> FindWorkloadKitRoot() {
  for (const auto& dir : HelperSearchDirs()) {
    std::string root = dir + "/..";
    if (Environment::IsFile(root + "/cpprof_workload/__init__.py")) return Environment::RealPath(root);
  }
  return std::nullopt;
}

}  // namespace cpprof::runner
