// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A Markdown table: the header, the alignment rule (" --- |" left, " ---: |" right) and the rows,
// '|' in a cell escaped. For the sections that print their own tables (efficiency, sweep.md).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace cpprof::render {

inline void PrintMarkdownTable(const std::vector<std::string>& header, const std::vector<bool>& right,
                               const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  auto line = [&](const std::vector<std::string>& cells) {
    out << '|';
    for (const auto& c : cells) {
      out << ' ';
      for (char ch : c) {
        if (ch == '|') out << '\\';
        out << ch;
      }
      out << " |";
    }
    out << '\n';
  };
  line(header);
  out << '|';
  for (size_t i = 0; i < header.size(); ++i) out << (i < right.size() && right[i] ? " ---: |" : " --- |");
  out << '\n';
  for (const auto& r : rows) line(r);
}

}  // namespace cpprof::render
