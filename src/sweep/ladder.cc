// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "sweep/ladder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

namespace cpprof::sweep {

namespace {

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t c = s.find(',', start);
    std::string item = s.substr(start, c == std::string::npos ? std::string::npos : c - start);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.pop_back();
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.erase(0, 1);
    out.push_back(item);
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return out;
}

bool PositiveInt(const std::string& s, int& v) {
  if (s.empty() || s.size() > 7 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  v = std::stoi(s);
  return v > 0;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const model::SweepPoint* Find(const std::vector<model::SweepPoint>& points, const std::string& grid, int n) {
  for (const auto& p : points) {
    if (p.grid == grid && p.n == n) return &p;
  }
  return nullptr;
}

// The largest N that ran below the first out-of-memory (0: none), and that first OOM (0: none).
std::pair<int, int> Bounds(const std::vector<model::SweepPoint>& points, const std::string& grid) {
  int hi = 0;
  for (const auto& p : points) {
    if (p.grid == grid && p.status == "oom" && (hi == 0 || p.n < hi)) hi = p.n;
  }
  int lo = 0;
  for (const auto& p : points) {
    if (p.grid == grid && p.status == "ok" && (hi == 0 || p.n < hi)) lo = std::max(lo, p.n);
  }
  return {lo, hi};
}

// A ladder size at which the grid's ladder stopped (out of memory or time); 0: it did not.
int LadderStop(const model::SweepSpec& spec, const std::vector<model::SweepPoint>& points, const std::string& grid) {
  for (int n : spec.sizes) {
    const model::SweepPoint* p = Find(points, grid, n);
    if (p && (p->status == "oom" || p->status == "timeout")) return n;
  }
  return 0;
}

}  // namespace

StatusOr<std::vector<int>> ParseSizes(const std::string& list) {
  std::set<int> sizes;
  for (const auto& item : SplitComma(list)) {
    int v = 0;
    if (!PositiveInt(item, v)) {
      return Error(ExitCode::kUsage,
                   fmt::format("--n: '{}' is not a positive size. Give token counts separated by commas, e.g. --n "
                               "512,1024,2048",
                               item));
    }
    sizes.insert(v);
  }
  return std::vector<int>(sizes.begin(), sizes.end());
}

bool ParseGrid(const std::string& grid, int& cp0, int& cp1) {
  size_t x = grid.find('x');
  if (x == std::string::npos) return false;
  return PositiveInt(grid.substr(0, x), cp0) && PositiveInt(grid.substr(x + 1), cp1);
}

StatusOr<std::vector<std::string>> ParseGrids(const std::string& list) {
  std::vector<std::string> grids;
  for (const auto& item : SplitComma(list)) {
    int a = 0, b = 0;
    if (!ParseGrid(item, a, b)) {
      return Error(ExitCode::kUsage,
                   fmt::format("--grids: '{}' is not a CP grid. Give ROWSxCOLS separated by commas, e.g. --grids "
                               "1x1,1x2,2x2",
                               item));
    }
    std::string g = fmt::format("{}x{}", a, b);
    if (std::find(grids.begin(), grids.end(), g) == grids.end()) grids.push_back(g);
  }
  return grids;
}

namespace {

StatusOr<std::vector<std::string>> SplitTemplate(const std::string& tmpl) {
  std::vector<std::string> args;
  std::string cur;
  bool in_arg = false;
  char quote = 0;
  for (char c : tmpl) {
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else {
        cur += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_arg = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_arg) args.push_back(cur);
      cur.clear();
      in_arg = false;
    } else {
      cur += c;
      in_arg = true;
    }
  }
  if (quote) {
    return Error(ExitCode::kUsage, fmt::format("--arg-template: an unclosed {} quote in '{}'", quote, tmpl));
  }
  if (in_arg) args.push_back(cur);
  return args;
}

}  // namespace

StatusOr<std::vector<std::string>> ExpandTemplate(const std::string& tmpl, const TemplateValues& v) {
  CPPROF_ASSIGN_OR_RETURN(std::vector<std::string> args, SplitTemplate(tmpl));
  const std::map<std::string, std::string> values = {{"{n}", std::to_string(v.n)},
                                                     {"{grid}", fmt::format("{}x{}", v.cp0, v.cp1)},
                                                     {"{cp0}", std::to_string(v.cp0)},
                                                     {"{cp1}", std::to_string(v.cp1)},
                                                     {"{ranks}", std::to_string(v.cp0 * v.cp1)},
                                                     {"{iters}", std::to_string(v.iters)},
                                                     {"{warmup}", std::to_string(v.warmup)},
                                                     {"{dtype}", v.dtype}};
  bool has_n = false;
  for (auto& a : args) {
    std::string out;
    for (size_t i = 0; i < a.size();) {
      if (a[i] == '{') {
        size_t close = a.find('}', i);
        std::string name = close == std::string::npos ? a.substr(i) : a.substr(i, close - i + 1);
        auto it = values.find(name);
        if (it == values.end()) {
          return Error(ExitCode::kUsage, fmt::format("--arg-template: unknown placeholder '{}'. Use {}", name,
                                                     fmt::join(kTemplatePlaceholders, ", ")));
        }
        if (name == "{dtype}" && v.dtype.empty()) {
          return Error(ExitCode::kUsage, "--arg-template uses {dtype}: give --dtype (bf16, fp16, fp32)");
        }
        has_n = has_n || name == "{n}";
        out += it->second;
        i = close + 1;
      } else {
        out += a[i++];
      }
    }
    a = out;
  }
  if (!has_n) {
    return Error(ExitCode::kUsage,
                 fmt::format("--arg-template '{}' has no {{n}}: every point would run the same size. Put {{n}} where "
                             "the workload takes its size, e.g. --arg-template '-m pkg.profile_model --n-token {{n}} "
                             "--cp0 {{cp0}} --cp1 {{cp1}}'",
                             tmpl));
  }
  if (args.empty() || (args[0] != "-m" && args[0].rfind('-', 0) == 0)) {
    return Error(ExitCode::kUsage,
                 fmt::format("--arg-template '{}' must start with '-m MODULE' or a script, as the workload after "
                             "'cpprof profile --' does",
                             tmpl));
  }
  return args;
}

Status CheckTemplate(const std::string& tmpl) {
  TemplateValues v;
  v.n = 1;
  v.dtype = "bf16";
  return ExpandTemplate(tmpl, v).status();
}

std::string SpecChange(const model::SweepSpec& a, const model::SweepSpec& b) {
  std::vector<std::string> d;
  auto ints = [](const std::vector<int>& v) { return fmt::format("{}", fmt::join(v, ",")); };
  auto strs = [](const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, " ")); };
  auto cmp = [&d](const char* what, const std::string& x, const std::string& y) {
    if (x != y) d.push_back(fmt::format("{} was '{}', now '{}'", what, x, y));
  };
  cmp("the workload", a.workload, b.workload);
  cmp("the mode", a.mode, b.mode);
  cmp("--arg-template", a.arg_template, b.arg_template);
  cmp("the workload's arguments", strs(a.extra_args), strs(b.extra_args));
  cmp("--dtype", a.dtype, b.dtype);
  cmp("--n", ints(a.sizes), ints(b.sizes));
  cmp("--grids", fmt::format("{}", fmt::join(a.grids, ",")), fmt::format("{}", fmt::join(b.grids, ",")));
  cmp("--iters", std::to_string(a.iters), std::to_string(b.iters));
  cmp("--warmup", std::to_string(a.warmup), std::to_string(b.warmup));
  cmp("--capture-iters", std::to_string(a.capture_iters), std::to_string(b.capture_iters));
  cmp("--largest", a.largest ? "on" : "off", b.largest ? "on" : "off");
  if (a.largest || b.largest) {
    cmp("--step", std::to_string(a.step), std::to_string(b.step));
    cmp("--max-n", std::to_string(a.max_n), std::to_string(b.max_n));
  }
  return fmt::format("{}", fmt::join(d, "; "));
}

