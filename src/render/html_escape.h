// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Text as HTML (element text and attribute values): & < > " escaped. One rule for every page
// cpprof writes (the report page's title, sweep.html, its SVG plots).
#pragma once

#include <string>
#include <string_view>

namespace cpprof::render {

inline std::string EscapeHtml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace cpprof::render
