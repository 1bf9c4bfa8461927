// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "nsys/python_backtraces.h"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>

namespace cpprof::nsys {

namespace {

constexpr std::string_view kKey = "\"Python Backtrace on CUDA\"";

// A non-negative integer that fits `max`, else -1.
int64_t Small(const nlohmann::json& j, const char* key, int64_t max) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return -1;
  const int64_t v = it->get<int64_t>();
  return v >= 0 && v <= max ? v : -1;
}

}  // namespace

std::string UnescapeHtml(std::string_view text) {
  static constexpr std::pair<std::string_view, char> kEntities[] = {{"&lt;", '<'},   {"&gt;", '>'},    {"&amp;", '&'},
                                                                    {"&quot;", '"'}, {"&apos;", '\''}, {"&#39;", '\''}};
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    bool done = false;
    if (text[i] == '&') {
      for (const auto& [entity, c] : kEntities) {
        if (text.substr(i, entity.size()) == entity) {
          out.push_back(c);
          i += entity.size();
          done = true;
          break;
        }
      }
    }
    if (!done) out.push_back(text[i++]);
  }
  return out;
}

bool PythonBacktraceDecoder::Add(int64_t start, int64_t global_tid, std::string_view payload) {
  // Cheap test first: every other payload (NCCL's, the user's) is skipped without parsing or
  // scanning it (nsys writes the key right after the opening brace).
  if (payload.substr(0, kKey.size() + 8).find(kKey) == std::string_view::npos || payload.front() != '{') return false;
  const nlohmann::json j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json* frames = nullptr;
  if (j.is_object()) {
    auto bt = j.find("Python Backtrace on CUDA");
    if (bt != j.end() && bt->is_object()) {
      auto f = bt->find("Frames");
      if (f != bt->end() && f->is_array()) frames = &*f;
    }
  }
  if (!frames || frames->size() > 100000) {
    ++damaged_;
    return true;
  }
  model::PythonBacktrace mark{start, global_tid, static_cast<uint32_t>(raw_.size()), 0};
  constexpr int64_t kMaxId = std::numeric_limits<int32_t>::max();
  for (const auto& f : *frames) {
    const int64_t function = f.is_object() ? Small(f, "Function", kMaxId) : -1;
    const int64_t file = f.is_object() ? Small(f, "File", kMaxId) : -1;
    const int64_t line = f.is_object() ? Small(f, "Line", kMaxId) : -1;
    if (function < 0 || file < 0 || line < 0) {
      raw_.resize(mark.first);
      ++damaged_;
      return true;
    }
    raw_.push_back({function, file, line});
  }
  mark.count = static_cast<uint32_t>(raw_.size() - mark.first);
  marks_.push_back(mark);
  return true;
}

StatusOr<model::PythonBacktraces> PythonBacktraceDecoder::Finish(const Database& db) {
  model::PythonBacktraces out;
  out.damaged = damaged_;
  if (marks_.empty()) return out;
  std::unordered_map<int64_t, uint32_t> index;  // StringIds id -> strings
  std::vector<int64_t> ids;
  auto intern = [&](int64_t id) {
    auto [it, added] = index.try_emplace(id, static_cast<uint32_t>(ids.size()));
    if (added) ids.push_back(id);
    return it->second;
  };
  out.frames.reserve(raw_.size());
  for (const RawFrame& f : raw_) {
    out.frames.push_back({intern(f.function), intern(f.file), static_cast<int32_t>(f.line)});
  }
  out.strings.assign(ids.size(), std::string());
  if (db.HasTable("StringIds")) {
    CPPROF_ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT value FROM StringIds WHERE id = ?",
                                                     "reading the names of Python backtrace frames"));
    for (size_t i = 0; i < ids.size(); ++i) {
      st.Reset();
      st.Bind(1, ids[i]);
      if (st.Step()) out.strings[i] = UnescapeHtml(st.Text(0));
      CPPROF_RETURN_IF_ERROR(st.status());
    }
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (out.strings[i].empty()) out.strings[i] = fmt::format("<string {}>", ids[i]);
  }
  out.marks = std::move(marks_);
  marks_.clear();
  raw_.clear();
  return out;
}

}  // namespace cpprof::nsys
