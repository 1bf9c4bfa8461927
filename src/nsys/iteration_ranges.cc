#include "nsys/iteration_ranges.h"

#include <algorithm>
#include <cctype>

#include "nsys/export_reader.h"
#include "nsys/nvtx_reader.h"

namespace cpprof::nsys {

bool IsIterationName(std::string_view name) {
  // Every iteration name ends in a digit: most NVTX texts (autograd's end in ']') stop here,
  // before the search for the last ':' walks back over them.
  if (name.empty() || !std::isdigit(static_cast<unsigned char>(name.back()))) return false;
  size_t colon = name.rfind(':');
  std::string_view s = colon == std::string_view::npos ? name : name.substr(colon + 1);
  auto lower_starts = [&](std::string_view prefix) {
    if (s.size() < prefix.size()) return false;
    for (size_t i = 0; i < prefix.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
    }
    return true;
  };
  size_t i;
  if (lower_starts("iteration")) {
    i = 9;
  } else if (lower_starts("iter")) {
    i = 4;
  } else {
    return false;
  }
  if (i < s.size() && (s[i] == ' ' || s[i] == '_' || s[i] == '-')) ++i;
  if (i >= s.size()) return false;
  for (; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

void IterationWindowCollector::Add(const NvtxRangeRow& r, const std::string& domain) {
  if (!IsIterationName(r.text)) return;  // cheap test first: the domain never makes a marker
  full_.assign(domain).append(":").append(r.text);
  auto [it, fresh] = by_name_.try_emplace(full_, model::IterationWindow{full_, r.start, r.end});
  if (!fresh) {
    it->second.start = std::min(it->second.start, r.start);
    it->second.end = std::max(it->second.end, r.end);
  }
}

std::vector<model::IterationWindow> IterationWindowCollector::Windows(size_t max_windows) const {
  std::vector<model::IterationWindow> out;
  for (const auto& [name, w] : by_name_) out.push_back(w);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.start != b.start ? a.start < b.start : a.name < b.name; });
  if (out.size() > max_windows) out.resize(max_windows);
  return out;
}

StatusOr<std::vector<model::IterationWindow>> ReadIterationWindows(const Database& db, size_t max_windows) {
  if (!db.HasTable(kNvtxTable) || !db.HasTable("StringIds")) return std::vector<model::IterationWindow>{};
  IterationWindowCollector windows;
  NvtxScanCallbacks callbacks;
  callbacks.range = [&](const NvtxRangeRow& r, const std::vector<std::string>& names) {
    windows.Add(r, names.front());
  };
  callbacks.restart = [&] { windows.Clear(); };
  CPPROF_RETURN_IF_ERROR(ScanNvtx(db, OpenEnd::kLastRange, callbacks).status());
  return windows.Windows(max_windows);
}

}  // namespace cpprof::nsys
