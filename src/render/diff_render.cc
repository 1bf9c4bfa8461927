// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/diff_render.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "render/kernel_names.h"
#include "render/table.h"

namespace cpprof::render {

namespace {

std::string Delta(int64_t a, int64_t b, bool a_exists = true) {
  if (!a_exists || a == 0) return b == 0 ? "0" : "new";
  return fmt::format("{:+.1f}%", 100.0 * static_cast<double>(b - a) / static_cast<double>(a));
}

std::string SignedMs(int64_t a, int64_t b) {
  int64_t d = b - a;
  return (d >= 0 ? "+" : "-") + Ms(d >= 0 ? d : -d);
}

std::string SharePct(double f) { return fmt::format("{:.1f}", 100.0 * f); }

std::string Mib(const std::optional<int64_t>& v) {
  return v ? fmt::format("{:.1f}", static_cast<double>(*v) / (1024.0 * 1024.0)) : "-";
}

// The sanity line and its details, and a warning when the captures' options differ.
void PrintSanity(const model::ReportDiff& d, std::ostream& out) {
  out << "sanity: " << d.sanity_line << '\n';
  for (const auto& s : d.sanity_details) out << "  " << s << '\n';
  if (!d.options_a.empty()) {
    out << "warning: the two captures were made with different nsys options; time differences may come from the "
           "profiler, not the work:\n  A: "
        << d.options_a << "\n  B: " << d.options_b << '\n';
  }
}

// GPU time per rank: compute, exposed transfer, waiting and busy, A against B.
void PrintRankTimes(const model::ReportDiff& d, std::ostream& out) {
  out << "GPU time per rank (ms): compute, exposed transfer and waiting for peers apart (busy mixes them):\n";
  TextTable r({{"rank"},
               {"A compute"},
               {"B compute"},
               {"delta"},
               {"A transfer"},
               {"B transfer"},
               {"delta"},
               {"A waiting"},
               {"B waiting"},
               {"delta"},
               {"A busy"},
               {"B busy"},
               {"delta"}});
  for (const auto& x : d.ranks) {
    auto side = [](bool in, int64_t v) { return in ? Ms(v) : std::string("-"); };
    r.AddRow({std::to_string(x.rank), side(x.in_a, x.a_compute), side(x.in_b, x.b_compute),
              Delta(x.a_compute, x.b_compute, x.in_a), side(x.in_a, x.a_transfer), side(x.in_b, x.b_transfer),
              Delta(x.a_transfer, x.b_transfer, x.in_a), side(x.in_a, x.a_wait), side(x.in_b, x.b_wait),
              Delta(x.a_wait, x.b_wait, x.in_a), side(x.in_a, x.a_busy), side(x.in_b, x.b_busy),
              Delta(x.a_busy, x.b_busy, x.in_a)});
  }
  r.Print(out, "  ");
  out << "  compute = union of non-communication work; transfer = exposed transfer; waiting = NCCL kernels "
         "spinning for a late peer (cpprof help report).\n\n";
}

// Peak GPU memory per rank, A against B.
void PrintRankMemory(const model::ReportDiff& d, std::ostream& out) {
  out << "Peak GPU memory per rank (MiB):\n";
  TextTable m({{"rank"}, {"A peak"}, {"B peak"}, {"delta"}});
  for (const auto& x : d.ranks) {
    m.AddRow({std::to_string(x.rank), Mib(x.a_peak), Mib(x.b_peak),
              x.a_peak && x.b_peak ? Delta(*x.a_peak, *x.b_peak) : "-"});
  }
  m.Print(out, "  ");
  out << '\n';
}

// A mix of kernels or classes (label: the column of their kind or class, what: of their name):
// changed rows first, then at most `top` rows in all (0: all); kernel names shortened unless
// full_names.
void PrintMix(const std::vector<model::DiffRow>& rows, const char* label, const char* what, size_t top, bool kernels,
              bool full_names, std::ostream& out) {
  // The marker and the name say which row it is: both repeated when the columns wrap.
  TextTable t({{"", TextTable::Align::kLeft, 0, TextTable::Overflow::kElide, true},
               {"A inst"},
               {"B inst"},
               {"A ms"},
               {"B ms"},
               {"delta ms"},
               {"A share %"},
               {"B share %"},
               {label, TextTable::Align::kLeft, 0, TextTable::Overflow::kElide, kernels},
               // Kernel names are shortened by their template arguments, never cut in the middle: too
               // long for the line, they go whole under their rows.
               {what, TextTable::Align::kLeft, kernels ? size_t{0} : size_t{90},
                kernels ? TextTable::Overflow::kStack : TextTable::Overflow::kElide, !kernels}});
  // A kernel name too long for the line goes under its row ("      name: "), fitted to what is left.
  const size_t line = TextWidthScope::Current(), room = line > 12 + 24 ? line - 12 : 0;
  size_t shown = 0;
  for (const auto& row : rows) {
    if (top && shown >= top && row.marker == model::DiffMarker::kSame) break;
    t.AddRow({std::string(model::MarkerText(row.marker)), std::to_string(row.a_count), std::to_string(row.b_count),
              Ms(row.a_ns), Ms(row.b_ns), SignedMs(row.a_ns, row.b_ns), SharePct(row.a_share), SharePct(row.b_share),
              row.label,
              !kernels     ? row.key
              : full_names ? KernelNameForText(row.key, true)
                           : FitKernelName(KernelNameForText(row.key, false), room)});
    ++shown;
  }
  t.Print(out, "  ");
  if (shown < rows.size()) out << fmt::format("  ... {} more unchanged (--top 0 shows all)\n", rows.size() - shown);
}

// Modules, mean busy per rank, A against B (nothing when neither has modules).
void PrintModuleRows(const model::ReportDiff& d, std::ostream& out) {
  if (d.modules.empty()) return;
  out << "\nModules, mean busy per rank (ms):\n";
  TextTable t({{"", TextTable::Align::kLeft, 0, TextTable::Overflow::kElide, true},
               {"split", TextTable::Align::kLeft},
               {"A ms"},
               {"B ms"},
               {"delta ms"},
               {"delta"},
               {"A share %"},
               {"B share %"},
               {"module", TextTable::Align::kLeft, 90, TextTable::Overflow::kElide, true}});
  for (const auto& row : d.modules) {
    t.AddRow({std::string(model::MarkerText(row.marker)), row.label, Ms(row.a_ns), Ms(row.b_ns),
              SignedMs(row.a_ns, row.b_ns), Delta(row.a_ns, row.b_ns, row.marker != model::DiffMarker::kNew),
              SharePct(row.a_share), SharePct(row.b_share), row.key});
  }
  t.Print(out, "  ");
}

// The diff's lines before wrapping: the sanity line, the windows, each table.
void PrintDiffTextLines(const model::ReportDiff& d, const DiffRenderOptions& o, std::ostream& out) {
  PrintSanity(d, out);
  if (o.sanity_only) return;
  out << "\nA " << d.window_a << ".\nB " << d.window_b << ".\n";
  out << fmt::format(
      "\nA: {} rank{}, B: {} rank{}. Markers: [ = ] same (count, and time within {:.0f}%), [ ~ ] count changed, "
      "[ + ] / [ - ] time up / down by more than {:.0f}%, [NEW] only in B, [DEL] only in A; deltas are B - A.\n\n",
      d.a_ranks, d.a_ranks == 1 ? "" : "s", d.b_ranks, d.b_ranks == 1 ? "" : "s", 100 * model::kDiffTimeTolerance,
      100 * model::kDiffTimeTolerance);
  PrintRankTimes(d, out);
  PrintRankMemory(d, out);
  out << "Kernel classes, all ranks (share = of all GPU op time):\n";
  PrintMix(d.classes, "kind", "class", 0, false, o.full_names, out);
  out << "\nKernels and memory ops, all ranks (changed first, then by time):\n";
  PrintMix(d.kernels, "class", "name", o.top, true, o.full_names, out);
  PrintModuleRows(d, out);
  if (!d.regressions.empty()) {
    out << "\nREGRESSIONS:\n";
    for (const auto& s : d.regressions) out << "  " << s << '\n';
  }
}

}  // namespace

// The diff at the line width, as the report: tables fit it, then the prose is wrapped. --sanity's
// answer stays one line (scripts read it).
void PrintDiffText(const model::ReportDiff& d, const DiffRenderOptions& o, std::ostream& out) {
  const size_t line = o.sanity_only ? 0 : o.width;
  TextWidthScope width(line);
  std::ostringstream text;
  PrintDiffTextLines(d, o, text);
  out << WrapLines(text.str(), line);
}

void PrintDiffJson(const model::ReportDiff& d, std::ostream& out) {
  using Json = nlohmann::ordered_json;
  auto rows = [](const std::vector<model::DiffRow>& v) {
    Json a = Json::array();
    for (const auto& r : v) {
      a.push_back({{"marker", model::MarkerText(r.marker)},
                   {"key", r.key},
                   {"label", r.label},
                   {"a_count", r.a_count},
                   {"b_count", r.b_count},
                   {"a_ns", r.a_ns},
                   {"b_ns", r.b_ns},
                   {"a_share", r.a_share},
                   {"b_share", r.b_share}});
    }
    return a;
  };
  Json j;
  j["schema"] = "cpprof.diff/2";
  j["same_work"] = d.same_work;
  j["kernels_same"] = d.kernels_same;
  j["memory_same"] = d.memory_same;
  j["options_differ"] = !d.options_a.empty();
  j["options_a"] = d.options_a;
  j["options_b"] = d.options_b;
  j["window_a"] = d.window_a;
  j["window_b"] = d.window_b;
  j["sanity"] = d.sanity_line;
  j["sanity_details"] = d.sanity_details;
  j["memory_compared"] = d.memory_compared;
  j["regressions"] = d.regressions;
  j["a_ranks"] = d.a_ranks;
  j["b_ranks"] = d.b_ranks;
  Json ranks = Json::array();
  for (const auto& x : d.ranks) {
    Json r = {{"rank", x.rank},
              {"in_a", x.in_a},
              {"in_b", x.in_b},
              {"a_busy_ns", x.a_busy},
              {"b_busy_ns", x.b_busy},
              {"a_comm_ns", x.a_comm},
              {"b_comm_ns", x.b_comm},
              {"a_compute_ns", x.a_compute},
              {"b_compute_ns", x.b_compute},
              {"a_exposed_transfer_ns", x.a_transfer},
              {"b_exposed_transfer_ns", x.b_transfer},
              {"a_wait_ns", x.a_wait},
              {"b_wait_ns", x.b_wait},
              {"a_idle_ns", x.a_idle},
              {"b_idle_ns", x.b_idle}};
    r["a_peak_bytes"] = x.a_peak ? Json(*x.a_peak) : Json(nullptr);
    r["b_peak_bytes"] = x.b_peak ? Json(*x.b_peak) : Json(nullptr);
    ranks.push_back(r);
  }
  j["ranks"] = ranks;
  j["classes"] = rows(d.classes);
  j["kernels"] = rows(d.kernels);
  j["modules"] = rows(d.modules);
  out << j.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
}

}  // namespace cpprof::render
