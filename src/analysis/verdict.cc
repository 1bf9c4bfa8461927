// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "base/saturating.h"

namespace cpprof::analysis {

namespace {

double Share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string Pct(double share) { return fmt::format("{:.1f}%", 100.0 * share); }
std::string Ms(int64_t ns) { return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6); }

// Mean over ranks of f(rank) / span.
template <typename F>
double MeanShare(const std::vector<model::RankSummary>& ranks, F f) {
  if (ranks.empty()) return 0;
  double sum = 0;
  for (const auto& s : ranks) sum += Share(f(s), s.span_ns);
  return sum / static_cast<double>(ranks.size());
}

template <typename F>
double MeanNodeShare(const model::Report& r, const model::ModuleNode& m, F f) {
  if (r.ranks.empty()) return 0;
  double sum = 0;
  for (size_t k = 0; k < m.per_rank.size() && k < r.ranks.size(); ++k)
    sum += Share(f(m.per_rank[k]), r.ranks[k].span_ns);
  return sum / static_cast<double>(r.ranks.size());
}

// "PairformerBlock.forward > TriangleMultiplicationOutgoing.forward": a row with its parent,
// which names the place better than either alone.
std::string ModuleLabel(const model::Report& r, size_t i) {
  const auto& m = r.modules[i];
  if (m.parent >= 0 && !r.modules[m.parent].is_group) return r.modules[m.parent].name + " > " + m.name;
  return m.name;
}

// The module rows that hold most of `f` themselves: a row whose one child holds 90% of its
// value is left for that child. Best first, at most `k`.
template <typename F>
std::vector<std::pair<double, size_t>> SpecificModules(const model::Report& r, F f, size_t k) {
  std::vector<double> v(r.modules.size());
  for (size_t i = 0; i < r.modules.size(); ++i) v[i] = MeanNodeShare(r, r.modules[i], f);
  std::vector<double> best_child(r.modules.size(), 0.0);
  for (size_t i = 0; i < r.modules.size(); ++i) {
    int p = r.modules[i].parent;
    if (p >= 0) best_child[p] = std::max(best_child[p], v[i]);
  }
  std::vector<std::pair<double, size_t>> out;
  for (size_t i = 0; i < r.modules.size(); ++i) {
    if (v[i] <= 0 || r.modules[i].name == "[unattributed]") continue;
    if (best_child[i] >= 0.9 * v[i]) continue;
    out.push_back({v[i], i});
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (out.size() > k) out.resize(k);
  return out;
}

}  // namespace

void FillCommBudget(const CommMatch& comm, size_t r, const RankModuleTimes& sweep, model::RankSummary& s) {
  int64_t exposed = 0;
  for (const auto& kind : comm.kinds) {
    if (r >= kind.per_rank.size()) continue;
    const auto& k = kind.per_rank[r];
    SatAdd(s.wait_ns, k.wait_ns);
    SatAdd(s.transfer_ns, k.transfer_ns);
    SatAdd(s.unmatched_ns, k.unmatched_ns);
    exposed += k.exposed_transfer_ns;
  }
  s.exposed_transfer_ns = std::clamp<int64_t>(exposed, 0, s.comm_only_ns);
  s.exposed_wait_ns = s.comm_only_ns - s.exposed_transfer_ns;
  // The sweep's gaps add up to the idle time of its window; without a window, to the idle time
  // between the first and the last op, which is the span's.
  s.launch_gap_ns = std::min(sweep.launch_gap_ns, s.idle_ns);
  s.host_stall_ns = s.idle_ns - s.launch_gap_ns;
  s.launch_bound = s.span_ns > 0 && Share(s.launch_gap_ns, s.span_ns) >= kLaunchBoundShare;
}

model::Imbalance SummarizeImbalance(const std::vector<model::RankSummary>& ranks,
                                    std::vector<model::CollectiveStats> kinds) {
  model::Imbalance im;
  std::vector<int64_t> caused(ranks.size(), 0), last(ranks.size(), 0);
  im.waited_for_ns.assign(ranks.size(), std::vector<int64_t>(ranks.size(), 0));
  for (const auto& k : kinds) {
    im.instances += k.instances;
    for (size_t r = 0; r < k.per_rank.size() && r < ranks.size(); ++r) {
      const auto& by = k.per_rank[r].waited_for_ns;
      for (size_t l = 0; l < by.size() && l < ranks.size(); ++l) SatAdd(im.waited_for_ns[r][l], by[l]);
    }
    for (size_t r = 0; r < k.per_rank.size() && r < ranks.size(); ++r) {
      caused[r] += k.per_rank[r].caused_wait_ns;
      last[r] += k.per_rank[r].last_arrivals;
    }
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (caused[r] > im.straggler_caused_wait_ns) {
      im.straggler_rank = static_cast<int>(r);
      im.straggler_caused_wait_ns = caused[r];
      im.straggler_last_arrivals = last[r];
    }
  }
  int64_t max_busy = -1, min_busy = INT64_MAX, max_compute = -1, min_compute = INT64_MAX;
  for (const auto& s : ranks) {
    if (s.busy_ns > max_busy) max_busy = s.busy_ns, im.busiest_rank = s.rank;
    min_busy = std::min(min_busy, s.busy_ns);
    max_compute = std::max(max_compute, s.compute_ns);
    min_compute = std::min(min_compute, s.compute_ns);
  }
  // In double: a damaged rank's negative time must not overflow the difference.
  auto spread = [](int64_t max, int64_t min) {
    return (static_cast<double>(max) - static_cast<double>(min)) / static_cast<double>(max);
  };
  if (max_busy > 0) im.busy_spread = spread(max_busy, min_busy);
  if (max_compute > 0) im.compute_spread = spread(max_compute, min_compute);
  im.collectives = std::move(kinds);
  return im;
}

namespace {

// Each rank's window split by what the GPU did (mean over ranks), and the mean window.
struct MeanShares {
  double compute = 0, transfer = 0, waiting = 0, idle = 0, launch = 0;
  int64_t span = 0;
};

// The mean shares of r's ranks (at least one).
MeanShares SharesOf(const model::Report& r) {
  MeanShares m;
  m.compute = MeanShare(r.ranks, [](const auto& s) { return s.compute_ns; });
  m.transfer = MeanShare(r.ranks, [](const auto& s) { return s.exposed_transfer_ns; });
  m.waiting = MeanShare(r.ranks, [](const auto& s) { return s.exposed_wait_ns; });
  m.idle = MeanShare(r.ranks, [](const auto& s) { return s.idle_ns; });
  m.launch = MeanShare(r.ranks, [](const auto& s) { return s.launch_gap_ns; });
  // A double: exact below 2^53 ns in all (104 days), and no sum past int64 on damaged spans.
  double span_sum = 0;
  for (const auto& s : r.ranks) span_sum += static_cast<double>(s.span_ns);
  m.span = static_cast<int64_t>(span_sum / static_cast<double>(r.ranks.size()));
  return m;
}

// The predicted median steady iteration of the replay's candidate `edit`; -1 when not tried.
int64_t Predicted(const model::Replay& p, const std::string& edit) {
  for (const auto& w : p.opportunities) {
    if (w.edit == edit) return w.predicted_iter_median_ns;
  }
  return -1;
}

// What the replay predicts bringing the imbalance's straggler on time saves per iteration.
int64_t StragglerGain(const model::Report& r) {
  const int64_t predicted = Predicted(r.replay, fmt::format("rank {}:on-time", r.imbalance.straggler_rank));
  return predicted < 0 ? 0 : r.replay.measured_iter_median_ns - predicted;
}

// "rank 3", or "rank 3 (row 1, col 1)" on a 2-D grid.
std::string Who(const model::Report& r, int rank) { return fmt::format("rank {}{}", rank, r.grid.Place(rank)); }

// On a 2-D grid, where `rank` was waited for most: " (12.3 ms of it on the column 1 ring)", or in
// ops of the whole grid.
std::string RingThatWaited(const model::Report& r, int rank) {
  if (!r.grid.two_d()) return "";
  const model::RingWait* most = nullptr;
  for (const auto& w : r.imbalance.ring_waits) {
    if (w.most_waited_for == rank && w.ring != "across rings" && (!most || w.most_ns > most->most_ns)) most = &w;
  }
  if (!most) return "";
  return most->ring == "whole grid" ? fmt::format(" ({} of it in ops of the whole grid)", Ms(most->most_ns))
                                    : fmt::format(" ({} of it on the {})", Ms(most->most_ns), most->ring);
}

// The straggler the verdict names (-1: none): with the replay, only a consistent one worth
// kStragglerGain of the iteration.
int NamedStraggler(const model::Report& r) {
  const auto& im = r.imbalance;
  if (r.ranks.size() < 2 || im.straggler_rank < 0) return -1;
  if (!(r.replay.built && r.replay.self_check_ok)) return im.straggler_rank;
  const bool most = 2 * im.straggler_last_arrivals > im.instances;
  return most && Share(StragglerGain(r), r.replay.measured_iter_median_ns) >= kStragglerGain ? im.straggler_rank : -1;
}

// The straggler, named only when it is one: it arrived last at most matched NCCL instances and
// the replay predicts that bringing it on time gains kStragglerGain of the iteration or more.
// Otherwise "no consistent straggler", with the waits each rank caused.
std::string ReplayedStraggler(const model::Report& r) {
  const auto& im = r.imbalance;
  const model::Replay& p = r.replay;
  const int64_t gain = StragglerGain(r);
  const double share = Share(gain, p.measured_iter_median_ns);
  const bool most = 2 * im.straggler_last_arrivals > im.instances;
  if (NamedStraggler(r) >= 0) {
    return fmt::format(
        " The straggler is {}: it arrived last at {} of {} matched NCCL ops and kept the others waiting {} in "
        "all{}; bringing it on time is predicted to save {} per iteration ({}).",
        Who(r, im.straggler_rank), im.straggler_last_arrivals, im.instances, Ms(im.straggler_caused_wait_ns),
        RingThatWaited(r, im.straggler_rank), Ms(gain), Pct(share));
  }
  std::vector<std::string> waits;
  for (const auto& s : r.ranks) waits.push_back(fmt::format("rank {} waited {}", s.rank, Ms(s.wait_ns)));
  return fmt::format(
      " No consistent straggler: {} arrived last at {} of {} matched NCCL ops{}, and bringing it on time is "
      "predicted to save {} per iteration ({}, under {}); the waits are mutual ({}).",
      Who(r, im.straggler_rank), im.straggler_last_arrivals, im.instances, most ? "" : " (not most)", Ms(gain),
      Pct(share), Pct(kStragglerGain), fmt::join(waits, ", "));
}

// The verdict's summary: per iteration (or over the window), where each rank's window goes, and
// the straggler.
std::string Summary(const model::Report& r, const MeanShares& m) {
  const auto& w = r.window;
  const size_t n = r.ranks.size();
  std::string head;
  if (w.iter_median_ns > 0) {
    int in = static_cast<int>(
        std::count_if(w.iterations.begin(), w.iterations.end(), [](const auto& t) { return t.in_window; }));
    head = fmt::format("Per {}iteration {} (median of {}).", w.kind == "steady" ? "steady-state " : "",
                       Ms(w.iter_median_ns), in);
  } else {
    head = fmt::format("Over {} of {}.", Ms(m.span),
                       w.whole_capture ? "the whole capture (start-up included)" : "the window");
  }
  std::string summary =
      head + fmt::format(
                 " Of each rank's window{}: compute {}, exposed transfer {}, waiting for peers {}, "
                 "GPU idle for the host {}",
                 n > 1 ? " (mean over ranks)" : "", Pct(m.compute), Pct(m.transfer), Pct(m.waiting), Pct(m.idle));
  summary += m.idle > 0 ? fmt::format(" (launch gaps {}).", Pct(m.launch)) : ".";
  const auto& im = r.imbalance;
  if (n > 1 && im.straggler_rank >= 0 && r.replay.built && r.replay.self_check_ok) {
    summary += ReplayedStraggler(r);
  } else if (n > 1 && im.straggler_rank >= 0) {
    summary += fmt::format(
        " The straggler is {}: it arrived last at {} of {} matched NCCL ops and kept the "
        "others waiting {} in all{}.",
        Who(r, im.straggler_rank), im.straggler_last_arrivals, im.instances, Ms(im.straggler_caused_wait_ns),
        RingThatWaited(r, im.straggler_rank));
  } else if (n > 1) {
    summary += " No rank kept another waiting in matched NCCL ops.";
  }
  return summary;
}

// An opportunity: its share of the mean window, and what it says.
using Opportunity = std::pair<double, std::string>;

// The straggler (several ranks, one kept the others waiting): how long, and why it is late.
void StragglerOpportunity(const model::Report& r, const MeanShares& m, std::vector<Opportunity>& ops) {
  const size_t n = r.ranks.size();
  const auto& im = r.imbalance;
  if (!(n > 1 && im.straggler_rank >= 0 && m.span > 0)) return;
  const auto& st = r.ranks[im.straggler_rank];
  double share = Share(im.straggler_caused_wait_ns, m.span) / static_cast<double>(n - 1);
  double others_idle = 0;
  for (const auto& s : r.ranks) {
    if (s.rank != im.straggler_rank) others_idle += Share(s.idle_ns, s.span_ns) / static_cast<double>(n - 1);
  }
  std::string why;
  if (st.idle_ns > 0 && Share(st.idle_ns, st.span_ns) > others_idle * 1.2 + 0.01) {
    why = fmt::format("its GPU is idle for its host {} of the window (the others' mean: {})",
                      Pct(Share(st.idle_ns, st.span_ns)), Pct(others_idle));
  } else if (im.compute_spread > 0.05) {
    why = fmt::format("its compute takes {} (ranks differ by {})", Ms(st.compute_ns), Pct(im.compute_spread));
  } else {
    why = "its host reaches the NCCL calls later";
  }
  ops.push_back({share, fmt::format("Rank {}{} is late: the other ranks waited {} for it ({} of their time); {}.",
                                    im.straggler_rank, r.grid.Place(im.straggler_rank), Ms(im.straggler_caused_wait_ns),
                                    Pct(share), why)});
}

// The two module rows with the most transfer not hidden under compute, and their NCCL kinds.
void TransferOpportunities(const model::Report& r, std::vector<Opportunity>& ops) {
  for (const auto& [share, i] : SpecificModules(
           r, [](const model::ModuleRankTime& t) { return t.exposed_transfer_ns; }, 2)) {
    std::string kinds;
    const auto& m = r.modules[i];
    for (int k = 0; k < model::kNumOpClasses; ++k) {
      int64_t any = 0;
      for (const auto& t : m.per_rank) any += t.comm_kind_ns[k];
      if (any > 0) kinds += (kinds.empty() ? "" : "/") + std::string(model::kOpClassNames[k]);
    }
    ops.push_back({share, fmt::format("{}: {} of the window is {} transfer not hidden under compute: overlap it with "
                                      "the module's GEMMs (post the next shift before computing) or give each rank "
                                      "more work per transfer.",
                                      ModuleLabel(r, i), Pct(share), kinds.empty() ? "NCCL" : kinds)});
  }
}

// The GPU waiting for the host (2% of the window or more): where most, and short gaps or long
// stalls.
void IdleOpportunity(const model::Report& r, const MeanShares& m, std::vector<Opportunity>& ops) {
  if (m.idle < 0.02) return;
  auto where = SpecificModules(
      r, [](const model::ModuleRankTime& t) { return t.host_idle_ns; }, 1);
  std::string at = where.empty() ? "" : fmt::format(", most before {}'s launches", ModuleLabel(r, where[0].second));
  std::string fix = m.launch >= m.idle / 2
                        ? "many short gaps between small kernels: CUDA graphs, fused or fewer kernels, or a larger N"
                        : "long host stalls: synchronisations, host work or data loading between launches";
  ops.push_back({m.idle, fmt::format("The GPU waits for the host {} of the window{}: {}.", Pct(m.idle), at, fix)});
}

// Compute that differs between ranks by 5% or more: the most and the least.
void UnbalancedOpportunity(const model::Report& r, const MeanShares& m, std::vector<Opportunity>& ops) {
  const auto& im = r.imbalance;
  if (!(r.ranks.size() > 1 && im.compute_spread >= 0.05)) return;
  auto most = std::max_element(r.ranks.begin(), r.ranks.end(),
                               [](const auto& a, const auto& b) { return a.compute_ns < b.compute_ns; });
  auto least = std::min_element(r.ranks.begin(), r.ranks.end(),
                                [](const auto& a, const auto& b) { return a.compute_ns < b.compute_ns; });
  double share = Share(most->compute_ns - least->compute_ns, m.span);
  ops.push_back({share, fmt::format("Compute is unbalanced: rank {} computes {}, rank {} {} ({} spread): even out the "
                                    "CP split.",
                                    most->rank, Ms(most->compute_ns), least->rank, Ms(least->compute_ns),
                                    Pct(im.compute_spread))});
}

// What a candidate edit of the replay is, in words.
std::string EditLabel(const std::string& edit) {
  const auto ends = [&](std::string_view tail) {
    return edit.size() >= tail.size() && edit.compare(edit.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (ends(":on-time")) {
    return fmt::format("Rank {} on time", edit.substr(5, edit.size() - 5 - 8));
  }
  if (edit == "launch-gaps:0") return "No launch gaps (what CUDA graphs, or fewer and fused kernels, would give)";
  if (ends(":overlap")) return fmt::format("{}'s transfers overlapped with compute", edit.substr(0, edit.size() - 8));
  return edit;
}

// The replay's candidates that save 1% of the median steady iteration or more, by predicted
// gain (at most three), then unbalanced compute, which the replay does not try.
std::vector<std::string> ReplayedOpportunities(const model::Report& r, const MeanShares& m) {
  const model::Replay& p = r.replay;
  std::vector<std::string> out;
  for (const auto& w : p.opportunities) {
    const int64_t gain = p.measured_iter_median_ns - w.predicted_iter_median_ns;
    const double share = Share(gain, p.measured_iter_median_ns);
    if (share < 0.01 || out.size() == 3) continue;
    out.push_back(fmt::format("{} saves {} per iteration ({}), replayed with --what-if '{}': {}.", EditLabel(w.edit),
                              Ms(gain), Pct(share), w.edit, w.description));
  }
  std::vector<Opportunity> unbalanced;
  UnbalancedOpportunity(r, m, unbalanced);
  for (const auto& [share, text] : unbalanced) {
    if (share >= 0.01 && out.size() < 3) out.push_back(text + " (not replayed)");
  }
  return out;
}

// Opportunities, each with its share of the mean window: the largest three of 1% or more.
std::vector<std::string> Opportunities(const model::Report& r, const MeanShares& m) {
  if (r.replay.built && r.replay.self_check_ok) return ReplayedOpportunities(r, m);
  std::vector<Opportunity> ops;
  StragglerOpportunity(r, m, ops);
  TransferOpportunities(r, ops);
  IdleOpportunity(r, m, ops);
  UnbalancedOpportunity(r, m, ops);
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (const auto& [share, text] : ops) {
    if (share < 0.01 || out.size() == 3) continue;
    out.push_back(text);
  }
  return out;
}

// Timings not to trust: launch-bound ranks (and whether the capture's options slowed the
// launches), no iterations found.
std::vector<std::string> Warnings(const model::Report& r) {
  std::vector<std::string> warnings;
  std::vector<int> bound;
  for (const auto& s : r.ranks) {
    if (s.launch_bound) bound.push_back(s.rank);
  }
  if (!bound.empty()) {
    const std::string& f = r.capture.reconstructed_flags;
    bool slow = r.capture.python_backtraces || !r.capture.cuda_backtrace_kinds.empty() ||
                f.find("osrt") != std::string::npos || r.capture.pytorch_autograd;
    warnings.push_back(fmt::format(
        "rank{} {} look{} launch-bound (short gaps between GPU ops take {} or more of the window){}",
        bound.size() > 1 ? "s" : "", fmt::join(bound, ", "), bound.size() > 1 ? "" : "s", Pct(kLaunchBoundShare),
        slow ? ": this capture's options (backtraces, autograd ranges or OS runtime tracing) slow every launch, so its "
               "timings overstate the host's share; profile again with the fast option set (cpprof profile --preset "
               "fast)"
             : ": the GPU finishes each kernel before the host launches the next"));
  }
  const auto& w = r.window;
  if (w.whole_capture && w.requested == "steady") {
    warnings.push_back("no iterations found: the numbers include start-up and warm-up (" + w.description + ")");
  }
  return warnings;
}

}  // namespace

model::Verdict MakeVerdict(const model::Report& r) {
  model::Verdict v;
  if (r.ranks.empty()) return v;
  const MeanShares m = SharesOf(r);
  v.summary = Summary(r, m);
  v.straggler_rank = NamedStraggler(r);
  v.opportunities = Opportunities(r, m);
  v.warnings = Warnings(r);
  return v;
}

}  // namespace cpprof::analysis