bool LooksLikeOutOfMemory(const std::string& out, const std::string& err) {
  for (const std::string* t : {&err, &out}) {
    std::string s = Lower(*t);
    for (const char* k : {"cuda out of memory", "outofmemoryerror", "cuda_error_out_of_memory",
                          "cudaerrormemoryallocation", "out of memory"}) {
      if (s.find(k) != std::string::npos) return true;
    }
  }
  return false;
}

SteadyTimes Steady(const std::vector<IterLine>& lines) {
  std::map<int, std::pair<bool, double>> by_iter;  // iteration -> (warm-up, slowest rank)
  for (const auto& l : lines) {
    auto& [warm, s] = by_iter[l.iter];
    warm = warm || l.warmup;
    s = std::max(s, l.wall_s);
  }
  SteadyTimes t;
  for (const auto& [it, ws] : by_iter) {
    if (ws.first) {
      ++t.warmup;
    } else {
      t.iter_s.push_back(ws.second);
    }
  }
  if (!t.iter_s.empty()) {
    std::vector<double> v = t.iter_s;
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    t.median_s = v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  }
  return t;
}

std::optional<NextPoint> Next(const model::SweepSpec& spec, const std::vector<model::SweepPoint>& points) {
  for (const auto& grid : spec.grids) {
    bool stopped = false;
    for (int n : spec.sizes) {
      const model::SweepPoint* p = Find(points, grid, n);
      if (!p) return NextPoint{n, grid, "ladder"};
      if (p->status == "oom" || p->status == "timeout") {
        stopped = true;
        break;
      }
    }
    if (!spec.largest) continue;
    auto [lo, hi] = Bounds(points, grid);
    if (lo == 0) continue;  // nothing fits: no bound to refine from
    if (hi == 0) {
      // No size ran out of memory: double past the largest that ran, up to --max-n.
      if (stopped || spec.max_n <= lo) continue;
      int next = std::min(lo * 2, spec.max_n);
      if (Find(points, grid, next)) continue;  // it failed or passed --timeout: stop here
      return NextPoint{next, grid, "doubling"};
    }
    if (hi - lo <= spec.step) continue;
    int mid = (lo + hi) / 2 / spec.step * spec.step;
    if (mid <= lo) mid = lo + spec.step;
    if (mid >= hi || Find(points, grid, mid)) continue;
    return NextPoint{mid, grid, "bisection"};
  }
  return std::nullopt;
}

