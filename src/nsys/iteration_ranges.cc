#include "nsys/iteration_ranges.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "nsys/export_reader.h"
#include "nsys/nvtx_reader.h"

namespace cpprof::nsys {

bool IsIterationName(std::string_view name) {
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

StatusOr<std::vector<model::IterationWindow>> ReadIterationWindows(const Database& db, size_t max_windows) {
  std::vector<model::IterationWindow> out;
  if (!db.HasTable(kNvtxTable) || !db.HasTable("StringIds")) return out;
  CPPROF_ASSIGN_OR_RETURN(NvtxDomains domains, NvtxDomains::Read(db));
  std::map<std::string, model::IterationWindow> by_name;
  std::string full;
  CPPROF_RETURN_IF_ERROR(ForEachNvtxRange(db, OpenEnd::kLastRange, [&](const NvtxRangeRow& r) {
    if (!IsIterationName(r.text)) return;  // cheap test first: the domain never makes a marker
    full.assign(domains.NamesFor(r.domain_id, r.global_tid).front()).append(":").append(r.text);
    auto [it, fresh] = by_name.try_emplace(full, model::IterationWindow{full, r.start, r.end});
    if (!fresh) {
      it->second.start = std::min(it->second.start, r.start);
      it->second.end = std::max(it->second.end, r.end);
    }
  }));
  for (auto& [name, w] : by_name) out.push_back(std::move(w));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.start != b.start ? a.start < b.start : a.name < b.name;
  });
  if (out.size() > max_windows) out.resize(max_windows);
  return out;
}

}  // namespace cpprof::nsys
