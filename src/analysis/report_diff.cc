// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/report_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "analysis/module_attribution.h"

namespace cpprof::analysis {

using model::DiffMarker;
using model::DiffOptions;
using model::DiffRow;
using model::PeakMemoryOf;
using model::RankDiff;
using model::ReportDiff;

namespace {

struct Totals {
  int64_t count = 0, ns = 0;
  int64_t work_ns = 0;  // modules: mean busy less the NCCL waiting
  std::string label;
};

double Share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

// In both sides with the same count: slower, faster, or the same (time within the tolerance).
DiffMarker TimeMarker(int64_t a_ns, int64_t b_ns) {
  constexpr int64_t kFloorNs = 10'000;  // below 10 us a move is noise whatever its share
  const int64_t d = b_ns - a_ns;
  if (std::llabs(d) < kFloorNs) return DiffMarker::kSame;
  if (a_ns <= 0) return DiffMarker::kSlower;
  const double rel = static_cast<double>(d) / static_cast<double>(a_ns);
  return rel > model::kDiffTimeTolerance    ? DiffMarker::kSlower
         : rel < -model::kDiffTimeTolerance ? DiffMarker::kFaster
                                            : DiffMarker::kSame;
}

// Rows from two keyed maps: changed and new/deleted first, then by the larger time.
std::vector<DiffRow> Rows(const std::map<std::string, Totals>& a, const std::map<std::string, Totals>& b,
                          int64_t a_whole, int64_t b_whole, bool count_decides) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& [k, v] : b) keys.insert(k);
  std::vector<DiffRow> rows;
  for (const auto& k : keys) {
    auto ia = a.find(k), ib = b.find(k);
    DiffRow r;
    r.key = k;
    if (ia != a.end())
      r.a_count = ia->second.count, r.a_ns = ia->second.ns, r.a_work_ns = ia->second.work_ns,
      r.label = ia->second.label;
    if (ib != b.end())
      r.b_count = ib->second.count, r.b_ns = ib->second.ns, r.b_work_ns = ib->second.work_ns,
      r.label = ib->second.label;
    r.a_share = Share(r.a_ns, a_whole);
    r.b_share = Share(r.b_ns, b_whole);
    r.marker = ia == a.end()                             ? DiffMarker::kNew
               : ib == b.end()                           ? DiffMarker::kDeleted
               : count_decides && r.a_count != r.b_count ? DiffMarker::kChanged
                                                         : TimeMarker(r.a_ns, r.b_ns);
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const DiffRow& x, const DiffRow& y) {
    bool xs = x.marker == DiffMarker::kSame, ys = y.marker == DiffMarker::kSame;
    if (xs != ys) return ys;
    int64_t xt = std::max(x.a_ns, x.b_ns), yt = std::max(y.a_ns, y.b_ns);
    return xt != yt ? xt > yt : x.key < y.key;
  });
  return rows;
}

std::string Pct(double f) { return fmt::format("{:+.1f}%", 100.0 * f); }

// One row per rank of either report: busy, comm, compute, exposed time and peak memory.
std::vector<RankDiff> RankRows(const model::Report& a, const model::Report& b, PeakMemoryOf peak_memory) {
  std::vector<std::optional<int64_t>> pa, pb;
  if (peak_memory) pa = peak_memory(a), pb = peak_memory(b);
  std::vector<RankDiff> rows;
  for (size_t r = 0; r < std::max(a.ranks.size(), b.ranks.size()); ++r) {
    RankDiff x;
    x.rank = static_cast<int>(r);
    if (r < a.ranks.size()) {
      const auto& s = a.ranks[r];
      x.in_a = true, x.a_busy = s.busy_ns, x.a_comm = s.comm_ns, x.a_compute = s.compute_ns;
      x.a_transfer = s.exposed_transfer_ns, x.a_wait = s.exposed_wait_ns, x.a_idle = s.idle_ns;
    }
    if (r < b.ranks.size()) {
      const auto& s = b.ranks[r];
      x.in_b = true, x.b_busy = s.busy_ns, x.b_comm = s.comm_ns, x.b_compute = s.compute_ns;
      x.b_transfer = s.exposed_transfer_ns, x.b_wait = s.exposed_wait_ns, x.b_idle = s.idle_ns;
    }
    if (r < pa.size()) x.a_peak = pa[r];
    if (r < pb.size()) x.b_peak = pb[r];
    rows.push_back(x);
  }
  return rows;
}

