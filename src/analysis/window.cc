// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/window.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>

namespace cpprof::analysis {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "A" of an "A:B" window in nanoseconds: seconds, or ms / us when the number says so.
bool ParseTime(std::string s, int64_t& ns) {
  double scale = 1e9;
  auto ends = [&](std::string_view suffix) {
    return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends("ms")) {
    scale = 1e6, s.resize(s.size() - 2);
  } else if (ends("us")) {
    scale = 1e3, s.resize(s.size() - 2);
  } else if (ends("s")) {
    s.resize(s.size() - 1);
  }
  if (s.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !(v >= 0) || v * scale > 9.2e18) return false;
  ns = std::llround(v * scale);
  return true;
}

std::string Ms(int64_t ns) { return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6); }

}  // namespace

MarkerKind IterationMarkerKind(std::string_view range) {
  size_t colon = range.rfind(':');
  std::string last = Lower(colon == std::string_view::npos ? range : range.substr(colon + 1));
  // The number at the end, and the word before it (one separator allowed).
  size_t d = last.size();
  while (d > 0 && last[d - 1] >= '0' && last[d - 1] <= '9') --d;
  if (d == last.size() || d == 0) return MarkerKind::kNone;
  std::string word = last.substr(0, d);
  if (word.back() == ' ' || word.back() == '_' || word.back() == '#' || word.back() == '-') word.pop_back();
  if (word == "warmup" || word == "warm-up" || word == "warm_up") return MarkerKind::kWarmup;
  if (word == "iter" || word == "iteration" || word == "step" || word == "profilerstep") return MarkerKind::kIteration;
  return MarkerKind::kNone;
}

void AddIterationStats(model::Window& w) {
  const std::string_view kStats = "; per iteration ";
  if (size_t at = w.description.find(kStats); at != std::string::npos) w.description.resize(at);
  w.iter_median_ns = w.iter_min_ns = w.iter_max_ns = 0;
  std::vector<int64_t> lengths;
  for (const auto& t : w.iterations) {
    if (t.in_window) lengths.push_back(t.end_ns - t.start_ns);
  }
  if (!lengths.empty()) {
    std::sort(lengths.begin(), lengths.end());
    size_t m = lengths.size();
    w.iter_median_ns = m % 2 ? lengths[m / 2] : (lengths[m / 2 - 1] + lengths[m / 2]) / 2;
    w.iter_min_ns = lengths.front();
    w.iter_max_ns = lengths.back();
    w.description +=
        fmt::format("; per iteration {} median ({} to {})", Ms(w.iter_median_ns), Ms(w.iter_min_ns), Ms(w.iter_max_ns));
  }
}

size_t SelectSteady(model::Window& w) {
  size_t steady = 0;
  for (const auto& t : w.iterations) steady += t.warmup ? 0 : 1;
  for (auto& t : w.iterations) {
    if (steady && t.warmup) continue;
    t.in_window = true;
    w.start_ns = w.whole_capture ? t.start_ns : std::min(w.start_ns, t.start_ns);
    w.end_ns = w.whole_capture ? t.end_ns : std::max(w.end_ns, t.end_ns);
    w.whole_capture = false;
  }
  return steady;
}

model::Window SteadyOf(const model::Window& w) {
  model::Window steady = w;
  if (steady.iterations.empty()) return steady;
  steady.whole_capture = true;
  for (auto& t : steady.iterations) t.in_window = false;
  SelectSteady(steady);
  steady.kind = "steady";
  steady.requested = "steady";
  return steady;
}

namespace {

// The iterations of `marks`, by start: the outermost marks of each process, one iteration per
// name over the processes (earliest start to latest end); returns how warm-up was told apart
// ("" when marks name it), the first iteration taken as warm-up when none is named so.
std::string IterationsOf(std::vector<IterationMark> marks, std::vector<model::IterationTime>& out) {
  std::sort(marks.begin(), marks.end(), [](const IterationMark& a, const IterationMark& b) {
    if (a.global_pid != b.global_pid) return a.global_pid < b.global_pid;
    if (a.start != b.start) return a.start < b.start;
    return a.end > b.end;
  });
  std::vector<IterationMark> outer;
  for (auto& m : marks) {
    if (!outer.empty() && outer.back().global_pid == m.global_pid && m.end <= outer.back().end) continue;
    outer.push_back(std::move(m));
  }
  std::map<std::string, model::IterationTime> by_name;
  for (const auto& m : outer) {
    auto [it, fresh] = by_name.try_emplace(m.name);
    auto& t = it->second;
    if (fresh) {
      t.name = m.name, t.start_ns = m.start, t.end_ns = m.end, t.warmup = m.warmup;
    } else {
      t.start_ns = std::min(t.start_ns, m.start);
      t.end_ns = std::max(t.end_ns, m.end);
    }
  }
  for (auto& [name, t] : by_name) out.push_back(t);
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.name < y.name;
  });
  const bool named = std::any_of(out.begin(), out.end(), [](const auto& t) { return t.warmup; });
  if (named) return "those named warm-up left out";
  if (out.size() < 2) return "";
  out.front().warmup = true;
  return "the first left out as warm-up: none is named so";
}

