// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/readout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <tuple>

#include "render/efficiency_render.h"
#include "render/replay_render.h"
#include "render/table.h"

namespace cpprof::render {

using model::OpClass;

namespace {

int64_t MeanBusy(const model::Report& r) {
  if (r.ranks.empty()) return 0;
  int64_t sum = 0;
  for (const auto& s : r.ranks) sum += s.busy_ns;
  return sum / static_cast<int64_t>(r.ranks.size());
}

template <typename F>
int64_t MeanOver(const model::ModuleNode& m, F f) {
  if (m.per_rank.empty()) return 0;
  int64_t sum = 0;
  for (const auto& t : m.per_rank) sum += f(t);
  return sum / static_cast<int64_t>(m.per_rank.size());
}

std::string Split(const model::ModuleNode& m) {
  if (m.name == "[unattributed]") return "-";
  return m.cp_distributed ? "CP" : "serial";
}

// A Markdown table: header, separator, rows; cells have '|' escaped.
class MdTable {
 public:
  explicit MdTable(std::vector<std::string> header, std::vector<bool> right)
      : header_(std::move(header)), right_(std::move(right)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void Print(std::ostream& out) const {
    auto line = [&](const std::vector<std::string>& cells) {
      out << '|';
      for (const auto& c : cells) {
        std::string e;
        for (char ch : c) {
          if (ch == '|') e += '\\';
          e += ch;
        }
        out << ' ' << e << " |";
      }
      out << '\n';
    };
    line(header_);
    out << '|';
    for (size_t i = 0; i < header_.size(); ++i) out << (right_[i] ? "---:|" : "---|");
    out << '\n';
    for (const auto& r : rows_) line(r);
  }

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

std::string Rank(int r) { return r < 0 ? "-" : std::to_string(r); }

// An nsys message a diagnostic already quotes (and explains) is not printed twice.
bool Covered(const model::Report& r, const model::NsysMessage& m) {
  for (const auto& d : r.diagnostics) {
    if (d.detail.find(m.text) != std::string::npos || d.title.find(m.text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::vector<CpSplit> CpSplitPerRank(const model::Report& r) {
  std::vector<CpSplit> out(r.ranks.size());
  for (const auto& m : r.modules) {
    for (size_t k = 0; k < m.per_rank.size() && k < out.size(); ++k) {
      int64_t own = m.per_rank[k].own_ns;
      if (m.name == "[unattributed]" && m.parent < 0) {
        out[k].unattributed_ns += own;
      } else {
        (m.cp_distributed ? out[k].cp_ns : out[k].serial_ns) += own;
      }
    }
  }
  return out;
}

constexpr const char* kBackwardNote =
    "bwd % = the part of the module's time launched by the backward pass (mapped to the forward op's "
    "module through autograd's sequence numbers, --pytorch=autograd-nvtx); [backward] = backward work "
    "that could not be mapped.";

std::string CommByKindMs(const model::ModuleNode& m) {
  std::vector<std::pair<int64_t, int>> kinds;
  for (int k = 0; k < model::kNumOpClasses; ++k) {
    int64_t v = MeanOver(m, [&](const model::ModuleRankTime& t) { return t.comm_kind_ns[k]; });
    if (v > 0) kinds.push_back({v, k});
  }
  std::sort(kinds.begin(), kinds.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::string s;
  for (const auto& [v, k] : kinds) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", model::kOpClassNames[k], Ms(v));
  return s;
}

namespace {

// The module rows down to the depth: name (indented), split, mean and max, share, straggler, comm,
// hidden, wait, comm by kind; in a training run bwd % after the share.
std::vector<std::vector<std::string>> ModuleRows(const model::Report& r, const ReadoutOptions& o, int64_t mean_busy,
                                                 bool training) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : r.modules) {
    if (m.depth > o.module_depth) continue;
    int64_t comm = MeanOver(m, [](const auto& t) { return t.comm_ns; });
    int64_t hidden = MeanOver(m, [](const auto& t) { return t.hidden_ns; });
    int64_t wait = MeanOver(m, [](const auto& t) { return t.wait_ns; });
    std::string indent(o.markdown ? 0 : 2 * static_cast<size_t>(m.depth), ' ');
    std::string name = o.markdown ? std::string(static_cast<size_t>(m.depth) * 2, '.') + m.name : indent + m.name;
    rows.push_back({name, Split(m), Ms(m.mean_busy_ns), Ms(m.max_busy_ns), Percent(m.mean_busy_ns, mean_busy),
                    r.ranks.size() > 1 ? Rank(m.straggler_rank) : "-", comm ? Ms(comm) : "-",
                    comm ? Percent(hidden, comm) : "-", comm ? Ms(wait) : "-", CommByKindMs(m)});
    if (training) {
      int64_t backward = MeanOver(m, [](const auto& t) { return t.backward_ns; });
      rows.back().insert(rows.back().begin() + 4, m.mean_busy_ns ? Percent(backward, m.mean_busy_ns) : "-");
    }
  }
  return rows;
}

// The CP, serial and unattributed split of busy time, mean over ranks.
CpSplit MeanCpSplit(const model::Report& r) {
  std::vector<CpSplit> split = CpSplitPerRank(r);
  CpSplit mean;
  for (const auto& s : split)
    mean.cp_ns += s.cp_ns, mean.serial_ns += s.serial_ns, mean.unattributed_ns += s.unattributed_ns;
  if (!split.empty()) {
    int64_t n = static_cast<int64_t>(split.size());
    mean.cp_ns /= n, mean.serial_ns /= n, mean.unattributed_ns /= n;
  }
  return mean;
}

// The coverage (GPU time in a named module, per rank) and, where module rows came from Python
// backtraces, how they were made: a sentence each.
std::vector<std::string> ModuleSourceLines(const model::Report& r) {
  std::vector<std::string> lines;
  const std::vector<CpSplit> split = CpSplitPerRank(r);
  std::vector<std::string> per_rank;
  for (size_t k = 0; k < split.size(); ++k) {
    const CpSplit& s = split[k];
    per_rank.push_back(fmt::format("rank {} {}%", k, Percent(s.named_ns(), s.named_ns() + s.unattributed_ns)));
  }
  constexpr size_t kListed = 16;
  if (per_rank.size() > kListed) {
    const size_t more = per_rank.size() - kListed;
    per_rank.resize(kListed);
    per_rank.push_back(fmt::format("and {} more ranks (--format json has every rank)", more));
  }
  if (!per_rank.empty()) {
    lines.push_back(
        fmt::format("Coverage (GPU busy time attributed to a named module): {}.", fmt::join(per_rank, ", ")));
  }
  const model::BacktraceModuleSummary& b = r.grouping.backtraces;
  if (b.empty()) return lines;
  std::string text = fmt::format(
      "Modules from Python backtraces (--python-backtrace=cuda; rows of the domain 'Python backtrace'): {} of {} "
      "launches' backtraces gave a module path ({} inside NVTX module ranges were left to them), {} calls of {} "
      "methods",
      b.used, b.backtraces, b.in_nvtx_modules, b.ranges, b.methods);
  text += b.files_read ? fmt::format("; named Class.method from {} source files", b.files_read)
                       : std::string("; no source file found, so no method could be named Class.method");
  if (!b.files_missing.empty()) {
    text += fmt::format(
        "; {} files not found (nn.Module calls there named file:function; --source-root DIR finds them "
        "elsewhere): {}",
        b.files_missing.size(), fmt::join(b.files_missing, ", "));
  }
  if (b.frames_not_matching) {
    text +=
        fmt::format("; {} frames did not match the source found (edited since the capture?)", b.frames_not_matching);
  }
  if (b.damaged) text += fmt::format("; {} backtraces could not be read and were left out", b.damaged);
  text +=
      ". A launch without a backtrace (library kernels such as cuBLAS's) goes to the calls of the backtrace before it, "
      "or, within 20 us of the next backtrace, to that one's (docs/modules.md).";
  lines.push_back(std::move(text));
  return lines;
}

// The module table in Markdown, with what its columns mean and the CP split.
void PrintModulesMarkdown(const model::Report& r, std::vector<std::vector<std::string>> rows, int64_t mean_busy,
                          bool training, std::ostream& out) {
  const CpSplit mean = MeanCpSplit(r);
  out << fmt::format("### Modules ({})\n\n", r.grouping.source);
  std::vector<std::string> header{"module",    "split",   "mean ms", "max ms",  "share",
                                  "straggler", "comm ms", "hidden",  "wait ms", "comm by kind (ms)"};
  std::vector<bool> right{false, false, true, true, true, true, true, true, true, false};
  if (training) header.insert(header.begin() + 4, "bwd %"), right.insert(right.begin() + 4, true);
  MdTable t(header, right);
  for (auto& row : rows) t.AddRow(std::move(row));
  t.Print(out);
  out << fmt::format(
      "\nTime per module = GPU busy time attributed to the innermost module range that launched the work "
      "(children included; overlapping modules share time equally), mean and max over ranks; top-level rows "
      "add up to busy. CP = the module communicates on two or more ranks. wait = the part of its NCCL ops' time "
      "spent waiting for a late peer (mean over ranks). straggler = the rank whose late "
      "arrival at the module's NCCL ops kept the others waiting longest. CP-distributed modules hold {} of "
      "busy time, serial modules {}, no module {}.{}\n\n",
      Percent(mean.cp_ns, mean_busy) + "%", Percent(mean.serial_ns, mean_busy) + "%",
      Percent(mean.unattributed_ns, mean_busy) + "%", training ? std::string(" ") + kBackwardNote : "");
  for (const auto& line : ModuleSourceLines(r)) out << line << "\n\n";
}

// The module table as text: what its columns mean, the rows with their total, the CP split.
void PrintModulesText(const model::Report& r, const ReadoutOptions& o, std::vector<std::vector<std::string>> rows,
                      int64_t mean_busy, bool training, std::ostream& out) {
  const CpSplit mean = MeanCpSplit(r);
  out << fmt::format("Modules ({}, {} module ranges), time per rank in ms:\n", r.grouping.source,
                     r.grouping.module_ranges);
  // One line per note: the wrapping after the tables fits them to the line.
  out << "  time = GPU busy time attributed to the innermost module range around each launch, children included "
         "(work of several modules at once is shared equally): top-level rows add up to busy. CP = the module "
         "communicates on two or more ranks; comm = wall time of its communication; hidden = the part of comm during "
         "which compute ran; wait = the part of its NCCL ops' time spent waiting for a late peer (mean over ranks). "
         "straggler = the rank whose late arrival at the module's NCCL ops kept the others waiting longest.\n";
  if (training) {
    out << "  bwd % = the part of the module's time launched by the backward pass (mapped to the forward op's module "
           "through autograd's sequence numbers); [backward] = backward work not mapped.\n";
  }
  std::vector<TextTable::Column> columns{
      {"module", TextTable::Align::kLeft, 60},
      {"split", TextTable::Align::kLeft},
      {"mean"},
      {"max"},
      {"share %"},
      {"straggler"},
      {"comm"},
      {"hidden %"},
      {"wait"},
      {"comm by kind (mean)", TextTable::Align::kLeft, 0, TextTable::Overflow::kStack}};
  std::vector<std::string> total{"busy (sum of top-level rows)", "", Ms(mean_busy), "", "100.0", "", "", "", "", ""};
  if (training) columns.insert(columns.begin() + 4, {"bwd %"}), total.insert(total.begin() + 4, "");
  TextTable t(columns);
  for (auto& row : rows) t.AddRow(std::move(row));
  t.AddRule();
  t.AddRow(std::move(total));
  t.Print(out, "  ");
  out << fmt::format("  CP-distributed modules {}% of busy, serial modules {}%, no module {}% (mean over ranks).\n",
                     Percent(mean.cp_ns, mean_busy), Percent(mean.serial_ns, mean_busy),
                     Percent(mean.unattributed_ns, mean_busy));
  for (const auto& line : ModuleSourceLines(r)) out << "  " << line << '\n';
  if (o.module_depth < 64) {
    out << fmt::format("  Rows deeper than {} are folded into their parents (--depth N shows more).\n", o.module_depth);
  }
  out << '\n';
}

}  // namespace

void PrintModules(const model::Report& r, const ReadoutOptions& o, std::ostream& out) {
  if (r.modules.empty()) return;
  const int64_t mean_busy = MeanBusy(r);
  // A training run: each module's time also says how much of it the backward pass launched.
  const bool training = !r.phases.empty();
  auto rows = ModuleRows(r, o, mean_busy, training);
  if (o.markdown) {
    PrintModulesMarkdown(r, std::move(rows), mean_busy, training, out);
  } else {
    PrintModulesText(r, o, std::move(rows), mean_busy, training, out);
  }
}

void PrintCommunication(const model::Report& r, const ReadoutOptions& o, std::ostream& out) {
  std::vector<int> kinds;
  for (int k = 0; k < model::kNumOpClasses; ++k) {
    if (!model::IsComm(static_cast<OpClass>(k))) continue;
    for (const auto& s : r.ranks) {
      if (s.classes[k].instances) {
        kinds.push_back(k);
        break;
      }
    }
  }
  if (kinds.empty()) return;
  std::vector<std::string> header{"kind"};
  for (const auto& s : r.ranks) header.push_back(fmt::format("rank {} ms (hidden %)", s.rank));
  std::vector<std::vector<std::string>> rows;
  auto cell = [](int64_t wall, int64_t hidden) { return fmt::format("{} ({})", Ms(wall), Percent(hidden, wall)); };
  for (int k : kinds) {
    std::vector<std::string> row{std::string(model::kOpClassNames[k])};
    for (const auto& s : r.ranks) row.push_back(cell(s.classes[k].union_ns, s.classes[k].hidden_ns));
    rows.push_back(row);
  }
  std::vector<std::string> all{"all communication"};
  for (const auto& s : r.ranks) all.push_back(cell(s.comm_ns, s.both_ns));
  rows.push_back(all);
  const char* definition =
      "wall = union of the kind's ops; hidden = |comm ∩ compute| / |comm|, the part of communication time "
      "during which compute (any non-communication GPU work) ran; exposed = comm not hidden.";
  if (o.markdown) {
    out << "### Communication vs compute\n\n";
    MdTable t(header, std::vector<bool>(header.size(), true));
    for (auto& row : rows) t.AddRow(std::move(row));
    t.Print(out);
    out << '\n' << definition << "\n\n";
    return;
  }
  out << "Communication by kind per rank, wall ms (hidden under compute %):\n";
  std::vector<TextTable::Column> cols{{"kind", TextTable::Align::kLeft}};
  for (size_t i = 1; i < header.size(); ++i) cols.push_back({header[i]});
  TextTable t(cols);
  for (auto& row : rows) t.AddRow(std::move(row));
  t.Print(out, "  ");
  out << "  " << definition << "\n\n";
}

namespace {

// Who waited for whom over every kind (the largest waits first), and on a known grid which ring
// waited: a line each, empty with one rank or no waiting.
std::vector<std::string> WhoWaited(const model::Report& r) {
  const auto& w = r.imbalance.waited_for_ns;
  std::vector<std::tuple<int64_t, size_t, size_t>> pairs;  // (ns, waiter, waited for)
  for (size_t a = 0; a < w.size(); ++a) {
    for (size_t b = 0; b < w[a].size(); ++b) {
      if (w[a][b] > 0) pairs.emplace_back(w[a][b], a, b);
    }
  }
  if (pairs.empty()) return {};
  std::sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) {
    return std::get<0>(x) != std::get<0>(y) ? std::get<0>(x) > std::get<0>(y) : x < y;
  });
  constexpr size_t kShown = 8;
  std::vector<std::string> said;
  for (size_t i = 0; i < pairs.size() && i < kShown; ++i) {
    const auto& [ns, a, b] = pairs[i];
    said.push_back(fmt::format("rank {} waited {} ms for rank {}", a, Ms(ns), b));
  }
  std::vector<std::string> lines{fmt::format(
      "Who waited for whom (every kind, in the window): {}{}.", fmt::join(said, "; "),
      pairs.size() > kShown ? fmt::format("; and {} smaller waits", pairs.size() - kShown) : std::string())};
  const model::CpGrid& g = r.grid;
  if (!r.imbalance.ring_waits.empty()) {
    std::vector<std::string> rings;
    for (const auto& ring : r.imbalance.ring_waits) {
      rings.push_back(fmt::format("{} {} ms, most for rank {}{} ({} ms)", ring.ring, Ms(ring.wait_ns),
                                  ring.most_waited_for, g.Place(ring.most_waited_for), Ms(ring.most_ns)));
    }
    lines.push_back(fmt::format("By ring of the {}x{} grid ({}; rank = row x {} + col, as cpfold lays it out): {}.",
                                g.rows, g.cols, g.source, g.cols, fmt::join(rings, "; ")));
  }
  return lines;
}

}  // namespace

void PrintImbalance(const model::Report& r, const ReadoutOptions& o, std::ostream& out) {
  const auto& im = r.imbalance;
  if (im.collectives.empty()) return;
  const bool multi = r.ranks.size() > 1;
  std::string head;
  if (multi && im.straggler_rank >= 0) {
    head = fmt::format(
        "straggler: rank {}{}, the rank the others wait for: it arrived last at {} of {} matched NCCL "
        "ops and kept the others waiting {} ms.",
        im.straggler_rank, r.grid.Place(im.straggler_rank), im.straggler_last_arrivals, im.instances,
        Ms(im.straggler_caused_wait_ns));
  } else if (multi) {
    head = "straggler: none (no rank kept another waiting in matched NCCL ops).";
  } else {
    head = "one rank: its NCCL ops have no peers in this export to match, so their time is not split.";
  }
  if (multi && im.busiest_rank >= 0) {
    head += fmt::format(
        " Most GPU busy time: rank {} (busy spread (max - min) / max = {:.1f}%, compute spread "
        "{:.1f}%); a rank that waits inside NCCL kernels is busy, not slow.",
        im.busiest_rank, 100.0 * im.busy_spread, 100.0 * im.compute_spread);
  }
  std::vector<std::string> header{"kind",         "rank",         "ops",           "instances",
                                  "time ms",      "wait ms",      "transfer ms",   "exposed transfer ms",
                                  "unmatched ms", "arrived last", "caused wait ms"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : im.collectives) {
    for (size_t k = 0; k < c.per_rank.size(); ++k) {
      const auto& p = c.per_rank[k];
      rows.push_back({k == 0 ? std::string(model::Name(c.kind)) : "", std::to_string(k), std::to_string(p.ops),
                      k == 0 ? std::to_string(c.instances) : "", Ms(p.time_ns), Ms(p.wait_ns), Ms(p.transfer_ns),
                      Ms(p.exposed_transfer_ns), p.unmatched_ops ? Ms(p.unmatched_ns) : "-",
                      std::to_string(p.last_arrivals), Ms(p.caused_wait_ns)});
    }
  }
  std::string definition =
      "Ops of a kind are matched across ranks by time: an instance is one op per rank that overlap and end "
      "together (one collective, or one ring shift), so ranks may run different numbers of ops. In an instance "
      "the last rank to start gates the others: wait = from an op's start to that last start, transfer = the "
      "rest; time = wait + transfer + unmatched. exposed transfer = transfer during which no compute ran. "
      "caused wait = the others' waiting in the instances this rank arrived last at.";
  int64_t edge = 0;
  for (const auto& c : im.collectives) edge += c.edge_instances;
  if (edge) {
    definition += fmt::format(
        " The window's edges cut {} instance{}: matched and split over their whole ops (peers outside the window "
        "included), then cut to the window.",
        edge, edge == 1 ? "" : "s");
  }
  const std::vector<std::string> waits = WhoWaited(r);
  if (o.markdown) {
    out << "### Waiting vs transfer, and the straggler\n\n" << head << "\n\n";
    std::vector<bool> right(header.size(), true);
    right[0] = false;
    MdTable t(header, right);
    for (auto& row : rows) t.AddRow(std::move(row));
    t.Print(out);
    out << '\n' << definition << "\n\n";
    for (const auto& w : waits) out << w << "\n\n";
    return;
  }
  out << "Waiting vs transfer per NCCL kind and rank, ms:\n  " << head << '\n';
  // kind and rank name each row: both are repeated when the columns wrap.
  std::vector<TextTable::Column> cols{{"kind", TextTable::Align::kLeft, 0, TextTable::Overflow::kElide, true}};
  for (size_t i = 1; i < header.size(); ++i)
    cols.push_back({header[i].substr(0, header[i].size() - (header[i].ends_with(" ms") ? 3 : 0))});
  cols[1].key = true;
  TextTable t(cols);
  for (auto& row : rows) t.AddRow(std::move(row));
  t.Print(out, "  ");
  out << "  " << definition << '\n';
  for (const auto& w : waits) out << "  " << w << '\n';
  out << '\n';
}

void PrintVerdict(const model::Report& r, const ReadoutOptions& o, std::ostream& out) {
  const auto& v = r.verdict;
  if (o.markdown) {
    out << "**" << r.window.description << ".**\n\n";
    if (v.summary.empty()) return;
    out << "**Verdict.** " << v.summary << "\n\n";
    for (size_t i = 0; i < v.opportunities.size(); ++i) out << i + 1 << ". " << v.opportunities[i] << '\n';
    if (!v.opportunities.empty()) out << '\n';
    for (const auto& w : v.warnings) out << "> **Warning:** " << w << "\n";
    if (!v.warnings.empty()) out << '\n';
    return;
  }
  out << r.window.description << ".\n\n";
  if (v.summary.empty()) return;
  out << "Verdict: " << v.summary << '\n';
  for (size_t i = 0; i < v.opportunities.size(); ++i) out << "  " << i + 1 << ". " << v.opportunities[i] << '\n';
  for (const auto& w : v.warnings) out << "  warning: " << w << '\n';
  out << '\n';
}

void PrintBudget(const model::Report& r, const ReadoutOptions& o, std::ostream& out) {
  if (r.ranks.empty()) return;
  auto cell = [](int64_t part, int64_t span) { return fmt::format("{} ({}%)", Ms(part), Percent(part, span)); };
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : r.ranks) {
    rows.push_back({std::to_string(s.rank), Ms(s.span_ns), cell(s.compute_ns, s.span_ns),
                    cell(s.exposed_transfer_ns, s.span_ns), cell(s.exposed_wait_ns, s.span_ns),
                    cell(s.idle_ns, s.span_ns), Ms(s.launch_gap_ns), s.launch_bound ? "yes" : "no"});
  }
  std::vector<std::string> header{"rank",    "window ms",   "compute",        "exposed transfer",
                                  "waiting", "idle (host)", "launch gaps ms", "launch-bound"};
  const char* definition =
      "compute + exposed transfer + waiting + idle = the window. compute = union of non-communication GPU work "
      "(communication hidden under it included); exposed transfer = communication-only time during which data "
      "moved (after the last peer arrived; unmatched ops count here); waiting = the rest of the "
      "communication-only time, NCCL kernels spinning for a late peer; idle = no GPU work, the GPU waited for "
      "the host. launch gaps = idle in gaps shorter than 0.1 ms between ops (the host launching the next "
      "kernel); launch-bound = launch gaps are 20% of the window or more.";
  if (o.markdown) {
    out << "### Where each rank's window goes\n\n";
    MdTable t(header, {true, true, true, true, true, true, true, false});
    for (auto& row : rows) t.AddRow(std::move(row));
    t.Print(out);
    out << '\n' << definition << "\n\n";
    return;
  }
  out << "Where each rank's window goes, ms (% of the window):\n";
  TextTable t({{"rank"},
               {"window"},
               {"compute"},
               {"exposed transfer"},
               {"waiting"},
               {"idle (host)"},
               {"launch gaps"},
               {"launch-bound", TextTable::Align::kLeft}});
  for (auto& row : rows) t.AddRow(std::move(row));
  t.Print(out, "  ");
  out << "  " << definition << "\n\n";
}

void PrintIterations(const model::Report& r, const ReadoutOptions& o, std::ostream& out) {
  const auto& w = r.window;
  if (w.iterations.empty()) return;
  constexpr size_t kMaxRows = 24;
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < w.iterations.size() && i < kMaxRows; ++i) {
    const auto& t = w.iterations[i];
    rows.push_back({std::to_string(i), t.name, Ms(t.end_ns - t.start_ns), fmt::format("{:.6f}", t.start_ns / 1e9),
                    t.warmup ? "warm-up" : "", t.in_window ? "yes" : "no"});
  }
  std::string more = w.iterations.size() > kMaxRows
                         ? fmt::format("{} more iterations not listed. ", w.iterations.size() - kMaxRows)
                         : "";
  std::string definition = more + fmt::format(
                                      "Found from {}; an iteration's time runs from the earliest start to the "
                                      "latest end of its range over the ranks. --window iter:N selects one.",
                                      w.method);
  if (o.markdown) {
    out << "### Iterations\n\n";
    MdTable t({"#", "range", "ms", "at s", "", "in window"}, {true, false, true, true, false, false});
    for (auto& row : rows) t.AddRow(std::move(row));
    t.Print(out);
    out << '\n' << definition << "\n\n";
    return;
  }
  out << "Iterations:\n";
  TextTable t({{"#"},
               {"range", TextTable::Align::kLeft, 60},
               {"ms"},
               {"at s"},
               {"", TextTable::Align::kLeft},
               {"in window", TextTable::Align::kLeft}});
  for (auto& row : rows) t.AddRow(std::move(row));
  t.Print(out, "  ");
  out << "  " << definition << "\n\n";
}

void PrintPhases(const model::Report& r, const ReadoutOptions& o, std::ostream& out) {
  if (r.phases.empty()) return;
  std::vector<std::vector<std::string>> rows;
  for (size_t k = 0; k < r.phases.size() && k < r.ranks.size(); ++k) {
    const auto& p = r.phases[k];
    int64_t busy = r.ranks[k].busy_ns;
    std::vector<std::string> row{std::to_string(k)};
    for (int ph = 0; ph < model::kNumPhases; ++ph) {
      row.push_back(fmt::format("{} ({}%)", Ms(p.busy_ns[ph]), Percent(p.busy_ns[ph], busy)));
    }
    rows.push_back(row);
  }
  const char* definition =
      "backward = GPU work launched from PyTorch's autograd threads (pt_autograd_N); optimizer = work "
      "launched inside an optimizer step range; forward = the rest. Busy time, shared equally where phases "
      "overlap; adds up to busy.";
  if (o.markdown) {
    out << "### Training: forward / backward / optimizer\n\n";
    MdTable t({"rank", "forward ms", "backward ms", "optimizer ms"}, {true, true, true, true});
    for (auto& row : rows) t.AddRow(std::move(row));
    t.Print(out);
    out << '\n' << definition << "\n\n";
    return;
  }
  out << "Training phases per rank, busy ms (% of busy):\n";
  TextTable t({{"rank"}, {"forward"}, {"backward"}, {"optimizer"}});
  for (auto& row : rows) t.AddRow(std::move(row));
  t.Print(out, "  ");
  out << "  " << definition << "\n\n";
}

std::string MiB(int64_t bytes) { return fmt::format("{:.1f}", static_cast<double>(bytes) / (1024.0 * 1024.0)); }

void PrintMemory(const model::Report& r, const ReadoutOptions& o, std::ostream& out) {
  bool any = std::any_of(r.ranks.begin(), r.ranks.end(), [](const auto& s) { return s.peak_mem_bytes >= 0; });
  std::string definition =
      "GPU memory as the CUDA driver sees it (allocations minus frees of device memory: " +
      (r.memory.counted_kinds.empty() ? std::string("device kinds") : r.memory.counted_kinds) +
      "); PyTorch's caching allocator keeps what it reserved, so this is reserved memory plus CUDA/NCCL's own, "
      "not torch.cuda.max_memory_allocated. module = the module of the CUDA call that reached the peak. Peaks are "
      "over the whole capture, whatever the window.";
  if (!any) {
    std::string why = r.memory.captured ? "no memory events for the ranks' processes"
                                        : "no memory events in this export (nsys profile --cuda-memory-usage true "
                                          "records them)";
    if (o.markdown) {
      out << "### Peak GPU memory\n\n" << why << "\n\n";
    } else {
      out << "Peak GPU memory: " << why << "\n\n";
    }
    return;
  }
  std::vector<std::vector<std::string>> rows;
  int64_t max = 0, min = INT64_MAX;
  for (const auto& s : r.ranks) {
    if (s.peak_mem_bytes < 0) {
      rows.push_back({std::to_string(s.rank), "-", "-", "-"});
      continue;
    }
    max = std::max(max, s.peak_mem_bytes);
    min = std::min(min, s.peak_mem_bytes);
    rows.push_back({std::to_string(s.rank), MiB(s.peak_mem_bytes), fmt::format("{:.3f}", s.peak_mem_ns / 1e9),
                    s.peak_mem_module.empty() ? "-" : s.peak_mem_module});
  }
  std::string spread = max > 0 ? fmt::format("spread (max - min) / max = {:.1f}%",
                                             100.0 * static_cast<double>(max - min) / static_cast<double>(max))
                               : "";
  if (o.markdown) {
    out << "### Peak GPU memory\n\n";
    MdTable t({"rank", "peak MiB", "at s", "inside module"}, {true, true, true, false});
    for (auto& row : rows) t.AddRow(std::move(row));
    t.Print(out);
    out << '\n' << spread << ". " << definition << "\n\n";
    return;
  }
  out << "Peak GPU memory per rank (" << spread << "):\n";
  TextTable t({{"rank"}, {"peak MiB"}, {"at s"}, {"inside module", TextTable::Align::kLeft, 90}});
  for (auto& row : rows) t.AddRow(std::move(row));
  t.Print(out, "  ");
  out << "  " << definition << "\n\n";
}

void PrintCapture(const model::Report& r, const ReadoutOptions& o, std::ostream& out) {
  const auto& c = r.capture;
  const auto& e = r.export_info;
  std::vector<std::string> lines;
  lines.push_back(fmt::format("nsys {} (export schema {})", e.nsys_version.empty() ? "unknown" : e.nsys_version,
                              e.schema_version.empty() ? "unknown" : e.schema_version));
  if (c.recorded) {
    lines.push_back("options (reconstructed from what the export records): " +
                    (c.reconstructed_flags.empty() ? std::string("-") : c.reconstructed_flags));
    std::string cmd = c.command;
    for (const auto& a : c.arguments) cmd += " " + a;
    if (!cmd.empty()) lines.push_back("command: " + cmd);
    if (!c.env.empty()) {
      std::string env;
      for (const auto& [k, v] : c.env) env += fmt::format("{}{}=\"{}\"", env.empty() ? "" : " ", k, v);
      lines.push_back("environment (profiling-relevant only): " + env);
    }
  } else {
    lines.push_back("the export records no capture options (META_DATA_CAPTURE absent)");
  }
  if (!r.interconnect.empty()) lines.push_back("interconnect: " + r.interconnect);
  if (o.markdown) {
    out << "### Capture\n\n";
    for (const auto& l : lines) out << "- " << l << '\n';
    out << '\n';
    out << "### Diagnostics\n\n";
    if (r.diagnostics.empty())
      out << "Nothing to report: no inert options, empty domains, open or cross-thread ranges.\n";
    for (const auto& d : r.diagnostics) {
      out << fmt::format("- **{}**: {}. {}", model::SeverityName(d.severity), d.title, d.detail);
      if (!d.fix.empty()) out << " *Fix:* " << d.fix;
      out << '\n';
    }
    for (const auto& m : c.messages) {
      if (Covered(r, m)) continue;
      out << fmt::format("- nsys {} ({}{}): {}\n", m.severity, m.source,
                         m.count > 1 ? fmt::format(", x{}", m.count) : "", m.text);
    }
    out << '\n';
    return;
  }
  out << "Capture:\n";
  for (const auto& l : lines) out << "  " << l << '\n';
  out << '\n';
  if (!r.diagnostics.empty() || !c.messages.empty()) {
    out << "Diagnostics:\n";
    for (const auto& d : r.diagnostics) {
      out << fmt::format("  {}: {}\n    {}\n", model::SeverityName(d.severity), d.title, d.detail);
      if (!d.fix.empty()) out << "    fix: " << d.fix << '\n';
    }
    for (const auto& m : c.messages) {
      if (Covered(r, m)) continue;
      out << fmt::format("  nsys {} ({}{}): {}\n", m.severity, m.source,
                         m.count > 1 ? fmt::format(", x{}", m.count) : "", m.text);
    }
    out << '\n';
  }
}

namespace {

// "0-3, 5" for sorted ranks.
std::string RankList(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + (j == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]));
    i = j + 1;
  }
  return out.empty() ? "-" : out;
}

std::string UsOrDash(int64_t ns, bool known) {
  return known ? fmt::format("{:.1f}", static_cast<double>(ns) / 1e3) : "-";
}

}  // namespace

