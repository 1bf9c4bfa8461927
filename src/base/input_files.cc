// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "base/input_files.h"

#include <fmt/format.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>

namespace cpprof {

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  int zeros = 0;  // equal numbers with different leading zeros: fewer first, if nothing else differs
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t i0 = i, j0 = j;
      while (i0 < a.size() && a[i0] == '0') ++i0;
      while (j0 < b.size() && b[j0] == '0') ++j0;
      size_t i1 = i0, j1 = j0;
      while (i1 < a.size() && digit(a[i1])) ++i1;
      while (j1 < b.size() && digit(b[j1])) ++j1;
      if (i1 - i0 != j1 - j0) return i1 - i0 < j1 - j0;
      int c = a.substr(i0, i1 - i0).compare(b.substr(j0, j1 - j0));
      if (c != 0) return c < 0;
      if (zeros == 0 && i1 - i != j1 - j) zeros = i1 - i < j1 - j ? -1 : 1;
      i = i1, j = j1;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i, ++j;
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return zeros < 0;
}

namespace {

void SortNaturally(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
}

bool IsPattern(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::vector<std::string> DistinctNames(const std::vector<std::string>& paths) {
  // Components of each path, last first ("a/./b//x.sqlite" -> x.sqlite, b, a).
  std::vector<std::vector<std::string>> parts(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    for (const auto& c : std::filesystem::path(paths[i]).lexically_normal()) {
      std::string s = c.string();
      if (!s.empty() && s != "/") parts[i].push_back(std::move(s));
    }
    std::reverse(parts[i].begin(), parts[i].end());
  }
  auto suffix = [&](size_t i, size_t n) {
    std::string s;
    for (size_t k = std::min(n, parts[i].size()); k-- > 0;) s += parts[i][k] + (k ? "/" : "");
    return s;
  };
  std::vector<std::string> out(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    // Grow i's suffix until no other path ends the same way (or i's components run out).
    size_t n = 1;
    for (size_t j = 0; j < paths.size(); ++j) {
      if (j == i) continue;
      while (n < parts[i].size() && suffix(i, n) == suffix(j, n)) ++n;
    }
    out[i] = suffix(i, n);
  }
  return out;
}

StatusOr<std::vector<std::string>> ExpandInputs(const std::vector<std::string>& args, std::string_view extension) {
  std::vector<std::string> out;
  for (const auto& arg : args) {
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::string> found;
      int other_reports = 0;
      for (const auto& entry : std::filesystem::directory_iterator(arg, ec)) {
        const std::string name = entry.path().filename().string();
        if (EndsWith(name, extension) && !entry.is_directory(ec)) found.push_back(entry.path().string());
        if (EndsWith(name, ".nsys-rep")) ++other_reports;
      }
      if (ec) return Status(ExitCode::kBadInput, fmt::format("cannot list '{}': {}", arg, ec.message()));
      if (found.empty()) {
        return Status(ExitCode::kUsage,
                      other_reports ? fmt::format("'{}' holds {} .nsys-rep report(s) but no {} export: export each "
                                                  "with 'nsys export --type sqlite REPORT.nsys-rep'",
                                                  arg, other_reports, extension)
                                    : fmt::format("'{}' holds no {} export", arg, extension));
      }
      SortNaturally(found);
      out.insert(out.end(), found.begin(), found.end());
      continue;
    }
    struct stat st {};
    if (IsPattern(arg) && ::stat(arg.c_str(), &st) != 0) {
      glob_t g{};
      int rc = ::glob(arg.c_str(), 0, nullptr, &g);
      std::vector<std::string> found;
      if (rc == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) found.emplace_back(g.gl_pathv[i]);
      }
      ::globfree(&g);
      if (found.empty()) return Status(ExitCode::kUsage, fmt::format("'{}' matches no file", arg));
      SortNaturally(found);
      out.insert(out.end(), found.begin(), found.end());
      continue;
    }
    out.push_back(arg);
  }
  // One file named twice (a glob and a file, or through another path) would count its ranks twice.
  std::set<std::pair<dev_t, ino_t>> seen;
  for (const auto& path : out) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) continue;
    if (!seen.insert({st.st_dev, st.st_ino}).second) {
      return Status(ExitCode::kUsage, fmt::format("'{}' is given twice: each export may be read once", path));
    }
  }
  return out;
}

std::string ContentFingerprint(const std::string& path) {
  constexpr size_t kPart = size_t{1} << 20;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  const auto size = static_cast<size_t>(st.st_size);
  uint64_t hash = 0xcbf29ce484222325ULL;
  std::string buf(std::min(size, kPart), '\0');
  auto mix = [&](size_t offset) {
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    for (size_t i = 0; i < static_cast<size_t>(in.gcount()); ++i) {
      hash = (hash ^ static_cast<unsigned char>(buf[i])) * 0x100000001b3ULL;
    }
    in.clear();
  };
  mix(0);
  if (size > kPart) mix(size - buf.size());
  return fmt::format("{}:{:016x}", size, hash);
}

}  // namespace cpprof
