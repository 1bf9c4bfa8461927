// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "profile/probe.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace cpprof::profile {

namespace {

using Json = nlohmann::ordered_json;

// The JSON object that follows `tag` in `line`, or nothing.
std::optional<Json> TaggedJson(const std::string& line, const std::string& tag) {
  size_t at = line.find(tag);
  if (at == std::string::npos) return std::nullopt;
  size_t brace = at + tag.size();
  while (brace < line.size() && line[brace] == ' ') ++brace;
  if (brace >= line.size() || line[brace] != '{') return std::nullopt;
  size_t end = line.size();
  while (end > brace && (line[end - 1] == '\r' || line[end - 1] == ' ')) --end;
  Json j = Json::parse(line.substr(brace, end - brace), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Json();  // null: a tagged line that did not parse
  return j;
}

// Ranks writing to one pipe at once can join their lines ("cpprof-iter: {...}cpprof-iter: {...}",
// seen with unbuffered Python, whose print writes the text and its newline apart): each iteration
// tag after the first starts a line of its own.
std::vector<std::string> SplitAtTags(const std::string& line) {
  std::vector<size_t> at;
  for (const char* t : kIterTags) {
    const std::string tag = std::string(t) + ":";
    for (size_t p = line.find(tag); p != std::string::npos; p = line.find(tag, p + 1)) at.push_back(p);
  }
  if (at.size() < 2) return {line};
  std::sort(at.begin(), at.end());
  std::vector<std::string> parts = {line.substr(0, at[1])};
  for (size_t i = 1; i < at.size(); ++i) {
    parts.push_back(line.substr(at[i], i + 1 < at.size() ? at[i + 1] - at[i] : std::string::npos));
  }
  return parts;
}

std::string Seconds(double s) { return s >= 100 ? fmt::format("{:.0f} s", s) : fmt::format("{:.1f} s", s); }

}  // namespace

std::string Bytes(int64_t b) {
  double gib = static_cast<double>(b) / (1024.0 * 1024 * 1024);
  if (gib >= 1) return fmt::format("{:.1f} GiB", gib);
  return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1024.0 * 1024));
}

ProbeOutput ParseProbeOutput(const std::string& text) {
  ProbeOutput out;
  std::istringstream s(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(s, line);) {
    for (auto& part : SplitAtTags(line)) lines.push_back(std::move(part));
  }
  for (const std::string& line : lines) {
    std::optional<Json> j;
    std::string tag;
    for (const char* t : kIterTags) {
      if ((j = TaggedJson(line, std::string(t) + ":"))) {
        tag = t;
        break;
      }
    }
    if (j) {
      const Json& o = *j;
      if (!o.is_object() || !o.contains("rank") || !o["rank"].is_number_integer() || !o.contains("wall_s") ||
          !o["wall_s"].is_number()) {
        out.bad_lines.push_back(line);
        continue;
      }
      if (out.tag.empty()) out.tag = tag;
      ProbeIter it;
      it.rank = o["rank"].get<int>();
      it.iter = o.contains("iter") && o["iter"].is_number_integer() ? o["iter"].get<int>() : 0;
      it.warmup = o.contains("warmup") && o["warmup"].is_boolean() && o["warmup"].get<bool>();
      it.wall_s = o["wall_s"].get<double>();
      if (o.contains("peak_mem_bytes") && o["peak_mem_bytes"].is_number()) {
        it.peak_mem_bytes = static_cast<int64_t>(o["peak_mem_bytes"].get<double>());
      }
      if (o.contains("peak_mem_kind") && o["peak_mem_kind"].is_string()) {
        out.peak_mem_kind = o["peak_mem_kind"].get<std::string>();
      }
      if (o.contains("planned") && o["planned"].is_number_integer()) {
        out.planned = std::max(out.planned, o["planned"].get<int>());
      }
      out.iters.push_back(it);
    } else if (auto k = TaggedJson(line, "cpfold:")) {
      out.summaries.push_back(line);
      if (k->is_object() && k->contains("peak_mem_kind") && (*k)["peak_mem_kind"].is_string()) {
        out.peak_mem_kind = (*k)["peak_mem_kind"].get<std::string>();
      }
    }
  }
  return out;
}

