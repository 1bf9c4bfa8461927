// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// CSV writing with RFC 4180 quoting (fields with comma, quote or newline are quoted), and TSV.
#pragma once

#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace cpprof::render {

std::string CsvField(std::string_view s);
// Appends `s` to `out` as one CSV field (quoted when it must be).
void AppendCsvField(std::string_view s, std::string& out);
// Appends one CSV line (fields and '\n') to `out`.
void AppendCsvRow(const std::vector<std::string>& cells, std::string& out);
// Appends one TSV line to `out`: the cells unquoted, separated by tabs, a backslash, tab, newline
// or carriage return inside a cell written as \\, \t, \n, \r (nsys's `tsv:esc`), so that every
// line is one row.
void AppendTsvRow(const std::vector<std::string>& cells, std::string& out);

class CsvWriter {
 public:
  explicit CsvWriter(std::ostream& out) : out_(out) {}
  void Row(std::initializer_list<std::string_view> cells);
  void Row(const std::vector<std::string>& cells);

 private:
  std::ostream& out_;
  std::string line_;
};

}  // namespace cpprof::render
