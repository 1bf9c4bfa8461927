// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A plain-text table for terminals: right-aligned numbers, left-aligned text. Fitted to the line
// (TextWidthScope) without ever losing its alignment: a free-text last column goes under its row,
// long text cells are shortened (cells that differ stay different), and columns that still do not
// fit wrap whole into another block of the table that repeats the row's key columns.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace cpprof::render {

// Shortens `s` to at most `width` characters by replacing its middle with "...".
std::string ElideMiddle(std::string_view s, size_t width);

// Shortens each of `values` to at most `width` characters (leading spaces, a tree's indentation,
// kept) so that values that differ stay different where the width allows: by default the middle
// is elided; values that would then print alike keep the part from where they first differ
// (`Tri...StartingNode.forward`, `T...EndingNode.forward`). Values that fit are returned as
// they are. The result is in the order of `values`.
std::vector<std::string> ElideDistinct(const std::vector<std::string>& values, size_t width);

// Wraps `text`'s lines longer than `width` at spaces, each continuation indented under the
// line's text (its leading spaces, and the marker of a list item or label: "1. ", "- ",
// "warning: ", "fix: "). Shorter lines, words longer than a line, and lines with a run of two or
// more spaces after their indentation (table rows: wrapping would collapse their alignment) are
// kept as they are; width 0 keeps everything.
std::string WrapLines(std::string_view text, size_t width);

// The line width text tables fit while it lives (0: unlimited, the default), for one rendering
// on this thread: `cpprof report`'s text readout sets it from --wide / the terminal.
class TextWidthScope {
 public:
  explicit TextWidthScope(size_t width);
  ~TextWidthScope();
  TextWidthScope(const TextWidthScope&) = delete;
  TextWidthScope& operator=(const TextWidthScope&) = delete;
  static size_t Current();

 private:
  size_t previous_;
};

class TextTable {
 public:
  enum class Align { kLeft, kRight };
  // What a column gives up when the table is wider than the line (TextWidthScope):
  enum class Overflow {
    kElide,  // left-aligned text: cells shortened (the widest such column first), never below 24
    kStack,  // the last column, free text: moved under its row, wrapped, when it does not fit
    kKeep,   // numbers: never shortened (the default for right-aligned columns)
  };
  struct Column {
    std::string header;
    Align align = Align::kRight;
    size_t max_width = 0;  // 0: unlimited; longer cells are shortened (ElideDistinct)
    Overflow overflow = Overflow::kElide;
    // A column that names the row (rank, kind, module): repeated in every block when the columns
    // wrap. When no column is marked, the first one is.
    bool key = false;
  };

  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void AddRule() { rows_.emplace_back(); }  // a separator line
  bool empty() const { return rows_.empty(); }
  void Print(std::ostream& out, std::string_view indent = "") const;
  // Prints the rows `for_each_row` gives instead of the added ones, without holding them: it is
  // called several times (the widths, then the lines of each block) and must give the same rows
  // each time.
  using RowFn = std::function<void(const std::vector<std::string>&)>;
  void PrintRows(std::ostream& out, std::string_view indent,
                 const std::function<void(const RowFn&)>& for_each_row) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// A section's table: Markdown (then a blank line), or a text table indented by two spaces whose
// left-aligned columns are cut at `max_left` characters (right-aligned ones never are).
void PrintSectionTable(const std::vector<std::string>& header, const std::vector<bool>& right,
                       const std::vector<std::vector<std::string>>& rows, bool markdown, size_t max_left,
                       std::ostream& out);

// Formats nanoseconds as milliseconds with 3 decimals ("12.345").
std::string Ms(int64_t ns);
// Formats a share as a percentage with 1 decimal ("45.3"); "-" when the whole is 0.
std::string Percent(int64_t part, int64_t whole);

}  // namespace cpprof::render
