// CSV writing with RFC 4180 quoting (fields with comma, quote or newline are quoted).
#pragma once

#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace cpprof::render {

std::string CsvField(std::string_view s);

class CsvWriter {
 public:
  explicit CsvWriter(std::ostream& out) : out_(out) {}
  void Row(std::initializer_list<std::string_view> cells);
  void Row(const std::vector<std::string>& cells);

 private:
  std::ostream& out_;
};

}  // namespace cpprof::render
