// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "analysis/backtrace_modules.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "base/text_lines.h"
#include "model/global_id.h"

namespace cpprof::analysis {

namespace {

// How far before its first backtrace a call may start (see Builder::Run): PyTorch's innermost op
// range opened a median 15 us before its launch in tests/data/real-bt/cpfold-bt-json-1x1, and a
// library kernel that ended a call was launched at least 33 us before the next call's first
// backtrace there.
constexpr int64_t kLeadNs = 20'000;

// Columns of leading white space (a tab to the next multiple of 8, as Python reads it); -1 for a
// line that is blank, only a comment, or the closing bracket of a continued statement.
int Indent(std::string_view line) {
  int col = 0;
  for (char c : line) {
    if (c == ' ') {
      ++col;
    } else if (c == '\t') {
      col = (col / 8 + 1) * 8;
    } else if (c == '#' || c == ')' || c == ']' || c == '}') {
      return -1;  // a comment, or the closing line of a bracket (`) -> Tensor:` of a def black wrapped)
    } else {
      return col;
    }
  }
  return -1;
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// The name after `keyword` ("def", "class") at the start of `s` (white space stripped), or "".
std::string_view NameAfter(std::string_view s, std::string_view keyword) {
  if (s.substr(0, keyword.size()) != keyword || s.size() <= keyword.size()) return {};
  if (s[keyword.size()] != ' ' && s[keyword.size()] != '\t') return {};
  s.remove_prefix(keyword.size());
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  size_t n = 0;
  while (n < s.size() && IsNameChar(s[n])) ++n;
  return s.substr(0, n);
}

std::string_view DefName(std::string_view s) {
  if (s.substr(0, 6) == "async ") {
    s.remove_prefix(6);
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  }
  return NameAfter(s, "def");
}

EnclosingDef EnclosingDefIn(const std::vector<std::string_view>& lines, int line) {
  if (line < 1 || static_cast<size_t>(line) > lines.size()) return {};
  int limit = Indent(lines[static_cast<size_t>(line) - 1]);
  limit = limit < 0 ? INT32_MAX : limit + 1;
  EnclosingDef out;
  for (int i = line; i >= 1; --i) {
    const std::string_view s = lines[static_cast<size_t>(i) - 1];
    const int ind = Indent(s);
    if (ind < 0 || ind >= limit) continue;
    const std::string_view code = s.substr(s.find_first_not_of(" \t"));
    limit = ind;
    if (out.function.empty()) {
      const std::string_view def = DefName(code);
      if (!def.empty()) {
        out.function = std::string(def);
      } else if (ind == 0) {
        return {};
      }
      continue;
    }
    const std::string_view cls = NameAfter(code, "class");
    if (!cls.empty()) {
      out.cls = std::string(cls);
      return out;
    }
    if (!DefName(code).empty() || ind == 0) return out;  // a nested function, or a module-level one
  }
  return out;
}

// A loaded source file: its lines, or nothing.
struct Source {
  bool found = false;
  std::vector<std::string_view> lines;
  std::string text;
};

// One element of a launch's module path.
struct PathStep {
  uint32_t name;  // into BacktraceModules::names
  int32_t line;   // the frame's line: a new call when it goes back
};

struct OpenCall {
  PathStep step;
  int64_t start, last;
};

class Builder {
 public:
  explicit Builder(const BacktraceModuleInput& in) : in_(in), bt_(*in.backtraces) {
    out_.summary.backtraces = static_cast<int64_t>(bt_.marks.size());
    IndexNvtxModules();
    for (const auto& [pid, t] : in.iteration_starts) cuts_[pid].push_back(t);
    for (auto& [pid, v] : cuts_) std::sort(v.begin(), v.end());
  }

  BacktraceModules Run() {
    std::vector<uint32_t> order(bt_.marks.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const auto &x = bt_.marks[a], &y = bt_.marks[b];
      return x.global_tid != y.global_tid ? x.global_tid < y.global_tid : x.start < y.start;
    });
    std::vector<OpenCall> open;
    int64_t tid = 0, prev = 0;
    bool first = true;
    std::vector<PathStep> path;
    for (uint32_t i : order) {
      const model::PythonBacktrace& m = bt_.marks[i];
      const bool same_thread = !first && m.global_tid == tid;
      const bool cut = same_thread && CutBetween(tid, prev, m.start);
      if (!same_thread || cut) Close(open, 0, tid, kNoLimit);
      // Between two backtraces of a thread, the launches without one (library kernels) belong
      // to the calls of the earlier, up to kLeadNs before the later: that part goes to the calls
      // the later one opens (PyTorch's op range of their first launch opens before the launch).
      // After an iteration's start, calls start no earlier than it.
      const int64_t split =
          same_thread && !cut ? std::max(prev + kMaxModuleDepth + 2, m.start - std::min(kLeadNs, (m.start - prev) / 2))
                              : std::max(LastCut(m.global_tid, m.start), m.start - kLeadNs);
      tid = m.global_tid, prev = m.start, first = false;
      if (InNvtxModule(m.global_tid, m.start)) {
        ++out_.summary.in_nvtx_modules;
        Close(open, 0, tid, split);
        continue;
      }
      PathOf(m, path);
      size_t k = 0;
      while (k < open.size() && k < path.size() && open[k].step.name == path[k].name &&
             path[k].line >= open[k].step.line) {
        ++k;
      }
      Close(open, k, tid, split);
      for (size_t d = 0; d < k; ++d) open[d].step.line = path[d].line, open[d].last = m.start;
      for (size_t d = k; d < path.size(); ++d) open.push_back({path[d], split, m.start});
      if (!path.empty()) ++out_.summary.used;
    }
    Close(open, 0, tid, kNoLimit);
    out_.summary.ranges = static_cast<int64_t>(out_.ranges.size());
    out_.summary.methods = static_cast<int64_t>(out_.names.size());
    for (const auto& [file, s] : sources_) {
      if (s.found) ++out_.summary.files_read;
    }
    std::sort(out_.summary.files_missing.begin(), out_.summary.files_missing.end());
    return std::move(out_);
  }

 private:
  // The calls deeper than `k` end just before `limit` (the next calls' start), or at their last
  // backtrace with kNoLimit. A caller's range ends a nanosecond per level after its callee's, so
  // that a parent is always the longer of two ranges that start together (ModuleAttribution
  // orders ranges longest first); every end stays before `limit`.
  static constexpr int64_t kNoLimit = INT64_MIN;
  void Close(std::vector<OpenCall>& open, size_t k, int64_t tid, int64_t limit) {
    for (size_t d = k; d < open.size(); ++d) {
      const OpenCall& c = open[d];
      const auto depth = static_cast<int64_t>(d);
      int64_t end = c.last + 1 + (kMaxModuleDepth - depth);
      if (limit != kNoLimit) end = std::max(end, limit - 2 - depth);
      KeptRange r;
      r.start = c.start, r.end = end, r.tid = tid, r.name = c.step.name;
      r.module = true;
      out_.ranges.push_back(r);
    }
    open.resize(std::min(open.size(), k));
  }

  // The model's methods on the mark's stack, outermost first.
  void PathOf(const model::PythonBacktrace& m, std::vector<PathStep>& path) {
    path.clear();
    for (uint32_t j = m.count; j-- > 0;) {
      const model::PythonFrame& f = bt_.frames[m.first + j];
      const std::string& function = bt_.strings[f.function];
      const std::string& file = bt_.strings[f.file];
      if (function.empty() || function.front() == '<' || IsLibraryFile(file)) continue;
      std::string name = MethodName(f, function, file, j + 1 < m.count ? &bt_.frames[m.first + j + 1] : nullptr);
      if (name.empty()) continue;
      if (path.size() == static_cast<size_t>(kMaxModuleDepth)) break;
      path.push_back({Intern(name), f.line});
    }
  }

  // "Class.method", "file.py:function" without the source (for nn.Module calls), or "".
  std::string MethodName(const model::PythonFrame& f, const std::string& function, const std::string& file,
                         const model::PythonFrame* caller) {
    const Source& src = Load(f.file, file);
    if (src.found) {
      const EnclosingDef d = EnclosingDefIn(src.lines, f.line);
      if (d.function == function) return d.cls.empty() ? std::string() : d.cls + "." + function;
      ++out_.summary.frames_not_matching;
    }
    const std::string& called_by = caller ? bt_.strings[caller->function] : std::string();
    if (called_by != "_call_impl" && called_by != "_wrapped_call_impl") return {};
    const size_t slash = file.find_last_of('/');
    return (slash == std::string::npos ? file : file.substr(slash + 1)) + ":" + function;
  }

  const Source& Load(uint32_t id, const std::string& file) {
    auto [it, added] = sources_.try_emplace(id);
    if (!added) return it->second;
    std::optional<SourceText> text = in_.read_source ? in_.read_source(file) : std::nullopt;
    if (!text) {
      out_.summary.files_missing.push_back(file);
      return it->second;
    }
    it->second.found = true;
    it->second.text = std::move(text->text);
    it->second.lines = SplitLines(it->second.text);
    return it->second;
  }

  uint32_t Intern(const std::string& name) {
    auto [it, added] = index_.try_emplace(name, static_cast<uint32_t>(out_.names.size()));
    if (added) out_.names.push_back(std::string(kBacktraceDomain) + ":" + name);
    return it->second;
  }

  void IndexNvtxModules() {
    if (!in_.kept) return;
    for (const KeptRange& r : *in_.kept) {
      if (r.module) modules_[r.tid].push_back({r.start, r.end});
    }
    for (auto& [tid, v] : modules_) {
      std::sort(v.begin(), v.end());
      std::vector<std::pair<int64_t, int64_t>> merged;
      for (const auto& iv : v) {
        if (!merged.empty() && iv.first <= merged.back().second) {
          merged.back().second = std::max(merged.back().second, iv.second);
        } else {
          merged.push_back(iv);
        }
      }
      v = std::move(merged);
    }
  }

  bool InNvtxModule(int64_t tid, int64_t t) const {
    auto it = modules_.find(tid);
    if (it == modules_.end()) return false;
    const auto& v = it->second;
    auto after = std::upper_bound(v.begin(), v.end(), std::pair<int64_t, int64_t>{t, INT64_MAX});
    return after != v.begin() && std::prev(after)->second >= t;
  }

  // The latest iteration start at or before `t` on the thread's process (INT64_MIN: none).
  int64_t LastCut(int64_t tid, int64_t t) const {
    auto it = cuts_.find(model::GlobalPidOf(tid));
    if (it == cuts_.end()) return INT64_MIN;
    auto c = std::upper_bound(it->second.begin(), it->second.end(), t);
    return c == it->second.begin() ? INT64_MIN : *std::prev(c);
  }

  bool CutBetween(int64_t tid, int64_t a, int64_t b) const {
    auto it = cuts_.find(model::GlobalPidOf(tid));
    if (it == cuts_.end()) return false;
    auto c = std::upper_bound(it->second.begin(), it->second.end(), a);
    return c != it->second.end() && *c <= b;
  }

  const BacktraceModuleInput& in_;
  const model::PythonBacktraces& bt_;
  BacktraceModules out_;
  std::unordered_map<uint32_t, Source> sources_;  // by the file's string
  std::map<std::string, uint32_t> index_;
  std::unordered_map<int64_t, std::vector<std::pair<int64_t, int64_t>>> modules_;  // tid -> union of module ranges
  std::unordered_map<int64_t, std::vector<int64_t>> cuts_;                         // pid -> iteration starts
};

}  // namespace

EnclosingDef FindEnclosingDef(std::string_view text, int line) { return EnclosingDefIn(SplitLines(text), line); }

bool IsLibraryFile(std::string_view path) {
  if (path.empty() || path.front() == '<') return true;
  if (path.find("/site-packages/") != std::string_view::npos || path.find("/dist-packages/") != std::string_view::npos)
    return true;
  // The standard library: .../lib/python3.12/x.py (its site-packages are caught above).
  size_t at = path.find("/lib/python");
  while (at != std::string_view::npos) {
    size_t i = at + 11;
    if (i < path.size() && path[i] >= '0' && path[i] <= '9') return true;
    at = path.find("/lib/python", at + 1);
  }
  return false;
}

BacktraceModules BuildBacktraceModules(const BacktraceModuleInput& in, const ModuleConfig& config) {
  if (!in.backtraces || in.backtraces->marks.empty()) return {};
  BacktraceModules out = Builder(in).Run();
  // The names are classified as NVTX ones: a user's config may exclude some (their ranges are
  // then not modules), or mark the optimizer or warm-up.
  std::vector<NameClass> classes(out.names.size());
  for (size_t i = 0; i < out.names.size(); ++i) classes[i] = config.Classify(out.names[i]);
  std::erase_if(out.ranges, [&](KeptRange& r) {
    const NameClass& c = classes[r.name];
    r.module = c.module, r.optimizer = c.optimizer, r.warmup = c.warmup, r.excluded = c.excluded_work;
    return !(c.module || c.optimizer || c.warmup || c.excluded_work);
  });
  return out;
}

}  // namespace cpprof::analysis
