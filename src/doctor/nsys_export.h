// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// An nsys report (.nsys-rep) exported to SQLite with a found nsys, for commands that read
// exports and are given a report by mistake (`cpprof stats run.nsys-rep`, as `nsys stats` does).
// The export is written under a temporary name beside the report and moved into place only when
// nsys succeeded, so a failed or interrupted export never leaves a half-written .sqlite, and an
// existing .sqlite is replaced only when asked.
#pragma once

#include <map>
#include <string>

#include "base/status.h"
#include "runner/environment.h"
#include "runner/process_runner.h"

namespace cpprof::doctor {

// "dir/run.nsys-rep" -> true.
bool IsNsysReport(const std::string& path);
// "dir/run.nsys-rep" -> "dir/run.sqlite" (where `nsys export` and `nsys stats` put it).
std::string SqliteBeside(const std::string& report);

struct NsysExportRequest {
  std::string nsys;                        // the nsys binary
  std::string report;                      // .nsys-rep
  std::string sqlite;                      // the destination
  bool replace = false;                    // replace an existing `sqlite`
  std::map<std::string, std::string> env;  // added to the environment nsys runs in
  double timeout_s = 3600;
};

// Runs `nsys export --type sqlite --force-overwrite true --output TEMP REPORT` and moves TEMP to
// `sqlite`. Errors: the destination exists (and !replace), nsys failed (its last lines quoted),
// or nsys wrote no SQLite.
Status ExportNsysReport(const NsysExportRequest& request, runner::ProcessRunner& runner,
                        const runner::Environment& env);

}  // namespace cpprof::doctor