// One report's kernel mix over all ranks, its classes, and the per-rank counts for the sanity check.
struct Mix {
  std::map<std::string, Totals> kernels, classes;
  std::map<std::pair<int, std::string>, int64_t> per_rank;  // (rank, name) -> launches
  int64_t whole = 0;                                        // kernel time of all ranks
};

// The kernel mix of one report (see Mix).
Mix KernelMix(const model::Report& rep) {
  Mix m;
  for (const auto& s : rep.ranks) {
    for (const auto& k : s.top_kernels) {
      auto& t = m.kernels[k.name];
      t.count += k.instances, t.ns += k.total_ns, t.label = std::string(model::Name(k.cls));
      m.whole += k.total_ns;
    }
    // The sanity check counts over the whole capture: a window's edges may cut differently.
    for (const auto& [name, n] : s.capture_counts) m.per_rank[{s.rank, name}] += n;
    for (int c = 0; c < model::kNumOpClasses; ++c) {
      if (!s.classes[c].instances) continue;
      auto& t = m.classes[std::string(model::kOpClassNames[c])];
      t.count += s.classes[c].instances, t.ns += s.classes[c].sum_ns;
      t.label = std::string(model::Kind(static_cast<model::OpClass>(c)));
    }
  }
  return m;
}

// Modules by path; time is the mean busy per rank (returned in mean_busy for all ranks).
std::map<std::string, Totals> ModuleTotals(const model::Report& rep, int64_t& mean_busy) {
  std::map<std::string, Totals> out;
  const std::vector<std::string> path = ModulePaths(rep.modules);
  for (size_t i = 0; i < rep.modules.size(); ++i) {
    const auto& m = rep.modules[i];
    auto& t = out[path[i]];
    int64_t wait = 0;
    for (const auto& pr : m.per_rank) t.count += pr.ops, wait += pr.wait_ns;
    if (!m.per_rank.empty()) wait /= static_cast<int64_t>(m.per_rank.size());
    t.ns += m.mean_busy_ns;
    t.work_ns += std::max<int64_t>(0, m.mean_busy_ns - wait);
    t.label = m.name == "[unattributed]" ? "-" : m.cp_distributed ? "CP" : "serial";
  }
  int64_t sum = 0;
  for (const auto& s : rep.ranks) sum += s.busy_ns;
  mean_busy = rep.ranks.empty() ? 0 : sum / static_cast<int64_t>(rep.ranks.size());
  return out;
}

// What the kernel check found: the problems, and for the SAME line the names and launches of A.
struct KernelCheck {
  std::vector<std::string> problems;
  size_t names_a = 0;
  int64_t launches = 0;
};

// The same kernels, as many times, on each rank; differing (rank, kernel) counts go to
// d.sanity_details (the first 20).
KernelCheck CheckKernels(const std::map<std::pair<int, std::string>, int64_t>& ra,
                         const std::map<std::pair<int, std::string>, int64_t>& rb, ReportDiff& d) {
  int64_t news = 0, gone = 0, changed = 0;
  std::set<std::string> names_a, names_b;
  for (const auto& [k, v] : ra) names_a.insert(k.second);
  for (const auto& [k, v] : rb) names_b.insert(k.second);
  for (const auto& n : names_b) news += !names_a.count(n);
  for (const auto& n : names_a) gone += !names_b.count(n);
  std::set<std::pair<int, std::string>> keys;
  for (const auto& [k, v] : ra) keys.insert(k);
  for (const auto& [k, v] : rb) keys.insert(k);
  for (const auto& k : keys) {
    int64_t x = ra.count(k) ? ra.at(k) : 0, y = rb.count(k) ? rb.at(k) : 0;
    if (x != y) {
      ++changed;
      if (d.sanity_details.size() < 20) {
        d.sanity_details.push_back(fmt::format("rank {}: {} x{} -> x{}", k.first, k.second, x, y));
      }
    }
  }
  KernelCheck check;
  auto& problems = check.problems;
  if (d.a_ranks != d.b_ranks) problems.push_back(fmt::format("{} ranks vs {}", d.a_ranks, d.b_ranks));
  if (news) problems.push_back(fmt::format("{} kernel name{} only in B", news, news == 1 ? "" : "s"));
  if (gone) problems.push_back(fmt::format("{} only in A", gone));
  if (changed) problems.push_back(fmt::format("{} (rank, kernel) counts differ", changed));
  check.names_a = names_a.size();
  for (const auto& [k, v] : ra) check.launches += v;
  return check;
}