void PrintRunExports(const model::Report& r, const ReadoutOptions& o, std::ostream& out) {
  if (r.run_exports.empty()) return;
  int64_t worst = -1;
  for (const auto& x : r.run_exports) worst = std::max(worst, x.residual_ns);
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < r.run_exports.size(); ++i) {
    const auto& x = r.run_exports[i];
    rows.push_back({x.name, x.host.empty() ? "-" : x.host, RankList(x.ranks), Ms(x.offset_ns),
                    UsOrDash(x.refine_ns, i > 0 && x.matched_ops > 0), UsOrDash(x.residual_ns, x.residual_ns >= 0),
                    x.method});
  }
  const std::string title =
      fmt::format("One run from {} exports, on the first export's session clock", r.run_exports.size());
  const std::string note =
      worst >= 0 ? fmt::format(
                       "offset = added to the export's timestamps (session starts, then refined by matching "
                       "collective ends); residual = the alignment's error: waiting and straggler numbers across "
                       "exports are good to about {:.1f} us",
                       static_cast<double>(worst) / 1e3)
                 : "offset = added to the export's timestamps (from the recorded session starts); no collective "
                   "could refine it: waiting and straggler numbers across exports are good only to the hosts' clock "
                   "sync";
  if (o.markdown) {
    out << "### " << title << "\n\n";
    MdTable t({"export", "host", "ranks", "offset ms", "refined us", "residual us", "method"},
              {false, false, false, true, true, true, false});
    for (auto& row : rows) t.AddRow(std::move(row));
    t.Print(out);
    out << '\n' << note << ".\n\n";
    return;
  }
  out << title << ":\n";
  TextTable t({{"export", TextTable::Align::kLeft, 40},
               {"host", TextTable::Align::kLeft, 24},
               {"ranks", TextTable::Align::kLeft, 24},
               {"offset ms"},
               {"refined us"},
               {"residual us"},
               {"method", TextTable::Align::kLeft}});
  for (auto& row : rows) t.AddRow(std::move(row));
  t.Print(out, "  ");
  out << "  " << note << "\n\n";
}

