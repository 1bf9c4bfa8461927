// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "runner/environment.h"

#include <glob.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "runner/process_runner.h"

extern char** environ;

namespace cpprof::runner {

Environment Environment::FromProcess() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    vars.emplace(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
  }
  return Environment(std::move(vars));
}

Environment::Environment(std::map<std::string, std::string> vars, std::string root)
    : vars_(std::move(vars)), root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

std::optional<std::string> Environment::Get(const std::string& name) const {
  auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second;
}

std::string Environment::GetOr(const std::string& name, const std::string& fallback) const {
  auto v = Get(name);
  return v && !v->empty() ? *v : fallback;
}

std::string Environment::Home() const {
  if (auto h = Get("HOME"); h && !h->empty()) return *h;
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return "/";
}

std::optional<std::string> Environment::FindOnPath(const std::string& name) const {
  return FindProgram(name, GetOr("PATH", ""));
}

bool Environment::IsFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool Environment::IsDir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Environment::IsExecutable(const std::string& path) { return IsFile(path) && ::access(path.c_str(), X_OK) == 0; }

std::optional<std::string> Environment::ReadText(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string s(max_bytes, '\0');
  in.read(s.data(), static_cast<std::streamsize>(max_bytes));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

std::string Environment::RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf)) return buf;
  return path;
}

std::vector<std::string> Environment::Glob(const std::string& pattern) {
  glob_t g{};
  std::vector<std::string> out;
  if (::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  std::sort(out.begin(), out.end(), VersionLess);
  return out;
}

bool VersionLess(const std::string& a, const std::string& b) { return ::strverscmp(a.c_str(), b.c_str()) < 0; }

}  // namespace cpprof::runner
