#include "render/table.h"

#include <fmt/format.h>

#include <algorithm>

#include "render/markdown_table.h"

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

namespace {
thread_local size_t g_text_width = 0;

size_t Leading(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && line[n] == ' ') ++n;
  return n;
}

// Where a wrapped line's continuation starts: under the text after its indent and its marker.
size_t HangingIndent(std::string_view line) {
  size_t at = Leading(line);
  std::string_view rest = line.substr(at);
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  if (digits > 0 && rest.substr(digits, 2) == ". ") return at + digits + 2;
  if (rest.substr(0, 2) == "- ") return at + 2;
  for (std::string_view label : {"warning: ", "fix: ", "note: "}) {
    if (rest.substr(0, label.size()) == label) return at + label.size();
  }
  return at + 2;
}

// Display columns of UTF-8 text: continuation bytes take none.
size_t Columns(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

void WrapLine(std::string_view line, size_t width, std::string& out) {
  if (width == 0 || Columns(line) <= width) {
    out.append(line);
    out += '\n';
    return;
  }
  const size_t hang = std::min(HangingIndent(line), width / 2);
  const size_t first_indent = Leading(line);
  std::string current(line.substr(0, first_indent));
  size_t current_cols = first_indent;
  bool empty = true;  // no word on the current line yet
  size_t pos = first_indent;
  while (pos < line.size()) {
    size_t end = line.find(' ', pos);
    if (end == std::string_view::npos) end = line.size();
    std::string_view word = line.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    const size_t cols = Columns(word);
    if (!empty && current_cols + 1 + cols > width) {
      out += current;
      out += '\n';
      current.assign(hang, ' ');
      current_cols = hang;
      empty = true;
    }
    if (!empty) {
      current += ' ';
      ++current_cols;
    }
    current.append(word);
    current_cols += cols;
    empty = false;
  }
  out += current;
  out += '\n';
}
}  // namespace

TextWidthScope::TextWidthScope(size_t width) : previous_(g_text_width) { g_text_width = width; }
TextWidthScope::~TextWidthScope() { g_text_width = previous_; }
size_t TextWidthScope::Current() { return g_text_width; }

std::string WrapLines(std::string_view text, size_t width) {
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      std::string last;
      WrapLine(text.substr(pos), width, last);
      last.pop_back();  // the text did not end its last line
      out += last;
      break;
    }
    WrapLine(text.substr(pos, end - pos), width, out);
    pos = end + 1;
  }
  return out;
}

namespace {

using Column = TextTable::Column;
using ForEachRow = std::function<void(const TextTable::RowFn&)>;

// How a table is laid out: each column's width limit (0: unlimited) and width, and whether its
// last column goes under each row (stacked).
struct Layout {
  const std::vector<Column>& columns;
  std::string_view indent;
  std::vector<size_t> limit, width;
  bool stacked = false;

  // Row's cell c as shown: "" past the row's end, elided in the middle to the column's limit.
  std::string Cell(const std::vector<std::string>& row, size_t c) const {
    if (c >= row.size()) return "";
    return limit[c] ? ElideMiddle(row[c], limit[c]) : row[c];
  }
  // The columns shown on the row's line.
  size_t Shown() const { return stacked ? columns.size() - 1 : columns.size(); }
  // The line's width: the indent, the columns shown and two spaces between them.
  size_t Total() const {
    size_t t = indent.size();
    const size_t shown = Shown();
    for (size_t c = 0; c < shown; ++c) t += width[c] + (c + 1 < shown ? 2 : 0);
    return t;
  }
};

// Each column's width: the widest of its header and its cells as shown.
void Measure(Layout& l, const ForEachRow& for_each_row) {
  const size_t n = l.columns.size();
  for (size_t c = 0; c < n; ++c) l.width[c] = Columns(l.columns[c].header);
  for_each_row([&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < n; ++c) l.width[c] = std::max(l.width[c], Columns(l.Cell(row, c)));
  });
}