void PrintReportMarkdown(const model::Report& r, const ReadoutOptions& o, std::ostream& out) {
  ReadoutOptions md = o;
  md.markdown = true;
  const auto& e = r.export_info;
  out << fmt::format("## cpprof readout: {} rank{} (nsys {})\n\n", r.ranks.size(), r.ranks.size() == 1 ? "" : "s",
                     e.nsys_version.empty() ? "unknown" : e.nsys_version);
  if (r.ranks.empty()) {
    out << "No GPU work in this export.\n";
    return;
  }
  PrintVerdict(r, md, out);
  MdTable t({"rank", "device", "span ms", "busy ms", "comm % of busy", "hidden comm %", "idle ms"},
            {true, false, true, true, true, true, true});
  for (const auto& s : r.ranks) {
    t.AddRow({std::to_string(s.rank), s.device < 0 ? "-" : fmt::format("cuda:{}", s.device), Ms(s.span_ns),
              Ms(s.busy_ns), Percent(s.comm_ns, s.busy_ns), Percent(s.both_ns, s.comm_ns), Ms(s.idle_ns)});
  }
  out << "### GPU time per rank\n\n";
  t.Print(out);
  out << fmt::format(
      "\nRanks assigned by {}. span = {}; busy = union of all GPU work. Times in ms; \"at s\" = "
      "seconds since the capture started.\n\n",
      r.rank_method, r.window.whole_capture ? "first to last GPU op (start-up included)" : "the window");
  PrintRunExports(r, md, out);
  PrintBudget(r, md, out);
  PrintIterations(r, md, out);
  PrintReplay(r, /*markdown=*/true, out);
  PrintModules(r, md, out);
  PrintEfficiency(r, /*markdown=*/true, out);
  PrintCommunication(r, md, out);
  PrintImbalance(r, md, out);
  PrintPhases(r, md, out);
  PrintMemory(r, md, out);
  PrintCapture(r, md, out);
}

}  // namespace cpprof::render
