// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

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
  if (width == 0 || Columns(line) <= width || line.find("  ", Leading(line)) != std::string_view::npos) {
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

// The length of the prefix `a` and `b` share.
size_t CommonPrefix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

// `s` shortened to `width` with its leading spaces kept and the middle of the rest elided.
std::string ElideCell(std::string_view s, size_t width) {
  const size_t lead = Leading(s);
  if (lead + 4 > width) return ElideMiddle(s, width);
  return std::string(lead, ' ') + ElideMiddle(s.substr(lead), width - lead);
}

// `body` shortened to `width` keeping its character `at` (where it differs from a value that
// would otherwise print alike): the tail from `at` when it fits, else a head past `at`, else a
// window from `at`.
std::string ElideKeeping(std::string_view body, size_t at, size_t width) {
  if (width < 8 || at >= body.size()) return ElideMiddle(body, width);
  const size_t tail = body.size() - at;
  if (tail + 4 <= width) return fmt::format("{}...{}", body.substr(0, width - 3 - tail), body.substr(at));
  if (at + 4 <= width) {
    const size_t head = std::min(std::max(at + 1, (width - 2) / 2), width - 3);
    return fmt::format("{}...{}", body.substr(0, head), body.substr(body.size() - (width - 3 - head)));
  }
  return fmt::format("...{}...", body.substr(at, width - 6));
}

}  // namespace

std::vector<std::string> ElideDistinct(const std::vector<std::string>& values, size_t width) {
  std::vector<std::string> out(values.size());
  std::map<std::string, std::vector<size_t>> alike;  // a default short form -> the values giving it
  for (size_t i = 0; i < values.size(); ++i) {
    out[i] = Columns(values[i]) <= width ? values[i] : ElideCell(values[i], width);
    if (out[i] != values[i]) alike[out[i]].push_back(i);
  }
  for (const auto& [shown, group] : alike) {
    for (size_t i : group) {
      const std::string_view v = values[i];
      const size_t lead = Leading(v);
      if (lead + 8 > width) continue;
      std::optional<size_t> differs;  // where v's text first differs from the nearest other's
      for (size_t j : group) {
        if (values[j] == values[i]) continue;
        const size_t p = CommonPrefix(v.substr(lead), std::string_view(values[j]).substr(Leading(values[j])));
        differs = std::max(differs.value_or(0), p);
      }
      if (differs) out[i] = std::string(lead, ' ') + ElideKeeping(v.substr(lead), *differs, width - lead);
    }
  }
  return out;
}

namespace {

// How a table is laid out: each column's width limit (0: unlimited) and width, the short forms
// of the cells over their limit, whether its last column goes under each row (stacked), and the
// blocks of columns its lines show (one, unless the columns wrap).
struct Layout {
  const std::vector<Column>& columns;
  std::string_view indent;
  std::vector<size_t> limit, width;
  std::vector<std::map<std::string, std::string, std::less<>>> shortened;
  bool stacked = false;
  std::vector<std::vector<size_t>> blocks;

  // Row's cell c as shown: "" past the row's end, shortened to the column's limit.
  std::string Cell(const std::vector<std::string>& row, size_t c) const {
    if (c >= row.size()) return "";
    if (!limit[c] || Columns(row[c]) <= limit[c]) return row[c];
    auto it = shortened[c].find(row[c]);
    return it != shortened[c].end() ? it->second : ElideCell(row[c], limit[c]);
  }
  // The columns shown on the row's line, all blocks together.
  std::vector<size_t> Shown() const {
    std::vector<size_t> cols(stacked ? columns.size() - 1 : columns.size());
    for (size_t c = 0; c < cols.size(); ++c) cols[c] = c;
    return cols;
  }
  // A line's width with these columns: the indent, the columns and two spaces between them.
  size_t Total(const std::vector<size_t>& cols) const {
    size_t t = indent.size();
    for (size_t i = 0; i < cols.size(); ++i) t += width[cols[i]] + (i + 1 < cols.size() ? 2 : 0);
    return t;
  }
};

// The short forms of the cells over their column's limit, then each column's width: the widest of
// its header and its cells as shown.
void Measure(Layout& l, const ForEachRow& for_each_row) {
  const size_t n = l.columns.size();
  std::vector<std::set<std::string>> longer(n);
  for_each_row([&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < n && c < row.size(); ++c) {
      if (l.limit[c] && Columns(row[c]) > l.limit[c]) longer[c].insert(row[c]);
    }
  });
  for (size_t c = 0; c < n; ++c) {
    l.shortened[c].clear();
    if (longer[c].empty()) continue;
    std::vector<std::string> values(longer[c].begin(), longer[c].end());
    std::vector<std::string> shown = ElideDistinct(values, l.limit[c]);
    for (size_t i = 0; i < values.size(); ++i) l.shortened[c].emplace(std::move(values[i]), std::move(shown[i]));
  }
  for (size_t c = 0; c < n; ++c) l.width[c] = Columns(l.columns[c].header);
  for_each_row([&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < n; ++c) l.width[c] = std::max(l.width[c], Columns(l.Cell(row, c)));
  });
}