// Peak memory within the tolerance on each rank that has it in both; sets d.memory_compared.
std::vector<std::string> CheckMemory(const DiffOptions& options, ReportDiff& d) {
  std::vector<std::string> problems;
  for (const auto& r : d.ranks) {
    if (!r.a_peak || !r.b_peak) continue;
    d.memory_compared = true;
    double rel = *r.a_peak > 0 ? static_cast<double>(*r.b_peak - *r.a_peak) / static_cast<double>(*r.a_peak) : 0;
    if (std::fabs(rel) > options.mem_tolerance) {
      problems.push_back(
          fmt::format("rank {} peak memory {} (tolerance {:.1f}%)", r.rank, Pct(rel), 100.0 * options.mem_tolerance));
    }
  }
  return problems;
}

// Sanity: the kernel and memory checks, their verdict and the line that says it.
void CheckSameWork(const Mix& ma, const Mix& mb, const DiffOptions& options, ReportDiff& d) {
  const KernelCheck kernels = CheckKernels(ma.per_rank, mb.per_rank, d);
  const std::vector<std::string> memory_problems = CheckMemory(options, d);
  d.kernels_same = kernels.problems.empty();
  d.memory_same = memory_problems.empty();
  d.same_work = d.kernels_same && d.memory_same;
  if (d.same_work) {
    d.sanity_line = fmt::format(
        "SAME GPU work: {} kernel and memory op names, {} launches on {} rank{} over the "
        "whole capture, identical counts per rank; {}",
        kernels.names_a, kernels.launches, d.a_ranks, d.a_ranks == 1 ? "" : "s",
        d.memory_compared ? fmt::format("peak memory within {:.1f}% on every rank", 100.0 * options.mem_tolerance)
                          : "peak memory not compared (not captured in both)");
  } else {
    std::string list;
    if (!kernels.problems.empty()) {
      list = "kernel check failed: " + fmt::format("{}", fmt::join(kernels.problems, "; "));
    }
    if (!memory_problems.empty()) {
      list += (list.empty() ? "" : "; ") + std::string("memory check failed: ") +
              fmt::format("{}", fmt::join(memory_problems, "; "));
    }
    if (d.kernels_same) list += "; the kernels match (names and counts per rank)";
    d.sanity_line = "GPU work DIFFERS: " + list;
  }
}

// The capture options of each report, when they differ.
void CompareOptions(const model::Report& a, const model::Report& b, ReportDiff& d) {
  if (a.capture.reconstructed_flags != b.capture.reconstructed_flags ||
      a.capture.pytorch_autograd != b.capture.pytorch_autograd) {
    auto flags = [](const model::Report& r) {
      std::string f = r.capture.recorded ? r.capture.reconstructed_flags : "(not recorded)";
      if (r.capture.pytorch_autograd) f += " --pytorch autograd-*";
      return f;
    };
    d.options_a = flags(a), d.options_b = flags(b);
  }
}

// Thresholds: growth from A to B of each rank's compute time and peak memory, and of each
// module's work, over --max-time-delta / --max-mem-delta.
void FindRegressions(const DiffOptions& options, ReportDiff& d) {
  for (const auto& r : d.ranks) {
    if (options.max_time_delta && r.in_a && r.in_b && r.a_compute > 0) {
      double rel = static_cast<double>(r.b_compute - r.a_compute) / static_cast<double>(r.a_compute);
      if (rel > *options.max_time_delta) {
        d.regressions.push_back(
            fmt::format("rank {} GPU compute time {} ({:.3f} -> {:.3f} ms), over --max-time-delta {:.1f}%", r.rank,
                        Pct(rel), r.a_compute / 1e6, r.b_compute / 1e6, 100.0 * *options.max_time_delta));
      }
    }
    if (options.max_mem_delta && r.a_peak && r.b_peak && *r.a_peak > 0) {
      double rel = static_cast<double>(*r.b_peak - *r.a_peak) / static_cast<double>(*r.a_peak);
      if (rel > *options.max_mem_delta) {
        d.regressions.push_back(fmt::format("rank {} peak memory {} ({} -> {} MiB), over --max-mem-delta {:.1f}%",
                                            r.rank, Pct(rel), *r.a_peak >> 20, *r.b_peak >> 20,
                                            100.0 * *options.max_mem_delta));
      }
    }
  }
  if (options.max_time_delta) {
    for (const auto& m : d.modules) {
      const bool in_both = m.marker != DiffMarker::kNew && m.marker != DiffMarker::kDeleted;
      if (!in_both || m.a_work_ns <= 0 || m.a_share < 0.01) continue;
      double rel = static_cast<double>(m.b_work_ns - m.a_work_ns) / static_cast<double>(m.a_work_ns);
      if (rel > *options.max_time_delta) {
        d.regressions.push_back(
            fmt::format("module {} {} ({:.3f} -> {:.3f} ms mean per rank, NCCL waiting left out), "
                        "over --max-time-delta {:.1f}%",
                        m.key, Pct(rel), m.a_work_ns / 1e6, m.b_work_ns / 1e6, 100.0 * *options.max_time_delta));
      }
    }
  }
}

