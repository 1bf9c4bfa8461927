// cpprof stats --report NAME [--report NAME ...] [--format csv|table|json] FILE.sqlite
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/parallel.h"
#include "cli/command.h"
#include "pipeline/stats_reports.h"
#include "render/csv.h"
#include "render/table.h"

namespace cpprof::cli {

namespace {

std::string ReportList() {
  std::string s;
  for (const auto& r : pipeline::StatsReports()) s += fmt::format("  {:<22}  {}\n", r.name, r.what);
  return s;
}

// Writes every row as `append_row` formats it. The rows of a large (lazy) table are made and
// formatted in blocks on all cores, and written in order: the output is the same whatever the
// thread count.
void WriteRows(const model::StatsTable& t, std::ostream& out,
               void (*append_row)(const std::vector<std::string>&, std::string&)) {
  std::string line;
  if (!t.lazy_row) {
    for (const auto& row : t.rows) {
      line.clear();
      append_row(row, line);
      out.write(line.data(), static_cast<std::streamsize>(line.size()));
    }
    return;
  }
  constexpr size_t kBlock = 4096;
  std::vector<std::string> blocks(WorkerThreads() * 4);
  for (size_t first = 0; first < t.lazy_count; first += kBlock * blocks.size()) {
    ParallelFor(blocks.size(), [&](size_t b) {
      blocks[b].clear();
      std::vector<std::string> cells;
      size_t begin = first + b * kBlock, end = std::min(t.lazy_count, begin + kBlock);
      for (size_t i = begin; i < end; ++i) {
        cells.clear();
        t.lazy_row(i, cells);
        append_row(cells, blocks[b]);
      }
    });
    for (const auto& b : blocks) out.write(b.data(), static_cast<std::streamsize>(b.size()));
  }
}

void PrintCsv(const model::StatsTable& t, std::ostream& out) {
  render::CsvWriter w(out);
  std::vector<std::string> header;
  for (const auto& c : t.columns) header.push_back(c.header);
  w.Row(header);
  WriteRows(t, out, render::AppendCsvRow);
}

void PrintTable(const model::StatsTable& t, std::ostream& out) {
  std::vector<render::TextTable::Column> cols;
  for (const auto& c : t.columns) {
    cols.push_back({c.header, c.numeric ? render::TextTable::Align::kRight : render::TextTable::Align::kLeft});
  }
  render::TextTable table(std::move(cols));
  table.PrintRows(out, " ", [&](const render::TextTable::RowFn& fn) { t.ForEachRow(fn); });
}

// The same text as an nlohmann::ordered_json array of row objects dumped with indent 2, written
// one row at a time (a table can have millions of rows).
void PrintJson(const model::StatsTable& t, std::ostream& out) {
  out << '[';
  bool first = true;
  t.ForEachRow([&](const std::vector<std::string>& row) {
    nlohmann::ordered_json r;
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const auto& cell = row[c];
      nlohmann::ordered_json number;
      if (t.columns[c].numeric && !cell.empty()) number = nlohmann::ordered_json::parse(cell, nullptr, false);
      if (number.is_number()) {
        r[t.columns[c].header] = std::move(number);
      } else {  // text, or a numeric cell that is not a JSON number ("nan")
        r[t.columns[c].header] = cell;
      }
    }
    std::string text = r.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    out << (first ? "\n  " : ",\n  ");
    first = false;
    for (char ch : text) {
      out << ch;
      if (ch == '\n') out << "  ";
    }
  });
  out << (first ? "]\n" : "\n]\n");
}

class StatsCommand : public Command {
 public:
  void Declare(CLI::App& app) override {
    app.add_option("file", file_, "An nsys SQLite export");
    app.add_option("-r,--report", reports_, "Report to print (repeatable, or comma-separated)")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("-f,--format", format_, "csv (exactly as 'nsys stats --format csv'), table, json")
        ->check(CLI::IsMember({"csv", "table", "json"}))
        ->capture_default_str();
    app.add_flag("--help-reports", list_, "List the supported reports");
  }

  StatusOr<int> Run(Context& ctx) override {
    if (list_) {
      ctx.out << "Reports (the same names, columns and CSV as 'nsys stats'):\n" << ReportList();
      return 0;
    }
    if (file_.empty()) return Error(ExitCode::kUsage, "no export given. Usage: cpprof stats --report NAME FILE.sqlite");
    if (reports_.empty()) {
      return Error(ExitCode::kUsage, "no report given. Choose one with --report NAME:\n" + ReportList());
    }
    std::vector<const pipeline::StatsReportDef*> defs;
    for (const auto& name : reports_) {
      const auto* def = pipeline::FindStatsReport(name);
      if (!def) {
        return Error(ExitCode::kUsage, fmt::format("unknown report '{}'. Supported reports:\n{}", name, ReportList()));
      }
      defs.push_back(def);
    }
    bool first = true;
    for (const auto* def : defs) {
      CPPROF_ASSIGN_OR_RETURN(model::StatsTable t, pipeline::RunStatsReport(*def, file_));
      if (!t.skipped.empty()) {
        ctx.err << fmt::format("SKIPPED: {}\n", t.skipped);
        continue;
      }
      if (t.num_rows() == 0) {  // nsys writes nothing either ("PROCESSED (EMPTY RESULTS)")
        ctx.err << fmt::format("cpprof: note: {}: the export holds no data for this report\n", t.report);
        continue;
      }
      bool saturated = false;
      for (const auto& row : t.rows) {
        for (const auto& cell : row) saturated = saturated || cell == "9223372036854775807";
      }
      if (saturated) {
        ctx.err << fmt::format(
            "cpprof: note: {}: a total passed 2^63 - 1 and is shown as that (the export's times "
            "or sizes are damaged; 'cpprof report' leaves such rows out and counts them)\n",
            t.report);
      }
      if (defs.size() > 1) {
        if (!first) ctx.out << '\n';
        if (format_ != "json") ctx.out << fmt::format("** {} ({}):\n", t.title, t.report);
      }
      first = false;
      if (format_ == "csv") {
        PrintCsv(t, ctx.out);
      } else if (format_ == "json") {
        PrintJson(t, ctx.out);
      } else {
        PrintTable(t, ctx.out);
      }
    }
    return 0;
  }

 private:
  std::string file_;
  std::vector<std::string> reports_;
  std::string format_ = "table";
  bool list_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeStatsCommand() { return std::make_unique<StatsCommand>(); }

}  // namespace cpprof::cli