// --window steady (or none given) over the iterations found.
void ChooseSteady(model::Window& w, const std::string& method, const std::string& warmup_rule) {
  w.requested = "steady";
  const size_t n = w.iterations.size();
  if (n == 0) {
    w.kind = "all";
    w.description =
        "window: the whole capture, start-up and warm-up included: no iteration ranges were found "
        "(name them 'iterN'/'warmupN', use torch.profiler's ProfilerStep#N, or pass --iteration-range REGEX)";
    return;
  }
  w.kind = "steady";
  const size_t used = SelectSteady(w);
  if (used == 0) {  // every iteration is a warm-up one: better all of them than nothing
    w.description = fmt::format("window: all {} iterations, although every one is named warm-up ({})", n, method);
    return;
  }
  w.description = fmt::format(
      "window: steady state, {} of {} iterations ({}; {}{}); start-up before and "
      "tear-down after left out",
      used, n, method, n == 1 ? "a single iteration: it may include warm-up" : "", n == 1 ? "" : warmup_rule);
}

// --window iter:N: the N-th iteration by start, warm-up ones included.
Status ChooseIteration(model::Window& w, const std::string& method, const std::string& spec) {
  const size_t n = w.iterations.size();
  std::string k = spec.substr(5);
  if (!AllDigits(k) || k.size() > 6) {
    return Status(ExitCode::kUsage, fmt::format("--window {}: expected iter:N with N a number (0 = the first "
                                                "iteration, warm-up included)",
                                                spec));
  }
  size_t i = static_cast<size_t>(std::stoul(k));
  if (i >= n) {
    return Status(
        ExitCode::kUsage,
        n ? fmt::format("--window {}: the export has {} iterations (iter:0 to iter:{}; {})", spec, n, n - 1, method)
          : fmt::format("--window {}: no iteration ranges were found; pass --iteration-range REGEX or "
                        "a time window A:B (seconds)",
                        spec));
  }
  w.kind = "iteration";
  auto& t = w.iterations[i];
  t.in_window = true;
  w.start_ns = t.start_ns, w.end_ns = t.end_ns, w.whole_capture = false;
  w.description = fmt::format("window: iteration {} only ('{}'{})", i, t.name, t.warmup ? ", a warm-up iteration" : "");
  return OkStatus();
}

// --window A:B: a time range on the session clock.
Status ChooseTime(model::Window& w, const std::string& spec) {
  size_t colon = spec.find(':');
  int64_t a = 0, b = 0;
  if (colon == std::string::npos || !ParseTime(spec.substr(0, colon), a) || !ParseTime(spec.substr(colon + 1), b) ||
      b <= a) {
    return Status(ExitCode::kUsage,
                  fmt::format("--window '{}': expected steady, all, iter:N or A:B (session-clock seconds as the "
                              "readout prints them, A < B; e.g. 24.1:25.3 or 24100ms:25300ms)",
                              spec));
  }
  w.kind = "time";
  w.whole_capture = false;
  w.start_ns = a, w.end_ns = b;
  for (auto& t : w.iterations) t.in_window = t.start_ns >= a && t.end_ns <= b;
  w.description = fmt::format("window: session time {:.6f} s to {:.6f} s (--window)", a / 1e9, b / 1e9);
  return OkStatus();
}

}  // namespace

StatusOr<model::Window> ChooseWindow(std::vector<IterationMark> marks, const std::string& method,
                                     const std::string& spec) {
  model::Window w;
  w.requested = spec;
  const std::string warmup_rule = IterationsOf(std::move(marks), w.iterations);
  if (!w.iterations.empty()) w.method = method;
  const size_t n = w.iterations.size();
  if (spec == "all") {
    w.kind = "all";
    w.description = n ? fmt::format(
                            "window: the whole capture (--window all): start-up, warm-up and tear-down "
                            "included; {} iterations found ({})",
                            n, method)
                      : "window: the whole capture (--window all)";
  } else if (spec == "steady" || spec.empty()) {
    ChooseSteady(w, method, warmup_rule);
  } else if (spec.rfind("iter:", 0) == 0) {
    CPPROF_RETURN_IF_ERROR(ChooseIteration(w, method, spec));
  } else {
    CPPROF_RETURN_IF_ERROR(ChooseTime(w, spec));
  }
  AddIterationStats(w);
  return w;
}

}  // namespace cpprof::analysis
