// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Tests only: a committed real export's report JSON and its module rows by name, for the tests that
// compare two captures of one model module by module (python_backtraces_test, boltz_test).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.h"

namespace cpprof::testing {

// `cpprof report --format json --no-replay` of tests/data/<folder>/<name>, with `extra` flags.
inline nlohmann::json ReportOfRealExport(const std::string& name, const std::string& folder,
                                         const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"report", "--format", "json", "--no-replay", RealExport(name, folder)};
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = RunCli(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// tests/data/<rel_tar> (a .tar.xz) extracted into a scratch folder <name> of this test process;
// returns the folder.
inline std::string ExtractedData(const std::string& rel_tar, const std::string& name) {
  const std::string dir = TempDir() + "/" + name;
  const std::string cmd = "mkdir -p '" + dir + "' && tar -C '" + dir + "' -xJf '" + DataPath(rel_tar) + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return dir;
}

// Mean busy ns per module name (groups and the [unattributed] row left out).
inline std::map<std::string, int64_t> ModuleBusyByName(const nlohmann::json& report) {
  std::map<std::string, int64_t> out;
  for (const nlohmann::json& m : report["modules"]["rows"]) {
    const std::string name = m["name"];
    if (m["group"].get<bool>() || name.front() == '[') continue;
    out[name] += m["mean_busy_ns"].get<int64_t>();
  }
  return out;
}

}  // namespace cpprof::testing
