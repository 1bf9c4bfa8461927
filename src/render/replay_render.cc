// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/replay_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "render/markdown_table.h"
#include "render/table.h"

namespace cpprof::render {

namespace {

using Json = nlohmann::ordered_json;

std::string Pct(int64_t part, int64_t whole) {
  return whole ? fmt::format("{:.1f}", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "-";
}

void PrintTable(const std::vector<std::string>& header, const std::vector<bool>& right,
                const std::vector<std::vector<std::string>>& rows, bool markdown, std::ostream& out) {
  PrintSectionTable(header, right, rows, markdown, 60, out);
  if (!markdown) out << '\n';
}

void Prose(const std::string& text, bool markdown, std::ostream& out) {
  if (markdown) {
    out << text << "\n\n";
    return;
  }
  out << WrapLines("  " + text, TextWidthScope::Current()) << '\n';
}

// The steady iteration whose measured time is the median (the lower one of an even count).
const model::IterationReplay* MedianIteration(const model::Replay& p) {
  std::vector<const model::IterationReplay*> its;
  for (const auto& it : p.iterations) its.push_back(&it);
  if (its.empty()) return nullptr;
  std::stable_sort(its.begin(), its.end(), [](auto* a, auto* b) { return a->measured_ns < b->measured_ns; });
  return its[(its.size() - 1) / 2];
}

std::string SelfCheckLine(const model::Replay& p) {
  return fmt::format(
      "Self-check: replayed with no edit, the graph gives back the {} steady iterations {} (worst {:.2f} %, limit "
      "{:.0f} %): median {} ms measured, {} ms replayed.{}",
      p.iterations.size(), p.self_check_ok ? "within the limit" : "NOT within the limit",
      100.0 * p.self_check_max_error, 100.0 * model::kReplaySelfCheckLimit, Ms(p.measured_iter_median_ns),
      Ms(p.replay_iter_median_ns),
      p.self_check_ok ? ""
                      : " A model that cannot replay the past does not predict: "
                        "no what-if is given.");
}

std::string GraphLine(const model::DepGraphCounts& g) {
  return fmt::format(
      "Graph: {} GPU ops ({} after their rank's previous ops ended, {} launched while another ran); {} NCCL "
      "instances tie {} ops across ranks, {} NCCL ops no peer matched are replayed alone; {} ops tied to their "
      "launch calls ({} launch-bound: the GPU waited for the call), {} without one (their measured GPU gap stands "
      "in); {} synchronisations tie their host thread to the op they waited for, {} waited for none{}.",
      g.ops, g.after_end, g.after_start, g.nccl_instances, g.nccl_tied_ops, g.nccl_untied_ops, g.launches_tied,
      g.launch_bound, g.launches_untied, g.syncs_tied, g.syncs_untied,
      g.cycles ? fmt::format("; {} ties timed as measured", g.cycles) : "");
}

std::vector<std::string> WhatIfRow(const model::WhatIf& w, int64_t measured) {
  const int64_t gain = measured - w.predicted_iter_median_ns;
  return {w.edit, Ms(w.predicted_iter_median_ns), Ms(gain), Pct(gain, measured), w.description};
}

void PrintCriticalPath(const model::Replay& p, bool markdown, std::ostream& out) {
  const model::IterationReplay* it = MedianIteration(p);
  if (!it) return;
  Prose(fmt::format("Critical path of the median steady iteration ({}, {} ms replayed): the chain of waits from "
                    "its start to its end, by rank, kind and module (largest first; the rows add up to it).",
                    it->name, Ms(it->replay_ns)),
        markdown, out);
  std::vector<std::vector<std::string>> rows;
  const size_t kMaxRows = 12;
  int64_t rest = 0, rest_segments = 0;
  for (size_t i = 0; i < it->critical_path.size(); ++i) {
    const auto& s = it->critical_path[i];
    if (i >= kMaxRows) {
      rest += s.ns, rest_segments += s.segments;
      continue;
    }
    rows.push_back({std::to_string(s.rank), s.kind, s.module.empty() ? "-" : s.module, Ms(s.ns),
                    Pct(s.ns, it->replay_ns), std::to_string(s.segments)});
  }
  if (rest) rows.push_back({"", "[other]", "", Ms(rest), Pct(rest, it->replay_ns), std::to_string(rest_segments)});
  PrintTable({"rank", "kind", "module", "ms", "%", "segments"}, {true, false, false, true, true, true}, rows, markdown,
             out);
}

}  // namespace

void PrintReplay(const model::Report& r, bool markdown, std::ostream& out) {
  const model::Replay& p = r.replay;
  if (!p.built && p.why_not == model::kReplayNotAsked) return;
  out << (markdown ? "### What each fix buys (the steady window replayed)\n\n"
                   : "What each fix buys (the steady window replayed)\n");
  if (!p.built) {
    Prose("No replay: " + p.why_not + ".", markdown, out);
    return;
  }
  Prose(SelfCheckLine(p), markdown, out);
  Prose(GraphLine(p.graph), markdown, out);
  if (p.self_check_ok) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& w : p.what_ifs) rows.push_back(WhatIfRow(w, p.measured_iter_median_ns));
    for (const auto& w : p.opportunities) rows.push_back(WhatIfRow(w, p.measured_iter_median_ns));
    Prose(fmt::format("Predicted median steady iteration under each edit ({} asked with --what-if first, then the "
                      "verdict's candidates by predicted gain); measured {} ms.",
                      p.what_ifs.size(), Ms(p.measured_iter_median_ns)),
          markdown, out);
    PrintTable({"edit", "predicted ms", "gain ms", "gain %", "what changed"}, {false, true, true, true, false}, rows,
               markdown, out);
  }
  PrintCriticalPath(p, markdown, out);
}

