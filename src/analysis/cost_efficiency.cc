// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/cost_efficiency.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

#include "analysis/size_inference.h"

namespace cpprof::analysis {

namespace {

// The group row a module row hangs below ("trunk"); "" for rows outside every group.
std::string GroupOf(const model::Report& r, int index, std::string* path) {
  std::vector<std::string> names;
  int i = index;
  std::string group;
  while (i >= 0) {
    const auto& m = r.modules[static_cast<size_t>(i)];
    names.push_back(m.name);
    if (m.is_group) group = m.name;
    i = m.parent;
  }
  std::reverse(names.begin(), names.end());
  std::string p;
  for (const auto& n : names) p += (p.empty() ? "" : "/") + n;
  if (path) *path = p;
  return group;
}

bool IsRow(const model::ModuleNode& m) { return !m.is_group && !m.name.empty() && m.name.front() != '['; }

}  // namespace

double CallsFromExpression(const std::string& expr, const Dims& dims) {
  double v = 1;
  std::stringstream ss(expr);
  std::string part;
  while (std::getline(ss, part, '*')) {
    char* end = nullptr;
    double x = std::strtod(part.c_str(), &end);
    v *= (end == part.c_str() + part.size() && !part.empty()) ? x : dims.Get(part);
  }
  return v;
}

bool HasCostedModules(const model::Report& r, const CostConfig& config) {
  for (size_t i = 0; i < r.modules.size(); ++i) {
    if (!IsRow(r.modules[i])) continue;
    std::string path;
    GroupOf(r, static_cast<int>(i), &path);
    if (config.KeyOf(path).rfind("Triangle", 0) == 0) return true;
  }
  return false;
}

namespace {

// "8" or "2.5": calls as the readout prints them.
std::string CallsText(double v) {
  return v == std::floor(v) ? fmt::format("{}", static_cast<int64_t>(v)) : fmt::format("{:.2f}", v);
}

// The dims an expression names, with their values: "blocks=8, passes=2".
std::string ExpressionDims(const std::string& expr, const Dims& dims) {
  std::string out;
  std::stringstream ss(expr);
  std::string part;
  while (std::getline(ss, part, '*')) {
    char* end = nullptr;
    std::strtod(part.c_str(), &end);
    if (end == part.c_str() + part.size() && !part.empty()) continue;
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", part, dims.Get(part));
  }
  return out;
}

// The limits of the whole section: the dims, the iterations in the window and the GPU's peaks.
// Returns false with e.reason set when one is missing.
bool ReadLimits(const model::Report& r, const CostConfig& config, const Dims& d, model::Efficiency& e) {
  e.dims_source = d.source;
  e.dims = d.ToString();
  e.dims_origin = d.origin;
  e.dims_by_source = DescribeSizes(d);
  e.dtype = d.dtype;
  if (d.Get("N") <= 0) {
    e.reason = "the sizes give no N (tokens): add N=... to --dims";
    return false;
  }
  for (const auto& it : r.window.iterations) e.iterations += it.in_window ? 1 : 0;
  if (e.iterations == 0) {
    e.reason = "no iterations in the window (efficiency is per iteration: see the window line, --window)";
    return false;
  }
  e.gpu = r.capture.gpu_names.empty() ? "" : r.capture.gpu_names.front();
  auto peaks = config.PeaksFor(e.gpu);
  if (!peaks) {
    e.reason = e.gpu.empty() ? "the export records no GPU name (TARGET_INFO_GPU): name the device with "
                               "--model-config's \"device\""
                             : fmt::format(
                                   "GPU '{}' is not in the device table: add its peaks to --model-config's "
                                   "\"devices\" (docs/cost-model.md)",
                                   e.gpu);
    return false;
  }
  e.device = *peaks;
  if (r.capture.gpu_names.size() > 1) {
    e.notes.push_back(
        fmt::format("the export records {} GPU models; the peaks of '{}' are used", r.capture.gpu_names.size(), e.gpu));
  }
  const int ranks = d.ranks();
  if (r.world_size > 0 && ranks != r.world_size) {
    e.notes.push_back(
        fmt::format("the grid {}x{} has {} ranks but the export has {}: the per-rank shares assume the "
                    "grid",
                    d.grid_rows, d.grid_cols, ranks, r.world_size));
  }
  return true;
}

// The device's rates the modules are held against.
struct Rates {
  double peak_flops = 0;      // FLOP/s for the dtype
  double hbm = 0;             // B/s
  std::string link;           // "NVLink" or "PCIe"
  double link_bps = 0;        // B/s
  double achievable_bps = 0;  // what NCCL reaches on the link (0: not known)
  std::string shows;          // what the capture shows, for "impossible" rows: the sizes used and their origin
};

// The rates of e.device for the dtype; the link of the ring shifts from the doctor's topology
// beside the export, else NVLink assumed (says which in e.link_source).
Rates RatesOf(const model::Report& r, const Dims& d, model::Efficiency& e) {
  Rates rates;
  rates.peak_flops = PeakTflops(e.device, d.dtype) * 1e12;
  rates.hbm = e.device.hbm_tbs * 1e12;
  const bool pcie = r.interconnect.find("PCIe only") != std::string::npos;
  e.link_source = r.interconnect.empty() ? "interconnect unknown (no doctor findings beside the export): NVLink "
                                           "assumed"
                                         : "the doctor's topology: " + r.interconnect;
  rates.link = pcie ? "PCIe" : "NVLink";
  rates.link_bps = (pcie ? e.device.pcie_gbs : e.device.nvlink_gbs) * 1e9;
  rates.achievable_bps = pcie ? 0 : e.device.nvlink_achievable_gbs * 1e9;
  auto origin = [&](const std::string& name) {
    auto o = d.origin.find(name);
    return o == d.origin.end() ? std::string("default") : o->second;
  };
  rates.shows = fmt::format("sizes used: N={} ({}), c_z={} ({}), dtype {} ({})", d.Get("N"), origin("N"), d.Get("c_z"),
                            origin("c_z"), d.dtype, origin("dtype"));
  return rates;
}

// What the module rows found that the notes report.
struct Findings {
  std::vector<std::string> uncounted;
  // Calls the capture counted that the config's expression does not give: (expression, config
  // calls, counted) -> module paths.
  std::map<std::tuple<std::string, double, double>, std::vector<std::string>> disagree;
  std::vector<std::string> uneven;  // modules whose ranks counted different calls
  bool backward = false, skewed = false;
};

// A module row's calls per iteration as the capture counted them (each rank's ranges in the
// window): mean, least and most over ranks; `any` when a rank counted one.
struct CountedCalls {
  double counted = 0, lo = 0, hi = 0;
  bool any = false;
};

// The calls of module row m per iteration (see CountedCalls).
CountedCalls CountCalls(const model::ModuleNode& m, int iterations) {
  CountedCalls n;
  for (size_t k = 0; k < m.per_rank.size(); ++k) {
    const double c = static_cast<double>(m.per_rank[k].calls) / iterations;
    n.counted += c;
    n.lo = k == 0 ? c : std::min(n.lo, c);
    n.hi = k == 0 ? c : std::max(n.hi, c);
    n.any = n.any || m.per_rank[k].calls > 0;
  }
  if (!m.per_rank.empty()) n.counted /= static_cast<double>(m.per_rank.size());
  return n;
}

// A module row's measured times summed over ranks, and the number of ranks to divide by.
struct Measured {
  int64_t busy = 0, bwd = 0, time = 0, transfer = 0;
  double ranks = 1.0;
};

// The measured times of module row m (see Measured).
Measured MeasuredOf(const model::ModuleNode& m) {
  Measured t;
  for (const auto& pr : m.per_rank) {
    t.busy += pr.busy_ns;
    t.bwd += pr.backward_ns;
    t.time += pr.busy_ns - (pr.comm_ns - pr.hidden_ns);  // less the communication no compute hid
    t.transfer += pr.transfer_ns;
  }
  t.ranks = m.per_rank.empty() ? 1.0 : static_cast<double>(m.per_rank.size());
  return t;
}

// The model's numbers for `calls` calls of `cost` against the measured time and the peaks (the
// caller fills the row's names and calls).
void Roofline(const ModuleCost& cost, double calls, int ranks, double time_ns, const Rates& rates,
              model::ModuleEfficiency& x) {
  x.flops = calls * cost.FlopsPerRank(ranks);
  x.matmul_flops = calls * cost.MatmulFlopsPerRank(ranks);
  x.bytes = calls * cost.BytesPerRank(ranks);
  x.time_ns = time_ns;
  const double peak_flops = rates.peak_flops, hbm = rates.hbm;
  x.peak_tflops = peak_flops / 1e12;
  if (x.time_ns > 0) {
    x.achieved_tflops = x.flops / (x.time_ns * 1e-9) / 1e12;
    x.achieved_gbs = x.bytes / (x.time_ns * 1e-9) / 1e9;
  }
  x.percent_of_peak = peak_flops > 0 ? 100.0 * x.achieved_tflops * 1e12 / peak_flops : 0;
  x.intensity = x.bytes > 0 ? x.flops / x.bytes : 0;
  x.ridge = hbm > 0 ? peak_flops / hbm : 0;
  x.bound = x.intensity >= x.ridge ? "compute" : "memory";
  x.roof_ns = std::max(peak_flops > 0 ? x.flops / peak_flops : 0, hbm > 0 ? x.bytes / hbm : 0) * 1e9;
  x.percent_of_roof = x.time_ns > 0 ? 100.0 * x.roof_ns / x.time_ns : 0;
}

// A module row whose numbers break a physical limit (the peak FLOP rate, the HBM bandwidth, the
// roofline) is impossible: the sizes or the model do not match the capture.
void CheckPhysics(const Rates& rates, const std::string& dtype, model::ModuleEfficiency& x) {
  std::string broken;
  if (x.percent_of_peak > 100) {
    broken = fmt::format("the model's FLOPs in the measured time are {:.1f} TFLOP/s, {:.1f} % of the {} peak {:.1f}",
                         x.achieved_tflops, x.percent_of_peak, dtype, x.peak_tflops);
  } else if (rates.hbm > 0 && x.achieved_gbs * 1e9 > rates.hbm) {
    broken = fmt::format("the model's bytes in the measured time are {:.0f} GB/s, {:.1f} % of HBM's {:.0f}",
                         x.achieved_gbs, 100 * x.achieved_gbs * 1e9 / rates.hbm, rates.hbm / 1e9);
  } else if (x.percent_of_roof > 100) {
    broken = fmt::format("the measured time is {:.1f} % faster than the roofline allows", x.percent_of_roof - 100);
  }
  if (!broken.empty()) {
    x.impossible =
        fmt::format("impossible: {}: the sizes or the model do not match this capture ({})", broken, rates.shows);
  }
}

// The ring shifts of module row m's `calls` calls against the link (transfer_ns: its measured
// NCCL transfer per iteration and rank).
model::CommEfficiency CommRow(const model::ModuleNode& m, const std::string& path, const ModuleCost& cost, double calls,
                              double transfer_ns, const Rates& rates) {
  model::CommEfficiency c;
  c.module = m.name;
  c.path = path;
  c.bytes_per_shift = cost.shift_bytes;
  c.shifts_per_call = cost.shifts;
  c.shifts_per_iteration = cost.shifts * calls;
  c.skew_bytes_per_call = cost.skew_bytes;
  const double batches = (cost.shifts + cost.skews) * calls;  // p2p batches per iteration
  const double sent = (cost.shifts * cost.shift_bytes + cost.skews * cost.skew_bytes) * calls;
  c.transfer_ns_per_shift = transfer_ns / batches;
  c.achieved_gbs = transfer_ns > 0 ? sent / transfer_ns : 0;
  c.link = rates.link;
  c.link_gbs = rates.link_bps / 1e9;
  c.ideal_ns_per_shift = rates.link_bps > 0 ? c.bytes_per_shift / rates.link_bps * 1e9 : 0;
  c.percent_of_link = c.link_gbs > 0 ? 100.0 * c.achieved_gbs / c.link_gbs : 0;
  c.achievable_gbs = rates.achievable_bps / 1e9;
  c.percent_of_achievable = c.achievable_gbs > 0 ? 100.0 * c.achieved_gbs / c.achievable_gbs : 0;
  if (c.percent_of_link > 100) {
    c.impossible = fmt::format(
        "impossible: {:.1f} GB/s is {:.1f} % of the {} link's {:.0f} GB/s per direction: the sizes or the model do "
        "not match this capture ({})",
        c.achieved_gbs, c.percent_of_link, c.link, c.link_gbs, rates.shows);
  }
  return c;
}

// Module row i, when it has a cost model: its efficiency row (and its ring shifts' row) into e,
// what it disagrees on into f.
void AddModule(const model::Report& r, size_t i, const CostConfig& config, const Dims& d, const Rates& rates,
               model::Efficiency& e, Findings& f) {
  const model::ModuleNode& m = r.modules[i];
  if (!IsRow(m)) return;
  std::string path;
  const std::string group = GroupOf(r, static_cast<int>(i), &path);
  const std::string key = config.KeyOf(path);
  if (key.empty()) return;
  // Calls per iteration: counted from the capture (each rank's ranges in the window), else the
  // config's expression of the sizes.
  const std::string expr = config.CallsOf(path);
  const double config_calls = expr.empty() ? -1 : CallsFromExpression(expr, d);
  const CountedCalls n = CountCalls(m, e.iterations);
  if (!n.any && expr.empty()) {
    f.uncounted.push_back(group.empty() ? m.name : group + "/.../" + m.name);
    return;
  }
  const double calls = n.any ? n.counted : config_calls;
  if (n.any && config_calls >= 0 && std::fabs(config_calls - n.counted) > 1e-9 * std::max(1.0, n.counted)) {
    f.disagree[{expr, config_calls, n.counted}].push_back(path);
  }
  if (n.any && n.hi != n.lo) f.uneven.push_back(fmt::format("{} ({} to {})", path, CallsText(n.lo), CallsText(n.hi)));
  const ModuleCost cost = *CostOf(key, d);
  const Measured t = MeasuredOf(m);
  model::ModuleEfficiency x;
  x.module = m.name;
  x.path = path;
  x.cost_key = key;
  x.calls_per_iteration = calls;
  x.calls_source = n.any ? "capture" : "config";
  x.calls_expression = expr;
  x.config_calls = config_calls;
  x.calls_min = n.any ? n.lo : calls;
  x.calls_max = n.any ? n.hi : calls;
  x.backward_share = t.busy > 0 ? static_cast<double>(t.bwd) / static_cast<double>(t.busy) : 0;
  f.backward = f.backward || t.bwd > 0;
  Roofline(cost, calls, d.ranks(), static_cast<double>(t.time) / t.ranks / e.iterations, rates, x);
  CheckPhysics(rates, d.dtype, x);
  e.modules.push_back(x);
  if (cost.shifts > 0 && calls > 0) {
    e.comm.push_back(CommRow(m, path, cost, calls, static_cast<double>(t.transfer) / t.ranks / e.iterations, rates));
    f.skewed = f.skewed || cost.skews > 0;
  }
}

// The notes on what the module rows found: calls that disagree or differ between ranks, rows
// without calls, Cannon's skew, backward work in the times.
void AddNotes(const Findings& f, const Dims& d, model::Efficiency& e) {
  for (const auto& [k, paths] : f.disagree) {
    const auto& [expr, config_calls, counted] = k;
    e.notes.push_back(fmt::format(
        "calls disagree: the capture counts {} call{} per iteration of {}{} where the config's calls '{}' ({}) "
        "give {}: the counted calls are used; check the sizes (--dims, the cpfold config line) or the config's "
        "\"calls\"",
        CallsText(counted), counted == 1 ? "" : "s", paths.front(),
        paths.size() > 1 ? fmt::format(" and {} more module row{}", paths.size() - 1, paths.size() == 2 ? "" : "s")
                         : "",
        expr, ExpressionDims(expr, d), CallsText(config_calls)));
  }
  if (!f.uneven.empty()) {
    e.notes.push_back(fmt::format(
        "the ranks counted different calls per iteration of {} module row{} (the mean over ranks is used){}: {}",
        f.uneven.size(), f.uneven.size() == 1 ? "" : "s", f.uneven.size() == 1 ? "" : ", first", f.uneven.front()));
  }
  if (!f.uncounted.empty()) {
    e.notes.push_back(
        fmt::format("{} module row(s) with a cost model have no calls in the capture's window and no calls-per-"
                    "iteration entry (first: {}): add the group to --model-config's \"calls\"",
                    f.uncounted.size(), f.uncounted.front()));
  }
  if (f.skewed) {
    e.notes.push_back(
        "Cannon's initial skew is one more p2p batch per call: the transfer per batch and the achieved "
        "bandwidth count it (its bytes as the mean over the ranks)");
  }
  if (f.backward) {
    e.notes.push_back(
        "the model counts the forward pass; these modules' times include backward work (the bwd % "
        "column of the module table), so their achieved rates are understated about 3x");
  }
}

}  // namespace

model::Efficiency ComputeEfficiency(const model::Report& r, const CostConfig& config, const std::optional<Dims>& dims,
                                    const std::string& missing) {
  model::Efficiency e;
  e.applicable = HasCostedModules(r, config);
  if (!dims) {
    e.reason = missing;
    return e;
  }
  const Dims& d = *dims;
  if (!ReadLimits(r, config, d, e)) return e;
  const Rates rates = RatesOf(r, d, e);
  Findings findings;
  for (size_t i = 0; i < r.modules.size(); ++i) AddModule(r, i, config, d, rates, e, findings);
  AddNotes(findings, d, e);
  if (e.modules.empty()) {
    e.reason =
        "no module row has a cost model (names such as TriangleMultiplicationOutgoing.forward; map your own "
        "with --model-config's \"modules\")";
    return e;
  }
  e.computed = true;
  return e;
}

}  // namespace cpprof::analysis
