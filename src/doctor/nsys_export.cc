// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "doctor/nsys_export.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace cpprof::doctor {

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsSqliteFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[16] = {};
  in.read(magic, sizeof magic);
  return in.gcount() == 16 && std::memcmp(magic, "SQLite format 3", 16) == 0;
}

std::string LastLines(const std::string& text, size_t n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    // nsys redraws its progress bar with '\r': keep what the line ended as.
    if (auto cr = line.find_last_of('\r'); cr != std::string::npos) line = line.substr(cr + 1);
    if (!line.empty()) lines.push_back(line);
  }
  std::string s;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
    s += (s.empty() ? "" : " | ") + lines[i];
  return s.empty() ? "(no output)" : s;
}

}  // namespace

bool IsNsysReport(const std::string& path) { return path.size() > 9 && EndsWith(path, ".nsys-rep"); }

std::string SqliteBeside(const std::string& report) {
  std::string base = IsNsysReport(report) ? report.substr(0, report.size() - 9) : report;
  return base + ".sqlite";
}

Status ExportNsysReport(const NsysExportRequest& r, runner::ProcessRunner& runner, const runner::Environment& env) {
  if (!r.replace && ::access(r.sqlite.c_str(), F_OK) == 0) {
    return Error(ExitCode::kUsage, fmt::format("'{}' exists; add --force to export '{}' over it", r.sqlite, r.report));
  }
  // A hidden temporary name in the destination's folder (the rename below stays on one file system).
  std::string dir = ".", name = r.sqlite;
  if (auto slash = r.sqlite.rfind('/'); slash != std::string::npos) {
    dir = slash == 0 ? "/" : r.sqlite.substr(0, slash);
    name = r.sqlite.substr(slash + 1);
  }
  std::string temp = fmt::format("{}/.{}.cpprof-export-{}.sqlite", dir, name, ::getpid());
  ::unlink(temp.c_str());
  runner::RunOptions o;
  std::map<std::string, std::string> vars = env.vars();
  for (const auto& [k, v] : r.env) vars[k] = v;
  o.env = vars;
  o.timeout_s = r.timeout_s;
  auto result =
      runner.Run({r.nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", temp, r.report}, o);
  auto fail = [&](Status s) {
    ::unlink(temp.c_str());
    return s;
  };
  if (!result.ok()) return fail(result.status());
  if (!result->ok()) {
    return fail(Error(ExitCode::kExternal,
                      fmt::format("'{} export --type sqlite {}' {}: {}. Try 'cpprof doctor'.", r.nsys, r.report,
                                  result->Describe(), LastLines(result->err + "\n" + result->out, 3))));
  }
  if (!IsSqliteFile(temp)) {
    return fail(Error(ExitCode::kExternal,
                      fmt::format("'{} export --type sqlite {}' exited 0 but wrote no SQLite file: {}. Try 'cpprof "
                                  "doctor'.",
                                  r.nsys, r.report, LastLines(result->err + "\n" + result->out, 3))));
  }
  if (r.replace) {
    if (::rename(temp.c_str(), r.sqlite.c_str()) != 0) {
      int e = errno;
      return fail(
          Error(ExitCode::kError, fmt::format("cannot move the export to '{}': {}", r.sqlite, std::strerror(e))));
    }
    return OkStatus();
  }
  // link() fails with EEXIST instead of replacing a file that appeared meanwhile; where the file
  // system has no hard links, rename after one more look.
  if (::link(temp.c_str(), r.sqlite.c_str()) != 0) {
    int e = errno;
    if ((e == EPERM || e == ENOTSUP || e == EXDEV) && ::access(r.sqlite.c_str(), F_OK) != 0 &&
        ::rename(temp.c_str(), r.sqlite.c_str()) == 0) {
      return OkStatus();
    }
    if (e == EEXIST) {
      return fail(
          Error(ExitCode::kUsage, fmt::format("'{}' appeared while exporting; add --force to replace it", r.sqlite)));
    }
    return fail(Error(ExitCode::kError, fmt::format("cannot move the export to '{}': {}", r.sqlite, std::strerror(e))));
  }
  ::unlink(temp.c_str());
  return OkStatus();
}

}  // namespace cpprof::doctor
