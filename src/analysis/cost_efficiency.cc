#include "analysis/cost_efficiency.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

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
  e.dims_source = d.source;
  e.dims = d.ToString();
  e.dtype = d.dtype;
  if (d.Get("N") <= 0) {
    e.reason = "the sizes give no N (tokens): add N=... to --dims";
    return e;
  }
  for (const auto& it : r.window.iterations) e.iterations += it.in_window ? 1 : 0;
  if (e.iterations == 0) {
    e.reason = "no iterations in the window (efficiency is per iteration: see the window line, --window)";
    return e;
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
    return e;
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
  const double peak_flops = PeakTflops(e.device, d.dtype) * 1e12;
  const double hbm = e.device.hbm_tbs * 1e12;
  // The link of the ring shifts: the doctor's topology beside the export, else NVLink assumed.
  const bool pcie = r.interconnect.find("PCIe only") != std::string::npos;
  e.link_source = r.interconnect.empty() ? "interconnect unknown (no doctor findings beside the export): NVLink "
                                           "assumed"
                                         : "the doctor's topology: " + r.interconnect;
  const std::string link = pcie ? "PCIe" : "NVLink";
  const double link_bps = (pcie ? e.device.pcie_gbs : e.device.nvlink_gbs) * 1e9;

  std::vector<std::string> uncounted;
  // Calls the capture counted that the config's expression does not give: (expression, config
  // calls, counted) -> module paths.
  std::map<std::tuple<std::string, double, double>, std::vector<std::string>> disagree;
  std::vector<std::string> uneven;  // modules whose ranks counted different calls
  bool backward = false, skewed = false;
  for (size_t i = 0; i < r.modules.size(); ++i) {
    const model::ModuleNode& m = r.modules[i];
    if (!IsRow(m)) continue;
    std::string path;
    const std::string group = GroupOf(r, static_cast<int>(i), &path);
    const std::string key = config.KeyOf(path);
    if (key.empty()) continue;
    // Calls per iteration: counted from the capture (each rank's ranges in the window), else the
    // config's expression of the sizes.
    const std::string expr = config.CallsOf(path);
    const double config_calls = expr.empty() ? -1 : CallsFromExpression(expr, d);
    double counted = 0, lo = 0, hi = 0;
    bool any = false;
    for (size_t k = 0; k < m.per_rank.size(); ++k) {
      const double c = static_cast<double>(m.per_rank[k].calls) / e.iterations;
      counted += c;
      lo = k == 0 ? c : std::min(lo, c);
      hi = k == 0 ? c : std::max(hi, c);
      any = any || m.per_rank[k].calls > 0;
    }
    if (!m.per_rank.empty()) counted /= static_cast<double>(m.per_rank.size());
    if (!any && expr.empty()) {
      uncounted.push_back(group.empty() ? m.name : group + "/.../" + m.name);
      continue;
    }
    const double calls = any ? counted : config_calls;
    if (any && config_calls >= 0 && std::fabs(config_calls - counted) > 1e-9 * std::max(1.0, counted)) {
      disagree[{expr, config_calls, counted}].push_back(path);
    }
    if (any && hi != lo) uneven.push_back(fmt::format("{} ({} to {})", path, CallsText(lo), CallsText(hi)));
    const ModuleCost cost = *CostOf(key, d);
    int64_t busy = 0, bwd = 0, time = 0, transfer = 0;
    for (const auto& pr : m.per_rank) {
      busy += pr.busy_ns;
      bwd += pr.backward_ns;
      time += pr.busy_ns - (pr.comm_ns - pr.hidden_ns);  // less the communication no compute hid
      transfer += pr.transfer_ns;
    }
    const double nr = m.per_rank.empty() ? 1.0 : static_cast<double>(m.per_rank.size());
    model::ModuleEfficiency x;
    x.module = m.name;
    x.path = path;
    x.cost_key = key;
    x.calls_per_iteration = calls;
    x.calls_source = any ? "capture" : "config";
    x.calls_expression = expr;
    x.config_calls = config_calls;
    x.calls_min = any ? lo : calls;
    x.calls_max = any ? hi : calls;
    x.flops = calls * cost.FlopsPerRank(ranks);
    x.matmul_flops = calls * cost.MatmulFlopsPerRank(ranks);
    x.bytes = calls * cost.BytesPerRank(ranks);
    x.time_ns = static_cast<double>(time) / nr / e.iterations;
    x.backward_share = busy > 0 ? static_cast<double>(bwd) / static_cast<double>(busy) : 0;
    backward = backward || bwd > 0;
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
    e.modules.push_back(x);

    if (cost.shifts > 0 && calls > 0) {
      model::CommEfficiency c;
      c.module = m.name;
      c.path = path;
      c.bytes_per_shift = cost.shift_bytes;
      c.shifts_per_call = cost.shifts;
      c.shifts_per_iteration = cost.shifts * calls;
      c.skew_bytes_per_call = cost.skew_bytes;
      const double batches = (cost.shifts + cost.skews) * calls;  // p2p batches per iteration
      const double sent = (cost.shifts * cost.shift_bytes + cost.skews * cost.skew_bytes) * calls;
      const double transfer_ns = static_cast<double>(transfer) / nr / e.iterations;
      c.transfer_ns_per_shift = transfer_ns / batches;
      c.achieved_gbs = transfer_ns > 0 ? sent / transfer_ns : 0;
      c.link = link;
      c.link_gbs = link_bps / 1e9;
      c.ideal_ns_per_shift = link_bps > 0 ? c.bytes_per_shift / link_bps * 1e9 : 0;
      c.percent_of_link = c.link_gbs > 0 ? 100.0 * c.achieved_gbs / c.link_gbs : 0;
      e.comm.push_back(c);
      skewed = skewed || cost.skews > 0;
    }
  }
  for (const auto& [k, paths] : disagree) {
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
  if (!uneven.empty()) {
    e.notes.push_back(fmt::format(
        "the ranks counted different calls per iteration of {} module row{} (the mean over ranks is used){}: {}",
        uneven.size(), uneven.size() == 1 ? "" : "s", uneven.size() == 1 ? "" : ", first", uneven.front()));
  }
  if (!uncounted.empty()) {
    e.notes.push_back(
        fmt::format("{} module row(s) with a cost model have no calls in the capture's window and no calls-per-"
                    "iteration entry (first: {}): add the group to --model-config's \"calls\"",
                    uncounted.size(), uncounted.front()));
  }
  if (skewed) {
    e.notes.push_back(
        "Cannon's initial skew is one more p2p batch per call: the transfer per batch and the achieved "
        "bandwidth count it (its bytes as the mean over the ranks)");
  }
  if (backward) {
    e.notes.push_back(
        "the model counts the forward pass; these modules' times include backward work (the bwd % "
        "column of the module table), so their achieved rates are understated about 3x");
  }
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
