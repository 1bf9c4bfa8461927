// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// cpprof stats [--merge] [--report NAME ...] [--format column|csv|tsv|json[,...]] [--timeunit UNIT] [-o PREFIX] [-q]
//              EXPORTS...
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/input_files.h"
#include "base/parallel.h"
#include "cli/command.h"
#include "doctor/doctor.h"
#include "doctor/nsys_export.h"
#include "pipeline/run_reader.h"
#include "pipeline/stats_reports.h"
#include "render/csv.h"
#include "render/stats_units.h"
#include "render/table.h"

namespace cpprof::cli {

namespace {

std::string ReportList() {
  std::string s;
  for (const auto& r : pipeline::StatsReports()) s += fmt::format("  {:<22}  {}\n", r.name, r.what);
  return s;
}

// Writes every row as `append_row` formats it. The rows of a large (lazy) table are made and
// formatted in blocks on `threads` threads, and written in order: the output is the same whatever
// the thread count.
void WriteRows(const model::StatsTable& t, std::ostream& out,
               void (*append_row)(const std::vector<std::string>&, std::string&), size_t threads) {
  std::string line;
  if (!t.lazy_row) {
    for (const auto& row : t.rows) {
      line.clear();
      append_row(row, line);
      out.write(line.data(), static_cast<std::streamsize>(line.size()));
    }
    return;
  }
  // Two blocks per thread (some rows cost more than others) of 2048 rows of about 150 bytes: about
  // 600 KB per thread held at once (four blocks of 4096 would be about 40 MB on 16 cores, 4 % of a
  // 10 GB export's memory target; an estimate from the rows' size, not measured on its own).
  constexpr size_t kBlock = 2048;
  std::vector<std::string> blocks(threads * 2);
  for (size_t first = 0; first < t.lazy_count; first += kBlock * blocks.size()) {
    ParallelFor(threads, blocks.size(), [&](size_t b) {
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

// A header line and the rows, each line made by `append_row` (CSV or TSV).
void PrintSeparated(const model::StatsTable& t, std::ostream& out, size_t threads,
                    void (*append_row)(const std::vector<std::string>&, std::string&)) {
  std::vector<std::string> header;
  for (const auto& c : t.columns) header.push_back(c.header);
  std::string line;
  append_row(header, line);
  out << line;
  WriteRows(t, out, append_row, threads);
}

void PrintCsv(const model::StatsTable& t, std::ostream& out, size_t threads) {
  PrintSeparated(t, out, threads, render::AppendCsvRow);
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

// nsys's default report set (nsys's order) as far as cpprof implements it: the names, and the
// nsys-only rest.
std::vector<std::string> DefaultReports(std::vector<std::string>* nsys_only) {
  std::vector<std::string> names;
  for (std::string_view name : pipeline::NsysDefaultReports()) {
    (pipeline::FindStatsReport(name) ? names : *nsys_only).emplace_back(name);
  }
  return names;
}

std::string DefaultReportList() {
  std::vector<std::string> nsys_only;
  std::string s;
  for (const auto& name : DefaultReports(&nsys_only)) s += (s.empty() ? "" : ", ") + name;
  return s;
}

// Why `name` is not a report cpprof runs: an nsys report it does not implement (run nsys for it),
// or a name nsys does not have either.
Status UnknownReport(const std::string& name) {
  if (pipeline::IsNsysOnlyReport(name)) {
    return Error(ExitCode::kUsage,
                 fmt::format("report '{}' is an nsys report that cpprof does not implement: run 'nsys stats -r {} "
                             "FILE' for it. cpprof's reports:\n{}",
                             name, name, ReportList()));
  }
  return Error(ExitCode::kUsage,
               fmt::format("unknown report '{}': neither cpprof nor nsys has a report of that name ('nsys stats "
                           "--help-reports' lists nsys's). cpprof's reports:\n{}",
                           name, ReportList()));
}

const char* Extension(const std::string& format) {
  return format == "json" ? ".json" : format == "column" ? ".txt" : format == "tsv" ? ".tsv" : ".csv";
}

// One --format entry as nsys spells it (`name[:args]`, '.' for the output's default) → cpprof's
// format name: column (also 'table', cpprof's earlier name for it), csv, tsv or json.
StatusOr<std::string> ParseFormat(const std::string& entry, bool to_files) {
  const std::string name = entry.substr(0, entry.find(':'));
  if (name != entry) {
    return Error(ExitCode::kUsage,
                 fmt::format("--format '{}': cpprof's formats take no arguments ('{}'); give '{}' alone, or run "
                             "'nsys stats --format {}' for nsys's formatter options",
                             entry, entry.substr(name.size() + 1), name, entry));
  }
  if (name == ".") return std::string(to_files ? "csv" : "column");  // nsys: the output's default
  if (name == "table" || name == "column") return std::string("column");
  if (name == "csv" || name == "tsv" || name == "json") return name;
  if (name == "hdoc" || name == "htable") {
    return Error(ExitCode::kUsage,
                 fmt::format("--format {}: nsys's HTML formatters are not in cpprof (formats: column, csv, tsv, json); "
                             "run 'nsys stats --format {}' for HTML, or 'cpprof report --format html' for cpprof's "
                             "own HTML report",
                             name, name));
  }
  return Error(ExitCode::kUsage,
               fmt::format("--format '{}' is not a format: use column (nsys's console format; 'table' is the "
                           "same), csv, tsv or json, one or a comma list (one per --report, the last for the rest)",
                           entry));
}

// A --report entry as nsys spells it (`name[:args]`): cpprof's reports take no arguments, so one
// with an argument is refused with the nsys command that runs it and the cpprof command nearest it.
Status CheckReportArgs(const std::string& entry) {
  const size_t colon = entry.find(':');
  if (colon == std::string::npos) return OkStatus();
  const std::string name = entry.substr(0, colon);
  if (!pipeline::FindStatsReport(name)) return OkStatus();  // said as an unknown or nsys-only report
  return Error(ExitCode::kUsage,
               fmt::format("--report '{}': cpprof's {} takes no arguments ('{}' is an nsys report argument, e.g. "
                           "':base' for kernels' base names); run 'nsys stats -r {} FILE' for it, or '-r {}' for "
                           "cpprof's table (the names as the export holds them, demangled)",
                           entry, name, entry.substr(colon + 1), entry, name));
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class StatsCommand : public Command {
 public:
  void Declare(CLI::App& app) override {
    app.add_option("exports", files_,
                   "An nsys SQLite export (.sqlite.xz, .gz and .zst read as they are), or an .nsys-rep report "
                   "(exported to SQLite beside it with the nsys "
                   "'cpprof doctor' finds, as 'nsys stats' does); several (files, a directory, a quoted glob): "
                   "each export's reports in turn, as 'nsys stats' does with several inputs (or one table per "
                   "report over all of them with --merge)");
    app.add_flag(
        "--merge", merge_,
        "Several exports (one per rank or node of a run): one table per report over all of them, the table "
        "'nsys stats' would print for one export holding all their rows (groups matched by name; "
        "nvtx_gpu_proj_sum projects each range onto its own export's GPU work). Exports not from one run "
        "(another command or launcher, captures that do not overlap, or one capture given twice) are "
        "refused, as 'report' refuses them, unless --force. Without it, as nsys: each export's tables in turn");
    app.add_option("-r,--report", reports_,
                   "Report to print (repeatable, or comma-separated); none: nsys's default set as far as cpprof "
                   "implements it, in nsys's order (" +
                       DefaultReportList() +
                       "; a note names the rest of nsys's default set where the export holds their data). An nsys "
                       "report cpprof does not implement is refused with the 'nsys stats -r' command to run")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("-f,--format", formats_,
                   "column (nsys's console table; 'table' is the same), csv (exactly as 'nsys stats --format csv'), "
                   "tsv (tab-separated; a tab, newline or backslash in a cell escaped as \\t, \\n, \\\\), json; '.': "
                   "the output's default, column on the console and csv in -o files (as nsys). A comma list (or "
                   "the option repeated) gives one format per --report in order, the last for the rest, as nsys")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("--timeunit", timeunit_,
                   "Unit of the time columns, as nsys: nsec (default), usec, msec, sec (longest prefix: us, milli, "
                   "s, ...); the '(ns)' in their headers changes with it");
    app.add_option("-o,--output", output_,
                   "Write each report to PREFIX_<report>.csv (.txt for table, .json for json) instead of the "
                   "console; '.': the export's name without .sqlite (not with --merge); '-': the console. Several "
                   "exports: PREFIX_<export>_<report>.csv (exports of one file name in different folders named by "
                   "their folders too: PREFIX_a_x_<report>.csv, PREFIX_b_x_<report>.csv), or PREFIX_<report>.csv "
                   "with --merge. All files or none: they are put in place once every report succeeded. Existing "
                   "files are kept unless --force");
    app.add_flag("--force", force_,
                 "Replace existing -o files; --merge: merge the exports even when their commands or start times say "
                 "they are not from one run");
    app.add_flag("--force-export", force_export_,
                 "Given an .nsys-rep: export it again over the .sqlite beside it (without this an existing one is "
                 "used, as 'nsys stats' does)");
    app.add_option("--nsys", nsys_, "The nsys that exports an .nsys-rep (default: the one 'cpprof doctor' picks)");
    app.add_flag("-q,--quiet", quiet_,
                 "Only errors and SKIPPED lines on stderr: no notes and no 'REPORT -> FILE' lines (as nsys's -q)");
    app.add_flag("--help-reports", list_, "List the supported reports");
  }

  StatusOr<int> Run(Context& ctx) override {
    if (list_) {
      ctx.out << "Reports (the same names, columns and CSV as 'nsys stats'):\n" << ReportList();
      return 0;
    }
    if (files_.empty()) {
      return Error(ExitCode::kUsage, "no export given. Usage: cpprof stats [--report NAME] FILE.sqlite");
    }
    render::TimeUnit unit = render::TimeUnit::kNsec;
    if (!timeunit_.empty()) {
      auto u = render::ParseTimeUnit(timeunit_);
      if (!u) {
        return Error(
            ExitCode::kUsage,
            fmt::format("--timeunit '{}' is not a unit (or is ambiguous). Use nsec, usec, msec or sec.", timeunit_));
      }
      unit = *u;
    }
    std::vector<std::string> names = reports_;
    default_set_ = names.empty();
    if (default_set_) {
      std::vector<std::string> nsys_only;
      names = DefaultReports(&nsys_only);
    }
    std::vector<const pipeline::StatsReportDef*> defs;
    for (const auto& name : names) {
      CPPROF_RETURN_IF_ERROR(CheckReportArgs(name));
      const auto* def = pipeline::FindStatsReport(name);
      if (!def) return UnknownReport(name);
      if (std::find(defs.begin(), defs.end(), def) == defs.end()) defs.push_back(def);  // once each
    }
    const bool to_files = !output_.empty() && output_ != "-";
    CPPROF_ASSIGN_OR_RETURN(std::vector<std::string> formats, Formats(defs.size(), to_files));
    if (quiet_) ctx.exec.diagnostics = &quiet_sink_;
    // Several exports: a directory or glob gives their .sqlite files; .nsys-rep files are kept.
    std::vector<std::string> files;
    for (const auto& f : files_) {
      if (doctor::IsNsysReport(f)) {
        files.push_back(f);
        continue;
      }
      CPPROF_ASSIGN_OR_RETURN(std::vector<std::string> expanded, ExpandInputs({f}));
      files.insert(files.end(), expanded.begin(), expanded.end());
    }
    CPPROF_ASSIGN_OR_RETURN(std::vector<ReportSet> sets, ReportSets(files, formats, to_files, ctx));
    if (!to_files) {
      for (size_t e = 0; e < sets.size(); ++e) {
        if (sets.size() > 1) ctx.out << (e ? "\n" : "") << fmt::format("==> {} <==\n", files[e]);
        CPPROF_RETURN_IF_ERROR(RunReports(sets[e].inputs, defs, formats, unit, ctx, nullptr));
      }
      return 0;
    }
    CPPROF_RETURN_IF_ERROR(WriteReportFiles(sets, defs, formats, unit, ctx));
    return 0;
  }

 private:
  // The reports of one export, or of several merged into one table each (--merge), and with -o
  // the prefix of its files.
  struct ReportSet {
    std::vector<std::string> inputs;
    std::string prefix;
  };

  // The table sets to make: all the exports as one (--merge: of one run) or one set per export.
  StatusOr<std::vector<ReportSet>> ReportSets(const std::vector<std::string>& files,
                                              const std::vector<std::string>& formats, bool to_files, Context& ctx) {
    std::vector<ReportSet> sets;
    if (merge_) {
      if (to_files && output_ == ".") {
        return Error(ExitCode::kUsage,
                     "--merge writes one set of files for all the exports: give -o PREFIX (files "
                     "PREFIX_<report>.csv), not '-o .' (which names the files after one export)");
      }
      ReportSet set{{}, output_};
      for (const auto& f : files) {
        CPPROF_ASSIGN_OR_RETURN(std::string input, Input(f, ctx));
        set.inputs.push_back(std::move(input));
      }
      // One table over exports of different runs would mean nothing: refused as `report` refuses them.
      CPPROF_RETURN_IF_ERROR(pipeline::CheckSameRun(set.inputs, force_, ctx.exec));
      sets.push_back(std::move(set));
    } else {
      const bool json = std::find(formats.begin(), formats.end(), "json") != formats.end();
      if (files.size() > 1 && !to_files && json) {
        return Error(ExitCode::kUsage,
                     "--format json of several exports is one document per export: give -o PREFIX (files "
                     "PREFIX_<export>_<report>.json)");
      }
      for (const auto& f : files) {
        CPPROF_ASSIGN_OR_RETURN(std::string input, Input(f, ctx));
        sets.push_back({{std::move(input)}, output_});
      }
      NameFilesPerExport(sets);
    }
    return sets;
  }

  // -o with several exports: PREFIX_<export>_<report>, the export named by as many trailing path
  // components as tell it from the others ('a/x.sqlite', 'b/x.sqlite' -> PREFIX_a_x_..., PREFIX_b_x_...);
  // '-o .': beside each export, after its own name.
  void NameFilesPerExport(std::vector<ReportSet>& sets) const {
    std::vector<std::string> stems;
    for (const auto& set : sets) {
      const std::string& input = set.inputs.front();
      stems.push_back(EndsWith(input, ".sqlite") ? input.substr(0, input.size() - 7) : input);
    }
    const std::vector<std::string> names = DistinctNames(stems);
    for (size_t e = 0; e < sets.size(); ++e) {
      if (output_ == ".") {
        sets[e].prefix = stems[e];
      } else if (sets.size() > 1) {
        std::string name = names[e];
        std::replace(name.begin(), name.end(), '/', '_');
        sets[e].prefix = output_ + "_" + name;
      }
    }
  }

  // Every -o file of every set, all or none: each path is checked before the first report runs
  // (a wrong -o is said at once), the files are written side by side and put in place only once
  // every report of every export has succeeded.
  Status WriteReportFiles(const std::vector<ReportSet>& sets, const std::vector<const pipeline::StatsReportDef*>& defs,
                          const std::vector<std::string>& formats, render::TimeUnit unit, Context& ctx) {
    std::vector<std::string> paths, inputs;
    for (const auto& set : sets) inputs.insert(inputs.end(), set.inputs.begin(), set.inputs.end());
    WriteFileOptions write;
    write.replace_existing = force_;
    write.inputs = inputs;
    for (const auto& set : sets) {
      for (size_t i = 0; i < defs.size(); ++i) {
        paths.push_back(fmt::format("{}_{}{}", set.prefix, defs[i]->name, Extension(formats[i])));
        if (std::find(paths.begin(), paths.end() - 1, paths.back()) != paths.end() - 1) {
          return Error(ExitCode::kUsage, fmt::format("two exports would both write '{}': give each export once, "
                                                     "or run stats on them one at a time with their own -o",
                                                     paths.back()));
        }
        CPPROF_RETURN_IF_ERROR(CheckOutputPath(paths.back(), write));
      }
    }
    std::vector<std::string> done;  // what each file holds, said once all are in place
    CPPROF_RETURN_IF_ERROR(WriteFilesAtomically(
        paths,
        [&](const std::vector<std::ostream*>& streams) -> Status {
          for (size_t s = 0; s < sets.size(); ++s) {
            std::vector<std::ostream*> mine(streams.begin() + static_cast<std::ptrdiff_t>(s * defs.size()),
                                            streams.begin() + static_cast<std::ptrdiff_t>((s + 1) * defs.size()));
            CPPROF_RETURN_IF_ERROR(RunReports(sets[s].inputs, defs, formats, unit, ctx, &mine, &done));
          }
          return OkStatus();
        },
        write));
    for (size_t i = 0; i < paths.size() && !quiet_; ++i)
      ctx.err << fmt::format("cpprof: stats: {} -> {}{}\n", defs[i % defs.size()]->name, paths[i], done[i]);
    return OkStatus();
  }

  // The format of each of `reports` reports, from --format as nsys reads it: one per report in
  // order, the last for the rest.
  StatusOr<std::vector<std::string>> Formats(size_t reports, bool to_files) const {
    if (formats_.size() > std::max<size_t>(reports, 1)) {
      return Error(ExitCode::kUsage, fmt::format("--format gives {} formats for {} report(s): give one per report, "
                                                 "or one for all",
                                                 formats_.size(), reports));
    }
    std::vector<std::string> formats;
    for (size_t i = 0; i < reports; ++i) {
      const std::string entry = formats_.empty() ? "." : formats_[std::min(i, formats_.size() - 1)];
      CPPROF_ASSIGN_OR_RETURN(std::string format, ParseFormat(entry, to_files));
      formats.push_back(std::move(format));
    }
    return formats;
  }

  // The export to read for an input: itself, or the SQLite export of an .nsys-rep.
  StatusOr<std::string> Input(const std::string& file, Context& ctx) {
    if (doctor::IsNsysReport(file)) return ExportedSqlite(file, ctx);
    return file;
  }

  // The reports of one export, or of several merged into one table each (--merge), to the
  // console or (`files`) to one stream per report, `done` getting " (empty)" or "" per report.
  Status RunReports(const std::vector<std::string>& inputs, const std::vector<const pipeline::StatsReportDef*>& defs,
                    const std::vector<std::string>& formats, render::TimeUnit unit, Context& ctx,
                    const std::vector<std::ostream*>* files, std::vector<std::string>* done = nullptr) {
    bool first = true;
    for (size_t i = 0; i < defs.size(); ++i) {
      const auto* def = defs[i];
      const std::string& format = formats[i];
      CPPROF_ASSIGN_OR_RETURN(model::StatsTable t, pipeline::RunStatsReport(*def, inputs, ctx.exec));
      ctx.invalid_utf8 = ctx.invalid_utf8 || t.invalid_utf8;
      render::ApplyTimeUnit(t, unit);
      bool empty = !t.skipped.empty() || t.num_rows() == 0;
      if (!t.skipped.empty()) {  // one line per export (--merge: each export lacked the data)
        for (size_t begin = 0; begin < t.skipped.size();) {
          size_t end = std::min(t.skipped.find('\n', begin), t.skipped.size());
          ctx.err << fmt::format("SKIPPED: {}\n", std::string_view(t.skipped).substr(begin, end - begin));
          begin = end + 1;
        }
      } else if (t.num_rows() == 0) {  // nsys writes nothing either ("PROCESSED (EMPTY RESULTS)")
        if (!quiet_) ctx.err << fmt::format("cpprof: note: {}: the export holds no data for this report\n", t.report);
      } else {
        NoteSaturated(t, ctx);
      }
      for (const auto& note : t.notes) {
        if (!quiet_) ctx.err << fmt::format("cpprof: note: {}: {}\n", def->name, note);
      }
      if (files) {
        // nsys leaves an empty file for a report without data; so does cpprof.
        if (!empty) Print(t, format, ctx.exec.threads, *(*files)[i]);
        done->push_back(empty ? " (empty)" : "");
        continue;
      }
      if (empty) continue;
      if (defs.size() > 1) {
        if (!first) ctx.out << '\n';
        if (format != "json") ctx.out << fmt::format("** {} ({}):\n", t.title, t.report);
      }
      first = false;
      Print(t, format, ctx.exec.threads, ctx.out);
    }
    if (default_set_ && !quiet_) NoteNsysOnlyDefaults(inputs, ctx);
    return OkStatus();
  }

  // The rest of nsys's default set, where the exports hold data for it: what to run instead.
  static void NoteNsysOnlyDefaults(const std::vector<std::string>& inputs, Context& ctx) {
    for (const auto& name : pipeline::NsysOnlyDefaultReportsWithData(inputs, ctx.exec)) {
      ctx.err << fmt::format(
          "cpprof: note: stats: nsys's default set also has {}, which cpprof does not implement, and the export "
          "holds its data: run 'nsys stats -r {} {}'\n",
          name, name, inputs.size() == 1 ? inputs.front() : "FILE");
    }
  }

  static void Print(const model::StatsTable& t, const std::string& format, size_t threads, std::ostream& out) {
    if (format == "csv") {
      PrintCsv(t, out, threads);
    } else if (format == "tsv") {
      PrintSeparated(t, out, threads, render::AppendTsvRow);
    } else if (format == "json") {
      PrintJson(t, out);
    } else {
      PrintTable(t, out);
    }
  }

  static void NoteSaturated(const model::StatsTable& t, Context& ctx) {
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
  }

  // An .nsys-rep given instead of its export: the .sqlite beside it when there is one (as nsys
  // stats does), else exported there with the nsys the doctor picks. No nsys: the hint to export.
  StatusOr<std::string> ExportedSqlite(const std::string& file, Context& ctx) {
    std::string sqlite = doctor::SqliteBeside(file);
    bool exists = ::access(sqlite.c_str(), F_OK) == 0;
    if (exists && !force_export_) {
      ctx.err << fmt::format(
          "cpprof: note: stats: reading '{}', the export beside '{}' (--force-export exports the report again "
          "over it)\n",
          sqlite, file);
      return sqlite;
    }
    if (::access(file.c_str(), R_OK) != 0) return file;  // the reader says what is wrong with the path
    runner::Environment env = runner::Environment::FromProcess();
    runner::RealProcessRunner runner;
    doctor::DoctorOptions o;
    o.nsys_only = true;
    o.nsys = nsys_;
    doctor::DoctorFindings f = doctor::Diagnose(o, runner, env);
    const doctor::NsysCandidate* nsys = f.Chosen();
    if (!nsys) {
      std::string why = nsys_.empty() ? "no nsys was found on this machine to export it ('cpprof doctor' shows "
                                        "where it looked)"
                                      : fmt::format("--nsys '{}' cannot be used", nsys_);
      for (const auto& c : f.candidates) {
        if (!nsys_.empty() && !c.error.empty()) why += ": " + c.error;
      }
      return Error(ExitCode::kBadInput,
                   fmt::format("'{}' is an nsys report, not its SQLite export, and {}. Export it with 'nsys export "
                               "--type sqlite {}' and give the .sqlite, or pass --nsys PATH.",
                               file, why, file));
    }
    ctx.err << fmt::format("cpprof: stats: exporting '{}' to '{}' with {} ({})\n", file, sqlite, nsys->path,
                           nsys->version_text);
    doctor::NsysExportRequest req;
    req.nsys = nsys->path;
    req.report = file;
    req.sqlite = sqlite;
    req.replace = force_export_;
    req.env = f.profile_env;
    CPPROF_RETURN_IF_ERROR(doctor::ExportNsysReport(req, runner, env));
    return sqlite;
  }

  std::vector<std::string> files_;
  std::vector<std::string> reports_;
  std::vector<std::string> formats_;
  std::string timeunit_;
  std::string output_;
  std::string nsys_;
  bool force_ = false;
  bool force_export_ = false;
  bool list_ = false;
  bool merge_ = false;
  bool quiet_ = false;
  // -q: the notes of the readers below (decompressing, timing) go nowhere.
  struct QuietSink : Diagnostics {
    void Line(std::string_view) override {}
  } quiet_sink_;
  bool default_set_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeStatsCommand() { return std::make_unique<StatsCommand>(); }

}  // namespace cpprof::cli