std::map<int, int64_t> PeakByRank(const ProbeOutput& out) {
  std::map<int, int64_t> peak;
  for (const auto& it : out.iters) {
    if (it.peak_mem_bytes < 0) continue;
    auto [p, inserted] = peak.emplace(it.rank, it.peak_mem_bytes);
    if (!inserted) p->second = std::max(p->second, it.peak_mem_bytes);
  }
  return peak;
}

std::optional<double> IterSeconds(const ProbeOutput& out) {
  std::map<int, std::pair<double, int>> timed, warm;  // rank -> (sum, count)
  for (const auto& it : out.iters) {
    auto& m = it.warmup ? warm : timed;
    m[it.rank].first += it.wall_s;
    m[it.rank].second += 1;
  }
  std::optional<double> slowest;
  for (const auto* m : {&timed, &warm}) {
    for (const auto& [rank, sc] : *m) {
      if (m == &warm && timed.count(rank)) continue;
      double mean = sc.first / sc.second;
      slowest = std::max(slowest.value_or(0.0), mean);
    }
  }
  return slowest;
}

double IterTotalSeconds(const ProbeOutput& out) {
  std::map<int, double> sum;
  for (const auto& it : out.iters) sum[it.rank] += it.wall_s;
  double m = 0;
  for (const auto& [r, s] : sum) m = std::max(m, s);
  return m;
}

int PlannedIters(const ProbeOutput& out) {
  if (out.planned > 0) return out.planned;
  std::map<int, int> count;
  int most = 0;
  for (const auto& it : out.iters) most = std::max(most, ++count[it.rank]);
  return most;
}

