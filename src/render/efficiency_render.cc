// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/efficiency_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "render/markdown_table.h"
#include "render/table.h"

namespace cpprof::render {

namespace {

std::string Num(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

// Calls may be fractional only through a user's calls expression; print integers plainly.
std::string Calls(double v) {
  return v == static_cast<int64_t>(v) ? fmt::format("{}", static_cast<int64_t>(v)) : Num(v, 2);
}

// The module's group: the first part of its path ("trunk").
std::string Group(const std::string& path) { return path.substr(0, path.find('/')); }

// "N=256,c_z=64" -> "N=256, c_z=64": prose may wrap between the sizes.
std::string Spaced(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == ',') out += ' ';
  }
  return out;
}

void PrintTable(const std::vector<std::string>& header, const std::vector<bool>& right,
                const std::vector<std::vector<std::string>>& rows, bool markdown, std::ostream& out) {
  PrintSectionTable(header, right, rows, markdown, 48, out);
}

void Prose(const std::string& text, bool markdown, std::ostream& out) {
  if (markdown) {
    out << text << "\n\n";
    return;
  }
  out << WrapLines("  " + text, TextWidthScope::Current()) << '\n';
}

// The ring shifts' table: achieved bandwidth against the link's nominal and achievable figures;
// rows past the link go to `impossible`.
void PrintRingShifts(const model::Efficiency& e, bool markdown, std::vector<std::string>& impossible,
                     std::ostream& out) {
  if (e.comm.empty()) return;
  if (markdown) {
    out << "Ring shifts of the distributed products:\n\n";
  } else {
    out << "  Ring shifts of the distributed products:\n";
  }
  std::vector<std::vector<std::string>> crow;
  double achievable = 0;
  for (const auto& c : e.comm) {
    const bool ok = c.impossible.empty();
    if (!ok) impossible.push_back(Group(c.path) + " " + c.module + " (ring shifts): " + c.impossible);
    achievable = std::max(achievable, c.achievable_gbs);
    crow.push_back({Group(c.path), c.module, Calls(c.shifts_per_iteration), Num(c.bytes_per_shift / 1e6, 3),
                    Num(c.transfer_ns_per_shift / 1e3, 1), ok ? Num(c.achieved_gbs, 1) : "-",
                    fmt::format("{} {:.0f}", c.link, c.link_gbs), ok ? Num(c.percent_of_link, 1) : "impossible",
                    ok && c.achievable_gbs > 0 ? Num(c.percent_of_achievable, 1) : "-",
                    Num(c.ideal_ns_per_shift / 1e3, 1)});
  }
  PrintTable(
      {"group", "module", "shifts", "MB/shift", "us/shift", "GB/s", "link GB/s", "% link", "% achievable", "ideal us"},
      {false, false, true, true, true, true, false, true, true, true}, crow, markdown, out);
  Prose(fmt::format("MB/shift = bytes one rank sends per shift (model); us/shift = the module's NCCL transfer time "
                    "per p2p batch (waiting for a late peer left out); GB/s = bytes sent / transfer time; % link = of "
                    "the link's nominal per-direction bandwidth; % achievable = of what NCCL reaches on it{}; ideal "
                    "us = MB/shift at the link's per-direction bandwidth; link: {}.",
                    achievable > 0 ? fmt::format(" ({:.0f} GB/s: {})", achievable, e.device.achievable_source)
                                   : " (not known for this device and link)",
                    e.link_source),
        markdown, out);
}

// A section that was not computed: its title and why, one line (md: the title as a heading).
void PrintNotComputed(const std::string& section, const std::string& why, bool markdown, std::ostream& out) {
  if (markdown) {
    out << "### " << section << "\n\nnot computed: " << why << ".\n\n";
  } else {
    out << WrapLines(section + ": not computed: " + why + ".", TextWidthScope::Current()) << "\n\n";
  }
}

// The cost model's table, the ring shifts and their notes.
void PrintModelEfficiency(const model::Report& r, bool markdown, std::ostream& out) {
  const model::Efficiency& e = r.efficiency;
  if (!e.computed) {
    if (e.applicable || !e.dims.empty()) PrintNotComputed("Efficiency", e.reason, markdown, out);
    return;
  }
  const std::string title = fmt::format(
      "Efficiency per module ({} {}, {}; per steady-state iteration and rank, "
      "mean over ranks, {} iteration{}):",
      e.device.name, e.dtype, e.gpu.empty() ? "device named by the config" : e.gpu, e.iterations,
      e.iterations == 1 ? "" : "s");
  if (markdown) {
    out << "### Efficiency\n\n" << title.substr(0, title.size() - 1) << ".\n\n";
  } else {
    out << WrapLines(title, TextWidthScope::Current()) << '\n';
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> impossible;  // "group module: impossible: ..."
  for (const auto& m : e.modules) {
    // A row past a physical limit prints no rate as achieved: its note says why.
    const bool ok = m.impossible.empty();
    if (!ok) impossible.push_back(Group(m.path) + " " + m.module + ": " + m.impossible);
    rows.push_back({Group(m.path), m.module, Calls(m.calls_per_iteration) + (m.calls_source == "capture" ? "" : "*"),
                    Num(m.flops / 1e9, 2), Num(m.time_ns / 1e6, 3), ok ? Num(m.achieved_tflops, 2) : "-",
                    ok ? Num(m.percent_of_peak, 1) : "impossible", ok ? Num(m.achieved_gbs, 0) : "-",
                    Num(m.intensity, 1), m.bound, ok ? Num(m.percent_of_roof, 1) : "-"});
  }
  PrintTable({"group", "module", "calls", "GFLOP", "ms", "TFLOP/s", "% peak", "GB/s", "FLOP/B", "bound", "% roof"},
             {false, false, true, true, true, true, true, true, true, false, true}, rows, markdown, out);
  const double ridge = e.modules.empty() ? 0 : e.modules.front().ridge;
  const double peak = e.modules.empty() ? 0 : e.modules.front().peak_tflops;
  const bool from_config = std::any_of(e.modules.begin(), e.modules.end(),
                                       [](const model::ModuleEfficiency& m) { return m.calls_source != "capture"; });
  Prose(
      fmt::format("calls = the module's NVTX ranges per iteration, counted from the capture (mean over ranks){}; "
                  "GFLOP = the cost model's FLOPs per iteration on one rank (its share of the sharded pair work plus "
                  "the replicated work); ms = the module's GPU time per iteration (busy less the communication no "
                  "compute hid); % peak of {:.1f} TFLOP/s ({} dense); GB/s = modelled HBM bytes / ms, against {:.2f} "
                  "TB/s; FLOP/B = arithmetic intensity: below the ridge {:.0f} FLOP/B memory bounds it, above it "
                  "compute; % roof = the roofline's time (max of FLOPs / peak, bytes / HBM) / ms. Sizes, by where they "
                  "came from: {}. Formulas: docs/cost-model.md.",
                  from_config ? "; * = not in the capture: from the config's calls expression of the sizes" : "", peak,
                  e.dtype, e.device.hbm_tbs, ridge,
                  e.dims_by_source.empty() ? "(" + e.dims_source + ") " + Spaced(e.dims) : e.dims_by_source),
      markdown, out);
  PrintRingShifts(e, markdown, impossible, out);
  for (const auto& n : impossible) Prose(n, markdown, out);
  for (const auto& n : e.notes) Prose("note: " + n, markdown, out);
  if (!markdown) out << '\n';
}

std::string SignedPct(double share) { return fmt::format("{:+.1f}", 100 * share); }

// The overlap tax: one line when it was not computed on a run with communication, else the rows of
// the modules (groups left out: the total says it) with the largest extra time.
void PrintOverlapTax(const model::Report& r, bool markdown, std::ostream& out) {
  constexpr size_t kMaxRows = 10;
  const model::OverlapTax& t = r.overlap_tax;
  if (!t.computed) {
    if (t.why_not != model::kOverlapTaxNotAsked && (t.ops_under > 0 || r.world_size >= 2)) {
      PrintNotComputed("Overlap tax", t.why_not, markdown, out);
    }
    return;
  }
  const std::string per = t.iterations ? "per steady-state iteration and rank" : "per rank over the window";
  const std::string title = fmt::format(
      "Overlap tax: compute under communication ran {:.1f} % {} than alone ({} ms {}; {} of {} compute kernels "
      "under NCCL kernels):",
      100 * std::abs(t.all.slowdown), t.all.extra_ns >= 0 ? "slower" : "faster",
      Num(t.all.extra_ns_per_iteration / 1e6, 3), per, t.ops_under, t.ops_under + t.ops_alone + t.ops_partial);
  if (markdown) {
    out << "### Overlap tax\n\n" << title.substr(13, title.size() - 14) << ".\n\n";
  } else {
    out << WrapLines(title, TextWidthScope::Current()) << '\n';
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : t.modules) {
    if (m.is_group) continue;
    if (rows.size() == kMaxRows) break;
    rows.push_back({Group(m.path), m.module, fmt::format("{}", m.kernels), fmt::format("{}", m.ops_under),
                    fmt::format("{}", m.ops_alone), SignedPct(m.slowdown), Num(m.extra_ns_per_iteration / 1e6, 3)});
  }
  PrintTable({"group", "module", "kernels", "ops under", "ops alone", "slowed %", "ms"},
             {false, false, true, true, true, true, true}, rows, markdown, out);
  Prose(fmt::format("kernels = (kernel, rank) pairs timed both under communication (NCCL kernels ran on that GPU "
                    "during at least half of the kernel) and alone (during none of it), {} times or more each (a "
                    "kernel is its name, grid and block sizes and module); "
                    "slowed % = their median under communication against their median alone, weighted by the ops under "
                    "communication; ms = what those ops took more, {}. A module counts its children's kernels; the "
                    "{} modules with the most extra time are shown (all in the JSON). What overlapping a ring's "
                    "transfers with compute costs: docs/cost-model.md.",
                    model::kMinOverlapSamples, per, kMaxRows),
        markdown, out);
  if (!markdown) out << '\n';
}

}  // namespace

void PrintEfficiency(const model::Report& r, bool markdown, std::ostream& out) {
  PrintModelEfficiency(r, markdown, out);
  PrintOverlapTax(r, markdown, out);
}

bool HasOverlapTaxJson(const model::Report& r) { return r.overlap_tax.why_not != model::kOverlapTaxNotAsked; }

nlohmann::ordered_json OverlapTaxJson(const model::Report& r) {
  const model::OverlapTax& t = r.overlap_tax;
  auto row = [](const model::ModuleOverlapTax& m) {
    return nlohmann::ordered_json{{"module", m.module},       {"path", m.path},
                                  {"is_group", m.is_group},   {"kernels", m.kernels},
                                  {"ops_under", m.ops_under}, {"ops_alone", m.ops_alone},
                                  {"alone_ns", m.alone_ns},   {"extra_ns", m.extra_ns},
                                  {"slowdown", m.slowdown},   {"extra_ns_per_iteration", m.extra_ns_per_iteration}};
  };
  nlohmann::ordered_json j{
      {"computed", t.computed},
      {"why_not", t.computed ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(t.why_not)},
      {"min_samples", model::kMinOverlapSamples},
      {"ranks", t.ranks},
      {"iterations", t.iterations},
      {"ops_under", t.ops_under},
      {"ops_alone", t.ops_alone},
      {"ops_partial", t.ops_partial},
      {"all", row(t.all)}};
  nlohmann::ordered_json modules = nlohmann::ordered_json::array();
  for (const auto& m : t.modules) modules.push_back(row(m));
  j["modules"] = std::move(modules);
  return j;
}

bool HasEfficiencyJson(const model::Report& r) { return r.efficiency.computed || !r.efficiency.dims.empty(); }

nlohmann::ordered_json EfficiencyJson(const model::Report& r) {
  const model::Efficiency& e = r.efficiency;
  nlohmann::ordered_json j;
  j["computed"] = e.computed;
  j["reason"] = e.reason;
  j["dims_source"] = e.dims_source;
  j["dims"] = e.dims;
  j["dims_origin"] = e.dims_origin;
  j["dtype"] = e.dtype;
  j["gpu"] = e.gpu;
  nlohmann::ordered_json d;
  d["name"] = e.device.name;
  d["fp32_tflops"] = e.device.fp32_tflops;
  d["tf32_tflops"] = e.device.tf32_tflops;
  d["bf16_tflops"] = e.device.bf16_tflops;
  d["fp16_tflops"] = e.device.fp16_tflops;
  d["hbm_tbs"] = e.device.hbm_tbs;
  d["nvlink_gbs"] = e.device.nvlink_gbs;
  d["pcie_gbs"] = e.device.pcie_gbs;
  d["source"] = e.device.source;
  d["nvlink_achievable_gbs"] = e.device.nvlink_achievable_gbs;
  d["achievable_source"] = e.device.achievable_source;
  j["device"] = d;
  j["link_source"] = e.link_source;
  j["iterations"] = e.iterations;
  j["modules"] = nlohmann::ordered_json::array();
  for (const auto& m : e.modules) {
    j["modules"].push_back({{"module", m.module},
                            {"path", m.path},
                            {"cost_key", m.cost_key},
                            {"calls_per_iteration", m.calls_per_iteration},
                            {"calls_source", m.calls_source},
                            {"calls_expression", m.calls_expression},
                            {"config_calls", m.config_calls},
                            {"calls_min", m.calls_min},
                            {"calls_max", m.calls_max},
                            {"flops", m.flops},
                            {"matmul_flops", m.matmul_flops},
                            {"bytes", m.bytes},
                            {"time_ns", m.time_ns},
                            {"backward_share", m.backward_share},
                            {"achieved_tflops", m.achieved_tflops},
                            {"peak_tflops", m.peak_tflops},
                            {"percent_of_peak", m.percent_of_peak},
                            {"achieved_gbs", m.achieved_gbs},
                            {"intensity", m.intensity},
                            {"ridge", m.ridge},
                            {"bound", m.bound},
                            {"roof_ns", m.roof_ns},
                            {"percent_of_roof", m.percent_of_roof},
                            {"impossible", m.impossible}});
  }
  j["comm"] = nlohmann::ordered_json::array();
  for (const auto& c : e.comm) {
    j["comm"].push_back({{"module", c.module},
                         {"path", c.path},
                         {"bytes_per_shift", c.bytes_per_shift},
                         {"shifts_per_call", c.shifts_per_call},
                         {"shifts_per_iteration", c.shifts_per_iteration},
                         {"skew_bytes_per_call", c.skew_bytes_per_call},
                         {"transfer_ns_per_shift", c.transfer_ns_per_shift},
                         {"achieved_gbs", c.achieved_gbs},
                         {"link", c.link},
                         {"link_gbs", c.link_gbs},
                         {"ideal_ns_per_shift", c.ideal_ns_per_shift},
                         {"percent_of_link", c.percent_of_link},
                         {"achievable_gbs", c.achievable_gbs},
                         {"percent_of_achievable", c.percent_of_achievable},
                         {"impossible", c.impossible}});
  }
  j["notes"] = e.notes;
  return j;
}

}  // namespace cpprof::render
