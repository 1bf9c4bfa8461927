// A table of `cpprof stats`: the columns and rows of one nsys stats report, each cell already
// formatted exactly as `nsys stats --format csv` prints it.
#pragma once

#include <string>
#include <vector>

namespace cpprof::model {

struct StatsColumn {
  std::string header;  // "Time (%)", "Total Time (ns)", ..., "Name"
  bool numeric = true;
};

struct StatsTable {
  std::string report;  // "cuda_gpu_kern_sum"
  std::string title;   // "CUDA GPU Kernel Summary"
  std::vector<StatsColumn> columns;
  std::vector<std::vector<std::string>> rows;
  std::string skipped;  // non-empty when the export lacks the data: why (nsys prints SKIPPED)
};

}  // namespace cpprof::model