// Wider than the line: the stacked column goes under its row, then text columns give up
// width, the widest first, down to 24 (or their header).
void FitToLine(Layout& l, size_t line_width, const ForEachRow& for_each_row) {
  const size_t n = l.columns.size();
  if (line_width == 0 || l.Total() <= line_width) return;
  if (n > 1 && l.columns[n - 1].overflow == TextTable::Overflow::kStack) l.stacked = true;
  constexpr size_t kMinText = 24;
  while (l.Total() > line_width) {
    size_t widest = n;
    for (size_t c = 0; c < l.Shown(); ++c) {
      const Column& col = l.columns[c];
      const bool can = col.align == TextTable::Align::kLeft && col.overflow == TextTable::Overflow::kElide &&
                       l.width[c] > std::max(kMinText, Columns(col.header));
      if (can && (widest == n || l.width[c] > l.width[widest])) widest = c;
    }
    if (widest == n) break;  // nothing left to give: the table stays wider than the line
    const size_t floor = std::max(kMinText, Columns(l.columns[widest].header));
    l.limit[widest] = std::max(floor, l.width[widest] - std::min(l.width[widest] - floor, l.Total() - line_width));
    Measure(l, for_each_row);
  }
}

// One line of the table, get(c) giving its cells: padded to the widths, trailing spaces dropped.
// A stacked value goes on its own line under its row, indented past the row's first cell's own
// indentation (nested module names) and labelled with its header, so that it cannot be read as
// a row of its own.
template <typename Get>
void PrintLine(const Layout& l, Get get, bool header, size_t line_width, std::ostream& out) {
  const size_t n = l.columns.size(), shown = l.Shown();
  std::string s(l.indent);
  for (size_t c = 0; c < shown; ++c) {
    std::string v = get(c);
    bool last = c + 1 == shown;
    size_t pad = l.width[c] > Columns(v) ? l.width[c] - Columns(v) : 0;
    if (l.columns[c].align == TextTable::Align::kRight) {
      s += std::string(pad, ' ') + v;
    } else {
      s += last ? v : v + std::string(pad, ' ');
    }
    if (!last) s += "  ";
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  out << s << '\n';
  if (l.stacked && !header) {
    std::string v = get(n - 1);
    if (v.empty()) return;
    const std::string first = get(0);
    const size_t lead = first.find_first_not_of(' ');
    std::string stacked_line = std::string(l.indent) + std::string((lead == std::string::npos ? 0 : lead) + 4, ' ') +
                               l.columns[n - 1].header + ": " + v;
    out << WrapLines(stacked_line, line_width) << '\n';
  }
}

}  // namespace

void TextTable::PrintRows(std::ostream& out, std::string_view indent,
                          const std::function<void(const RowFn&)>& for_each_row) const {
  const size_t n = columns_.size();
  Layout l{columns_, indent, std::vector<size_t>(n), std::vector<size_t>(n)};
  for (size_t c = 0; c < n; ++c) l.limit[c] = columns_[c].max_width;
  Measure(l, for_each_row);
  const size_t line_width = TextWidthScope::Current();
  FitToLine(l, line_width, for_each_row);
  PrintLine(
      l, [&](size_t c) { return columns_[c].header; }, true, line_width, out);
  std::string rule = std::string(indent) + std::string(l.Total() - indent.size(), '-');
  out << rule << '\n';
  for_each_row([&](const std::vector<std::string>& row) {
    if (row.empty()) {
      out << rule << '\n';
      return;
    }
    PrintLine(
        l, [&](size_t c) { return l.Cell(row, c); }, false, line_width, out);
  });
}

std::string Ms(int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6); }

std::string Percent(int64_t part, int64_t whole) {
  if (whole == 0) return "-";
  return fmt::format("{:.1f}", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

void PrintSectionTable(const std::vector<std::string>& header, const std::vector<bool>& right,
                       const std::vector<std::vector<std::string>>& rows, bool markdown, size_t max_left,
                       std::ostream& out) {
  if (markdown) {
    PrintMarkdownTable(header, right, rows, out);
    out << '\n';
    return;
  }
  std::vector<TextTable::Column> cols;
  for (size_t i = 0; i < header.size(); ++i) {
    cols.push_back(
        {header[i], right[i] ? TextTable::Align::kRight : TextTable::Align::kLeft, right[i] ? 0u : max_left});
  }
  TextTable t(cols);
  for (const auto& row : rows) t.AddRow(row);
  t.Print(out, "  ");
}

}  // namespace cpprof::render
