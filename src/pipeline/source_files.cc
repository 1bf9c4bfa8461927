// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "pipeline/source_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace cpprof::pipeline {

namespace {

namespace fs = std::filesystem;

std::optional<analysis::SourceText> ReadIfSource(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec) || ec) return std::nullopt;
  const uintmax_t size = fs::file_size(p, ec);
  if (ec || size > kMaxSourceBytes) return std::nullopt;
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return analysis::SourceText{p.string(), std::move(text).str()};
}

}  // namespace

analysis::SourceReader MakeSourceReader(std::vector<std::string> roots) {
  return [roots = std::move(roots)](const std::string& recorded) -> std::optional<analysis::SourceText> {
    const fs::path path(recorded);
    if (path.extension() != ".py") return std::nullopt;
    std::vector<fs::path> parts;
    for (const auto& part : path.relative_path()) parts.push_back(part);
    for (const auto& root : roots) {
      for (size_t skip = 0; skip < parts.size(); ++skip) {
        fs::path candidate(root);
        for (size_t i = skip; i < parts.size(); ++i) candidate /= parts[i];
        if (auto text = ReadIfSource(candidate)) return text;
      }
    }
    if (path.is_absolute()) return ReadIfSource(path);
    return std::nullopt;
  };
}

}  // namespace cpprof::pipeline
