#include "analysis/summary_stats.h"

#include <algorithm>
#include <cmath>

namespace cpprof::analysis {

Summary Summarize(std::vector<int64_t>& values) {
  Summary s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  s.min = values.front();
  s.max = values.front();
  double mean = 0, m2 = 0;
  int64_t n = 0;
  for (int64_t v : values) {
    s.total += v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    double x = static_cast<double>(v);
    ++n;
    double delta = x - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (x - mean);
  }
  s.mean = static_cast<double>(s.total) / static_cast<double>(s.count);
  s.stdev = s.count > 1 ? std::sqrt(m2 / static_cast<double>(s.count - 1)) : 0.0;
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  double hi = static_cast<double>(values[mid]);
  if (values.size() % 2 == 1) {
    s.median = hi;
  } else {
    double lo = static_cast<double>(*std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid)));
    s.median = (lo + hi) / 2.0;
  }
  return s;
}

}  // namespace cpprof::analysis