namespace {

// Memory: each rank's peak against its GPU, with headroom for nsys.
void PredictMemory(const Measurement& m, const ProbeLimits& l, Prediction& p) {
  for (const auto& [rank, peak] : m.peak_by_rank) {
    int local = l.ranks_per_node > 0 ? rank % l.ranks_per_node : rank;
    auto total = l.gpu_total_bytes.find(local);
    if (total == l.gpu_total_bytes.end() || total->second <= 0) {
      p.lines.push_back(fmt::format("rank {}: peak memory {} (the GPU's total is unknown)", rank, Bytes(peak)));
      continue;
    }
    p.memory_known = true;
    auto limit = static_cast<int64_t>(static_cast<double>(total->second) * (1 - l.headroom));
    bool fits = peak <= limit;
    p.lines.push_back(fmt::format("rank {}: peak memory {} of {} ({:.0f}%; at most {} with {:.0f}% kept free for nsys)",
                                  rank, Bytes(peak), Bytes(total->second),
                                  100.0 * static_cast<double>(peak) / static_cast<double>(total->second), Bytes(limit),
                                  100 * l.headroom));
    if (!fits) {
      p.memory_ok = false;
      p.problems.push_back(fmt::format(
          "rank {} would run out of GPU memory: the probe peaked at {}, more than the {} its GPU leaves with {:.0f}% "
          "kept free for nsys (of {}). Fix: a smaller problem (cpfold: a smaller N_TOKEN or --n-token), more ranks, "
          "or --no-probe to run anyway.",
          rank, Bytes(peak), Bytes(limit), 100 * l.headroom, Bytes(total->second)));
    }
  }
  if (m.peak_by_rank.empty()) {
    p.lines.push_back(
        "peak memory: not measured (the workload printed no iteration lines with peak_mem_bytes and "
        "nvidia-smi gave nothing)");
  } else if (!m.peak_source.empty()) {
    p.lines.push_back("peak memory from " + m.peak_source);
  }
}

// A capped probe (--probe-cap): memory as seen so far; its time says nothing of the run.
void DescribeCappedProbe(const Measurement& m, const ProbeLimits& l, Prediction& p) {
  std::string seen;
  if (m.peak_by_rank.empty()) {
    seen = "no peak GPU memory seen (nvidia-smi gave nothing)";
  } else {
    std::string src = m.peak_source.rfind("nvidia-smi", 0) == 0 ? "nvidia-smi" : m.peak_source;
    int64_t first = m.peak_by_rank.begin()->second;
    bool same =
        std::all_of(m.peak_by_rank.begin(), m.peak_by_rank.end(), [&](const auto& rb) { return rb.second == first; });
    if (same) {
      seen = fmt::format("peak GPU memory seen so far {} per GPU ({})", Bytes(first), src);
    } else {
      std::vector<std::string> each;
      for (const auto& [rank, b] : m.peak_by_rank) each.push_back(fmt::format("rank {} {}", rank, Bytes(b)));
      seen = fmt::format("peak GPU memory seen so far per GPU: {} ({})", fmt::join(each, ", "), src);
    }
  }
  p.lines.push_back(fmt::format(
      "probe stopped after {:g} s (--probe-cap): {}; not learned: time per iteration, iteration count, whether "
      "the whole run fits the --timeout ({})",
      m.cap_s, seen, Seconds(l.timeout_s)));
  p.lines.push_back(
      "to learn them: print cpprof-iter lines (mark the iterations with cpprof_workload.iteration, or write a "
      "profile module with 'cpprof scaffold'; docs/workload-kit.md), a larger --probe-cap when the first "
      "iteration takes longer, or --probe-cap 0 to probe the whole run (bounded by --timeout)");
}

// Time: startup + iterations x time per iteration x the preset's overhead factor (else the
// whole probe x the factor). Returns how the prediction was made; "" when nothing was measured.
std::string PredictTime(const Measurement& m, const ProbeLimits& l, Prediction& p) {
  std::string how;
  if (m.iter_s && l.planned_iters > 0) {
    p.time_known = true;
    p.startup_s = std::max(0.0, m.wall_s - m.iter_total_s);
    double iters = l.planned_iters * *m.iter_s * l.overhead;
    p.predicted_s = p.startup_s + iters;
    p.predicted_max_s = p.startup_s + iters * std::max(1.0, l.iter_scale);
    how = fmt::format("startup {} + {} iteration{} x {} x {:.1f} (the preset's overhead factor under nsys, a guess)",
                      Seconds(p.startup_s), l.planned_iters, l.planned_iters == 1 ? "" : "s", Seconds(*m.iter_s),
                      l.overhead);
    p.lines.push_back(fmt::format("probe: {} in all, {} per iteration, {} outside iterations", Seconds(m.wall_s),
                                  Seconds(*m.iter_s), Seconds(p.startup_s)));
  } else if (m.wall_s > 0) {
    p.time_known = true;
    p.predicted_s = p.predicted_max_s = m.wall_s * l.overhead;
    how = fmt::format("the probe's {} x {:.1f} (the preset's overhead factor under nsys, a guess)", Seconds(m.wall_s),
                      l.overhead);
    p.lines.push_back(fmt::format("probe: {} in all", Seconds(m.wall_s)));
  }
  return how;
}

// The time prediction against --timeout: a problem when even the lower bound passes it, a
// warning when only the upper bound does.
void JudgeTime(const ProbeLimits& l, const std::string& how, Prediction& p) {
  if (p.time_known) {
    if (p.predicted_max_s > p.predicted_s) {
      p.lines.push_back(
          fmt::format("predicted profiled run: {} to {} ({}; up to {:.1f}x per iteration for the "
                      "steps the probe skipped) against --timeout {}",
                      Seconds(p.predicted_s), Seconds(p.predicted_max_s), how, l.iter_scale, Seconds(l.timeout_s)));
    } else {
      p.lines.push_back(fmt::format("predicted profiled run: {} ({}) against --timeout {}", Seconds(p.predicted_s), how,
                                    Seconds(l.timeout_s)));
    }
    if (p.predicted_s > l.timeout_s) {
      p.time_ok = false;
      p.problems.push_back(fmt::format(
          "the profiled run would pass --timeout {}: predicted {} ({}). Fix: a larger --timeout (say {:.0f}), fewer "
          "iterations (cpfold: --iters), a smaller problem, more ranks, or --no-probe to run anyway.",
          Seconds(l.timeout_s), Seconds(p.predicted_s), how, std::ceil(p.predicted_max_s * 1.5 / 60) * 60));
    } else if (p.predicted_max_s > l.timeout_s) {
      p.warnings.push_back(
          fmt::format("the profiled run may pass --timeout {}: predicted {} to {}; consider "
                      "--timeout {:.0f}",
                      Seconds(l.timeout_s), Seconds(p.predicted_s), Seconds(p.predicted_max_s),
                      std::ceil(p.predicted_max_s * 1.5 / 60) * 60));
    }
  } else {
    p.lines.push_back("time: not measured");
  }
}

}  // namespace