namespace {

Json WhatIfJson(const model::WhatIf& w, int64_t measured) {
  Json j;
  j["edit"] = w.edit;
  j["description"] = w.description;
  j["edited"] = w.edited;
  j["measured_iter_median_ns"] = measured;
  j["predicted_iter_median_ns"] = w.predicted_iter_median_ns;
  j["gain_ns"] = measured - w.predicted_iter_median_ns;
  j["predicted_iter_ns"] = w.predicted_iter_ns;
  return j;
}

}  // namespace

nlohmann::ordered_json ReplayJson(const model::Report& r) {
  const model::Replay& p = r.replay;
  Json j;
  j["built"] = p.built;
  if (!p.built) {
    j["why_not"] = p.why_not;
    return j;
  }
  const auto& g = p.graph;
  j["graph"] = {{"ops", g.ops},
                {"after_end", g.after_end},
                {"after_start", g.after_start},
                {"nccl_instances", g.nccl_instances},
                {"nccl_tied_ops", g.nccl_tied_ops},
                {"nccl_untied_ops", g.nccl_untied_ops},
                {"launches_tied", g.launches_tied},
                {"launches_untied", g.launches_untied},
                {"launch_bound", g.launch_bound},
                {"syncs_tied", g.syncs_tied},
                {"syncs_untied", g.syncs_untied},
                {"cycles", g.cycles}};
  j["measured_iter_median_ns"] = p.measured_iter_median_ns;
  j["replay_iter_median_ns"] = p.replay_iter_median_ns;
  j["self_check"] = {{"max_error", std::round(p.self_check_max_error * 1e6) / 1e6},
                     {"limit", model::kReplaySelfCheckLimit},
                     {"ok", p.self_check_ok}};
  Json its = Json::array();
  for (const auto& it : p.iterations) {
    Json path = Json::array();
    for (const auto& s : it.critical_path) {
      path.push_back(
          {{"rank", s.rank}, {"kind", s.kind}, {"module", s.module}, {"ns", s.ns}, {"segments", s.segments}});
    }
    its.push_back(
        {{"name", it.name}, {"measured_ns", it.measured_ns}, {"replay_ns", it.replay_ns}, {"critical_path", path}});
  }
  j["iterations"] = its;
  Json asked = Json::array(), tried = Json::array();
  if (p.self_check_ok) {
    for (const auto& w : p.what_ifs) asked.push_back(WhatIfJson(w, p.measured_iter_median_ns));
    for (const auto& w : p.opportunities) tried.push_back(WhatIfJson(w, p.measured_iter_median_ns));
  }
  j["what_if"] = asked;
  j["opportunities"] = tried;
  return j;
}

}  // namespace cpprof::render
