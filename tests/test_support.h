// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Helpers shared by cpprof's tests: real exports (decompressed once), in-process CLI runs,
// hand-written SQL fixtures.
#pragma once

#include <string>
#include <vector>

namespace cpprof::testing {

// Path of tests/data/<rel>.
std::string DataPath(const std::string& rel);

// A real export committed as tests/data/<folder>/<name>/<name>.sqlite.xz, decompressed on first
// use into a cache in the temporary directory shared by all test processes; returns the .sqlite
// path (open it read-only). tests/data/real-pairs holds the replay's one-GPU proof pairs, which
// have no nsys stats CSVs beside them.
std::string RealExport(const std::string& name, const std::string& folder = "real");

// The names of the committed real exports in tests/data/<folder>.
std::vector<std::string> RealExportNames(const std::string& folder = "real");

// A fresh SQLite database built from `sql` (run with the sqlite3 API); returns its path.
std::string MakeDatabase(const std::string& name, const std::string& sql);
// tests/data/sql/_schema.sql + tests/data/sql/<name>.sql as a fresh database; returns its path.
std::string SqlFixture(const std::string& name);

// How SplitPerProcess makes each per-process export look captured on its own.
struct SplitOptions {
  // Per process (in device order): its session started this much later than the original's, so
  // its timestamps are this much smaller and its recorded UTC start this much later.
  std::vector<int64_t> start_later_ns;
  // Per process: an error of the recorded UTC start (a host clock off by this much).
  std::vector<int64_t> utc_error_ns;
  bool drop_nccl_rank_payloads = false;  // as if NCCL's payload schemas were not recorded
  std::vector<int> env_rank;             // per process: RANK="n" added to the recorded environment
};

// Splits a real export of several GPU processes into one export per process, as if each had
// been captured by its own nsys (one per rank): `out_dir`/rep.<i>.sqlite for the process on the
// i-th device. Rows of other processes are deleted; time columns (start, end, timestamp) are
// shifted per SplitOptions. Returns the paths.
std::vector<std::string> SplitPerProcess(const std::string& export_path, const std::string& out_dir,
                                         const SplitOptions& options = {});

// A scratch directory unique to this test process, removed when it exits.
std::string TempDir();

std::string ReadFile(const std::string& path);
// `path`, or `path`.xz decompressed when only that exists (big nsys CSVs are committed so).
std::string ReadFileOrXz(const std::string& path);
void WriteFile(const std::string& path, const std::string& content);
// DIR/nsys: an nsys that answers --version, `profile --help`, `export --help` and `status -e` as the
// H200's does and, asked anything else (a real run), writes DIR/ran and fails. For --dry-run tests.
std::string WriteDryRunNsys(const std::string& dir);

struct CliResult {
  int rc = 0;
  std::string out;
  std::string err;
};

// cpprof's CLI run in-process.
CliResult RunCli(const std::vector<std::string>& args);
// The built cpprof binary run as a child process (black-box tests).
CliResult RunBinary(const std::vector<std::string>& args);

}  // namespace cpprof::testing
