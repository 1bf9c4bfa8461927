// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Text cut into lines: at '\n', a '\r' before it dropped, the last line kept even when empty
// (so line k of a file is element k - 1).
#pragma once

#include <string_view>
#include <vector>

namespace cpprof {

// Views into `text`: valid while it is.
inline std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t at = 0;
  while (at <= text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    at = nl + 1;
  }
  return lines;
}

}  // namespace cpprof