void AddSkipped(const model::SweepSpec& spec, std::vector<model::SweepPoint>& points) {
  for (const auto& grid : spec.grids) {
    int stop = LadderStop(spec, points, grid);
    if (stop == 0) continue;
    const model::SweepPoint* at = Find(points, grid, stop);
    std::string why = at->status == "oom" ? "ran out of GPU memory" : "passed --timeout";
    for (int n : spec.sizes) {
      if (n <= stop || Find(points, grid, n)) continue;
      model::SweepPoint p;
      p.n = n;
      p.grid = grid;
      ParseGrid(grid, p.cp0, p.cp1);
      p.ranks = p.cp0 * p.cp1;
      p.status = "skipped";
      p.detail = fmt::format("not run: N={} on {} {}", stop, grid, why);
      points.push_back(p);
    }
  }
}

void SortPoints(const model::SweepSpec& spec, std::vector<model::SweepPoint>& points) {
  auto grid_index = [&spec](const std::string& g) {
    return std::find(spec.grids.begin(), spec.grids.end(), g) - spec.grids.begin();
  };
  std::stable_sort(points.begin(), points.end(), [&](const model::SweepPoint& a, const model::SweepPoint& b) {
    auto ga = grid_index(a.grid), gb = grid_index(b.grid);
    return ga != gb ? ga < gb : a.n < b.n;
  });
}

