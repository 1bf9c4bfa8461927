#include "analysis/cost_efficiency.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

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
  for (const auto& m : r.modules) {
    if (IsRow(m) && config.KeyOf(m.name).rfind("Triangle", 0) == 0) return true;
  }
  return false;
}

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
  bool backward = false, skewed = false;
  for (size_t i = 0; i < r.modules.size(); ++i) {
    const model::ModuleNode& m = r.modules[i];
    if (!IsRow(m)) continue;
    const std::string key = config.KeyOf(m.name);
    if (key.empty()) continue;
    std::string path;
    const std::string group = GroupOf(r, static_cast<int>(i), &path);
    auto calls_it = config.calls.find(group);
    if (calls_it == config.calls.end()) {
      uncounted.push_back(group.empty() ? m.name : group + "/.../" + m.name);
      continue;
    }
    const double calls = CallsFromExpression(calls_it->second, d);
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
  if (!uncounted.empty()) {
    e.notes.push_back(
        fmt::format("{} module row(s) with a cost model sit in groups without a calls-per-iteration "
                    "entry (first: {}): add the group to --model-config's \"calls\"",
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
