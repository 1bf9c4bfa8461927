// cpprof stats --report NAME [--report NAME ...] [--format csv|table|json] FILE.sqlite
#include <fmt/format.h>

#include <nlohmann/json.hpp>

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

void PrintCsv(const model::StatsTable& t, std::ostream& out) {
  render::CsvWriter w(out);
  std::vector<std::string> header;
  for (const auto& c : t.columns) header.push_back(c.header);
  w.Row(header);
  for (const auto& row : t.rows) w.Row(row);
}

void PrintTable(const model::StatsTable& t, std::ostream& out) {
  std::vector<render::TextTable::Column> cols;
  for (const auto& c : t.columns) {
    cols.push_back({c.header, c.numeric ? render::TextTable::Align::kRight : render::TextTable::Align::kLeft});
  }
  render::TextTable table(std::move(cols));
  for (const auto& row : t.rows) table.AddRow(row);
  table.Print(out, " ");
}

void PrintJson(const model::StatsTable& t, std::ostream& out) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : t.rows) {
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
    rows.push_back(std::move(r));
  }
  out << rows.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
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
      if (t.rows.empty()) {  // nsys writes nothing either ("PROCESSED (EMPTY RESULTS)")
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