// While the columns `cols` are wider than the line, the widest text column among them gives up
// width, down to `floor` (or its header).
void Shrink(Layout& l, const std::vector<size_t>& cols, size_t line_width, size_t floor,
            const ForEachRow& for_each_row) {
  while (l.Total(cols) > line_width) {
    std::optional<size_t> widest;
    for (size_t c : cols) {
      const Column& col = l.columns[c];
      const bool can = col.align == TextTable::Align::kLeft && col.overflow == TextTable::Overflow::kElide &&
                       l.width[c] > std::max(floor, Columns(col.header));
      if (can && (!widest || l.width[c] > l.width[*widest])) widest = c;
    }
    if (!widest) return;  // nothing left to give
    const size_t c = *widest, least = std::max(floor, Columns(l.columns[c].header));
    l.limit[c] = std::max(least, l.width[c] - std::min(l.width[c] - least, l.Total(cols) - line_width));
    Measure(l, for_each_row);
  }
}

// The shown columns wrapped whole into blocks that fit the line, each with the key columns.
std::vector<std::vector<size_t>> WrapColumns(const Layout& l, size_t line_width) {
  std::vector<size_t> keys, others;
  for (size_t c : l.Shown()) (l.columns[c].key ? keys : others).push_back(c);
  if (keys.empty() && !others.empty()) keys.push_back(others.front()), others.erase(others.begin());
  auto with_keys = [&](std::vector<size_t> cols) {
    cols.insert(cols.end(), keys.begin(), keys.end());
    std::sort(cols.begin(), cols.end());
    return cols;
  };
  std::vector<std::vector<size_t>> blocks;
  std::vector<size_t> current;
  for (size_t c : others) {
    std::vector<size_t> next = current;
    next.push_back(c);
    if (!current.empty() && l.Total(with_keys(next)) > line_width) {
      blocks.push_back(with_keys(current));
      next = {c};
    }
    current = std::move(next);
  }
  blocks.push_back(with_keys(current));
  return blocks;
}

// Wider than the line: the stacked column goes under its row; text columns give up width down to
// 32; the columns that still do not fit wrap whole into further blocks (the key columns in each),
// whose text columns give up width down to 16 where a block is still too wide.
void FitToLine(Layout& l, size_t line_width, const ForEachRow& for_each_row) {
  const size_t n = l.columns.size();
  l.blocks = {l.Shown()};
  if (line_width == 0 || l.Total(l.blocks[0]) <= line_width) return;
  if (n > 1 && l.columns[n - 1].overflow == TextTable::Overflow::kStack) {
    l.stacked = true;
    l.blocks = {l.Shown()};
  }
  constexpr size_t kSoftText = 32, kMinText = 16;
  Shrink(l, l.blocks[0], line_width, kSoftText, for_each_row);
  if (l.Total(l.blocks[0]) <= line_width) return;
  l.blocks = WrapColumns(l, line_width);
  for (const auto& block : l.blocks) Shrink(l, block, line_width, kMinText, for_each_row);
}

// One line of a block, get(c) giving its cells: padded to the widths, trailing spaces dropped.
// A stacked value goes on its own line under its row, indented past the row's first cell's own
// indentation (nested module names) and labelled with its header, so that it cannot be read as
// a row of its own.
template <typename Get>
void PrintLine(const Layout& l, const std::vector<size_t>& cols, Get get, bool stack, size_t line_width,
               std::ostream& out) {
  const size_t n = l.columns.size();
  std::string s(l.indent);
  for (size_t i = 0; i < cols.size(); ++i) {
    const size_t c = cols[i];
    std::string v = get(c);
    bool last = i + 1 == cols.size();
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
  if (l.stacked && stack) {
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
  Layout l{columns_,
           indent,
           std::vector<size_t>(n),
           std::vector<size_t>(n),
           std::vector<std::map<std::string, std::string, std::less<>>>(n),
           false,
           {}};
  for (size_t c = 0; c < n; ++c) l.limit[c] = columns_[c].max_width;
  Measure(l, for_each_row);
  const size_t line_width = TextWidthScope::Current();
  FitToLine(l, line_width, for_each_row);
  for (size_t b = 0; b < l.blocks.size(); ++b) {
    const auto& cols = l.blocks[b];
    if (b > 0) out << '\n';
    PrintLine(
        l, cols, [&](size_t c) { return columns_[c].header; }, false, line_width, out);
    std::string rule = std::string(indent) + std::string(l.Total(cols) - indent.size(), '-');
    out << rule << '\n';
    for_each_row([&](const std::vector<std::string>& row) {
      if (row.empty()) {
        out << rule << '\n';
        return;
      }
      PrintLine(
          l, cols, [&](size_t c) { return l.Cell(row, c); }, b == 0, line_width, out);
    });
  }
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