namespace {

// The largest rank's peak of a point that ran (its workload's lines); -1 unknown.
int64_t PeakOf(const model::SweepPoint& p) {
  int64_t peak = -1;
  for (int64_t b : p.peak_mem_bytes) peak = std::max(peak, b);
  return peak;
}

void Predict(const std::vector<model::SweepPoint>& points, const std::string& grid, int64_t capacity,
             model::SweepFit& f) {
  if (capacity <= 0) return;
  std::map<int, int64_t> peaks;  // N -> peak, of the points that ran below the first OOM
  std::string kind;
  for (const auto& p : points) {
    if (p.grid != grid || p.status != "ok" || (f.first_oom && p.n >= f.first_oom)) continue;
    if (int64_t b = PeakOf(p); b > 0) {
      peaks[p.n] = b;
      kind = p.peak_mem_kind;
    }
  }
  if (peaks.size() < 2) return;
  auto hi = std::prev(peaks.end()), lo = std::prev(hi);
  const double k = std::log(static_cast<double>(hi->second) / static_cast<double>(lo->second)) /
                   std::log(static_cast<double>(hi->first) / static_cast<double>(lo->first));
  if (!(k > 0.5)) return;  // not growing with N: no extrapolation
  const double n = hi->first * std::pow(static_cast<double>(capacity) / static_cast<double>(hi->second), 1 / k);
  if (!(n >= hi->first) || n > 1e7) return;
  f.predicted_n = static_cast<int>(n) / 64 * 64;
  f.predicted_how = fmt::format(
      "the largest rank's peak memory{} grows as N^{:.2f} between N={} and N={}: it would reach the GPU's {:.1f} GiB "
      "at N = {} (an extrapolation, not a run)",
      kind.empty() ? "" : " (" + kind + ")", k, lo->first, hi->first,
      static_cast<double>(capacity) / (1024.0 * 1024 * 1024), f.predicted_n);
}

}  // namespace

std::vector<model::SweepFit> Fits(const model::SweepSpec& spec, const std::vector<model::SweepPoint>& points,
                                  int64_t gpu_memory_bytes) {
  std::vector<model::SweepFit> fits;
  for (const auto& grid : spec.grids) {
    model::SweepFit f;
    f.grid = grid;
    std::tie(f.largest_ok, f.first_oom) = Bounds(points, grid);
    bool bisected = false, doubled = false;
    for (const auto& p : points) {
      if (p.grid != grid) continue;
      bisected = bisected || p.origin == "bisection";
      doubled = doubled || p.origin == "doubling";
    }
    int stop = LadderStop(spec, points, grid);
    const model::SweepPoint* at = stop ? Find(points, grid, stop) : nullptr;
    if (f.largest_ok == 0) {
      f.how = f.first_oom ? fmt::format("N={} ran out of memory, the smallest size tried", f.first_oom)
                          : std::string("no size ran");
    } else if (f.first_oom == 0) {
      if (at && at->status == "timeout") {
        f.how = fmt::format("no size ran out of memory; N={} passed --timeout, so N >= {} was not tried", stop, stop);
      } else {
        f.how = fmt::format("no size ran out of memory: N={} is the largest tried{}", f.largest_ok,
                            doubled ? " (doubling up to --max-n)" : "");
      }
    } else if (spec.largest && bisected) {
      f.how = fmt::format("bisection between the last fit and the first out-of-memory to a step of {}", spec.step);
    } else if (spec.largest && f.first_oom - f.largest_ok <= spec.step) {
      f.how = fmt::format("the ladder: the first out-of-memory is within the step of {} of the last fit", spec.step);
    } else {
      f.how = "the ladder: the last size that ran before the first out-of-memory";
    }
    Predict(points, grid, gpu_memory_bytes, f);
    fits.push_back(f);
  }
  return fits;
}

}  // namespace cpprof::sweep
