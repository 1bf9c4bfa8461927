#include "render/table.h"

#include <fmt/format.h>

#include <algorithm>

namespace cpprof::render {

std::string ElideMiddle(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  if (width <= 3) return std::string(s.substr(0, width));
  size_t keep = width - 3;
  size_t head = (keep + 1) / 2, tail = keep - head;
  return fmt::format("{}...{}", s.substr(0, head), s.substr(s.size() - tail));
}

void TextTable::Print(std::ostream& out, std::string_view indent) const {
  PrintRows(out, indent, [&](const RowFn& fn) {
    for (const auto& row : rows_) fn(row);
  });
}

void TextTable::PrintRows(std::ostream& out, std::string_view indent,
                          const std::function<void(const RowFn&)>& for_each_row) const {
  std::vector<size_t> width(columns_.size());
  auto cell = [&](const std::vector<std::string>& row, size_t c) -> std::string {
    if (c >= row.size()) return "";
    return columns_[c].max_width ? ElideMiddle(row[c], columns_[c].max_width) : row[c];
  };
  for (size_t c = 0; c < columns_.size(); ++c) width[c] = columns_[c].header.size();
  for_each_row([&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < columns_.size(); ++c) width[c] = std::max(width[c], cell(row, c).size());
  });
  auto line = [&](auto get) {
    std::string s(indent);
    for (size_t c = 0; c < columns_.size(); ++c) {
      std::string v = get(c);
      bool last = c + 1 == columns_.size();
      if (columns_[c].align == Align::kRight) {
        s += fmt::format("{:>{}}", v, width[c]);
      } else {
        s += last ? v : fmt::format("{:<{}}", v, width[c]);
      }
      if (!last) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << '\n';
  };
  line([&](size_t c) { return columns_[c].header; });
  size_t total = indent.size();
  for (size_t c = 0; c < columns_.size(); ++c) total += width[c] + (c + 1 < columns_.size() ? 2 : 0);
  std::string rule = std::string(indent) + std::string(total - indent.size(), '-');
  out << rule << '\n';
  for_each_row([&](const std::vector<std::string>& row) {
    if (row.empty()) {
      out << rule << '\n';
      return;
    }
    line([&](size_t c) { return cell(row, c); });
  });
}

std::string Ms(int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6); }

std::string Percent(int64_t part, int64_t whole) {
  if (whole == 0) return "-";
  return fmt::format("{:.1f}", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

}  // namespace cpprof::render
