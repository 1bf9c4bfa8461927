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