// The mean over ranks of their waiting for peers (exposed: no transfer, no compute).
int64_t MeanWait(const model::Report& r) {
  int64_t sum = 0;
  for (const auto& s : r.ranks) sum += s.exposed_wait_ns;
  return r.ranks.empty() ? 0 : sum / static_cast<int64_t>(r.ranks.size());
}

// --max-iter-delta: the median steady iteration, a newly named straggler, waiting for peers.
void FindIterationRegressions(const model::Report& a, const model::Report& b, double limit, ReportDiff& d) {
  const int64_t ia = a.window.iter_median_ns, ib = b.window.iter_median_ns;
  const int sa = a.verdict.straggler_rank, sb = b.verdict.straggler_rank;
  std::string straggler;
  if (sb >= 0) {
    const auto& im = b.imbalance;
    straggler = fmt::format(
        "rank {} is {} straggler (last at {} of {} matched NCCL ops, kept the others waiting "
        "{:.3f} ms)",
        sb, sb != sa ? "a new" : "still the", im.straggler_last_arrivals, im.instances,
        im.straggler_caused_wait_ns / 1e6);
  }
  bool said = false;
  if (ia > 0 && ib > 0) {
    const double rel = static_cast<double>(ib - ia) / static_cast<double>(ia);
    if (rel > limit) {
      d.regressions.push_back(
          fmt::format("median steady iteration {} ({:.3f} -> {:.3f} ms), over --max-iter-delta "
                      "{:.1f}%{}",
                      Pct(rel), ia / 1e6, ib / 1e6, 100.0 * limit, straggler.empty() ? "" : ": " + straggler));
      said = true;
    }
  } else {
    d.regressions.push_back("--max-iter-delta: a side has no steady iterations to compare (see its window line)");
  }
  if (!said && sb >= 0 && sb != sa) d.regressions.push_back(straggler + ", with --max-iter-delta");
  const int64_t wa = MeanWait(a), wb = MeanWait(b);
  if (ia > 0 && wb - wa > static_cast<int64_t>(limit * static_cast<double>(ia))) {
    d.regressions.push_back(
        fmt::format("waiting for peers grew by {:.3f} ms per rank ({:.3f} -> {:.3f} ms mean), over "
                    "--max-iter-delta {:.1f}% of A's iteration",
                    (wb - wa) / 1e6, wa / 1e6, wb / 1e6, 100.0 * limit));
  }
}

}  // namespace

ReportDiff DiffReports(const model::Report& a, const model::Report& b, const DiffOptions& options,
                       PeakMemoryOf peak_memory) {
  ReportDiff d;
  d.a_ranks = a.ranks.size();
  d.b_ranks = b.ranks.size();
  d.ranks = RankRows(a, b, peak_memory);
  const Mix ma = KernelMix(a), mb = KernelMix(b);
  d.kernels = Rows(ma.kernels, mb.kernels, ma.whole, mb.whole, true);
  d.classes = Rows(ma.classes, mb.classes, ma.whole, mb.whole, true);
  int64_t busy_a = 0, busy_b = 0;
  const auto mods_a = ModuleTotals(a, busy_a);
  const auto mods_b = ModuleTotals(b, busy_b);
  d.modules = Rows(mods_a, mods_b, busy_a, busy_b, false);
  CheckSameWork(ma, mb, options, d);
  CompareOptions(a, b, d);
  d.window_a = a.window.description, d.window_b = b.window.description;
  FindRegressions(options, d);
  if (options.max_iter_delta) FindIterationRegressions(a, b, *options.max_iter_delta, d);
  return d;
}

}  // namespace cpprof::analysis
