#include "render/csv.h"

namespace cpprof::render {

std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  q += '"';
  return q;
}

template <typename Range>
static void WriteRow(std::ostream& out, const Range& cells) {
  bool first = true;
  for (const auto& c : cells) {
    if (!first) out << ',';
    out << CsvField(c);
    first = false;
  }
  out << '\n';
}

void CsvWriter::Row(std::initializer_list<std::string_view> cells) { WriteRow(out_, cells); }
void CsvWriter::Row(const std::vector<std::string>& cells) { WriteRow(out_, cells); }

}  // namespace cpprof::render