Prediction Predict(const Measurement& m, const ProbeLimits& l) {
  Prediction p;
  PredictMemory(m, l, p);
  if (m.capped) {
    DescribeCappedProbe(m, l, p);
    return p;
  }
  std::string how = PredictTime(m, l, p);
  JudgeTime(l, how, p);
  if (m.no_iteration_lines) {
    p.lines.push_back(
        "not learned: the time of one iteration, how many the run does, and the peak memory the framework "
        "allocated (the workload printed no cpprof-iter lines: mark its iterations with "
        "cpprof_workload.iteration, or write a profile module with 'cpprof scaffold'; docs/workload-kit.md)");
  }
  return p;
}

nlohmann::ordered_json ProbeJson(const std::vector<std::string>& argv, const Measurement& m, const ProbeLimits& l,
                                 const Prediction& p, const ProbeOutput& out) {
  Json j;
  j["schema"] = "cpprof.probe/1";
  j["argv"] = argv;
  j["wall_s"] = m.wall_s;
  j["capped"] = m.capped;                // stopped at --probe-cap: the time was not predicted
  j["probe_cap_s"] = m.cap_s;            // 0: no cap (cpfold, --probe-cap 0)
  j["probe_cap_lifted"] = m.cap_lifted;  // an iteration line came before the cap
  j["iter_s"] = m.iter_s ? Json(*m.iter_s) : Json(nullptr);
  j["iter_total_s"] = m.iter_total_s;
  Json peaks = Json::array();
  for (const auto& [rank, b] : m.peak_by_rank) {
    int local = l.ranks_per_node > 0 ? rank % l.ranks_per_node : rank;
    auto t = l.gpu_total_bytes.find(local);
    peaks.push_back({{"rank", rank},
                     {"peak_mem_bytes", b},
                     {"gpu_total_bytes", t == l.gpu_total_bytes.end() ? Json(nullptr) : Json(t->second)}});
  }
  j["peak_mem"] = peaks;
  j["peak_mem_source"] = m.peak_source;
  j["peak_mem_kind"] = out.peak_mem_kind;
  j["limits"] = {{"headroom", l.headroom},           {"timeout_s", l.timeout_s},
                 {"overhead_factor", l.overhead},    {"overhead_factor_is_a_guess", true},
                 {"planned_iters", l.planned_iters}, {"iter_scale", l.iter_scale}};
  j["prediction"] = {{"memory_ok", p.memory_ok},
                     {"time_ok", p.time_ok},
                     {"memory_known", p.memory_known},
                     {"time_known", p.time_known},
                     {"startup_s", p.startup_s},
                     {"predicted_s", p.predicted_s},
                     {"predicted_max_s", p.predicted_max_s},
                     {"problems", p.problems},
                     {"warnings", p.warnings}};
  Json iters = Json::array();
  for (const auto& it : out.iters) {
    iters.push_back({{"rank", it.rank},
                     {"iter", it.iter},
                     {"warmup", it.warmup},
                     {"wall_s", it.wall_s},
                     {"peak_mem_bytes", it.peak_mem_bytes}});
  }
  j["iters"] = iters;
  j["iteration_tag"] = out.tag;
  j["planned_by_workload"] = out.planned;
  j["summaries"] = out.summaries;
  return j;
}

}  // namespace cpprof::profile
