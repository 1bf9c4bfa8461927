// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/csv.h"

namespace cpprof::render {

void AppendCsvField(std::string_view s, std::string& out) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) {
    out.append(s);
    return;
  }
  out += '"';
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

std::string CsvField(std::string_view s) {
  std::string q;
  AppendCsvField(s, q);
  return q;
}

template <typename Range>
static void AppendRow(const Range& cells, std::string& out) {
  bool first = true;
  for (const auto& c : cells) {
    if (!first) out += ',';
    AppendCsvField(c, out);
    first = false;
  }
  out += '\n';
}

void AppendCsvRow(const std::vector<std::string>& cells, std::string& out) { AppendRow(cells, out); }

void AppendTsvRow(const std::vector<std::string>& cells, std::string& out) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) out += '\t';
    for (char c : cells[i]) {
      switch (c) {
        case '\\':
          out += "\\\\";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        default:
          out += c;
      }
    }
  }
  out += '\n';
}

void CsvWriter::Row(std::initializer_list<std::string_view> cells) {
  line_.clear();
  AppendRow(cells, line_);
  out_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

void CsvWriter::Row(const std::vector<std::string>& cells) {
  line_.clear();
  AppendRow(cells, line_);
  out_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

}  // namespace cpprof::render
