// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A run's exports opened and put on one clock: the one place where a command assembles a run from
// its exports (one, or one per rank or per node). Each export is opened and read on a thread of its
// own (its schema probed, its capture facts read, then what the command reads besides), exports
// of different runs are refused (analysis::CheckSameRun, unless forced) and several exports' clocks
// aligned on the first one's from their NCCL kernels (analysis/clock_align.h). Ranks come after,
// from analysis::AssignRunRanks over the processes the command read.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/clock_align.h"
#include "base/status.h"
#include "model/capture.h"
#include "nsys/export_reader.h"
#include "nsys/sqlite_db.h"

namespace cpprof::pipeline {

// One export of a run, open.
struct OpenedExport {
  std::string path;
  std::optional<nsys::Database> db;
  nsys::ExportSchema schema;
  model::CaptureInfo capture;
  analysis::ClockAlignment clock;  // onto the run's clock (the first export's); none for one export

  // Some text read from it was not UTF-8 (nsys::Database::invalid_utf8_seen): the command says so.
  bool invalid_utf8_seen() const { return closed_invalid_utf8 || (db && db->invalid_utf8_seen()); }
  // Closes the connection once everything is read, keeping what it saw.
  void Close() {
    closed_invalid_utf8 = invalid_utf8_seen();
    db.reset();
  }
  bool closed_invalid_utf8 = false;
};

struct OpenRunOptions {
  ExecContext exec;          // how the command runs: each export is opened with it
  bool force = false;        // exports that do not look like one run are read as one all the same
  bool align_clocks = true;  // several exports: align their clocks (their NCCL kernels are read)
  bool probe = true;         // probe each export's schema (the tables a readout needs); off: capture facts only
  // What the command reads besides from export e, on its thread, once its schema is probed and
  // before its capture facts are read.
  std::function<Status(size_t e)> read;
};

// Opens `exports[e]` at paths[e] for every e (the caller's structs, which may hold more).
Status OpenRun(const std::vector<std::string>& paths, const OpenRunOptions& options,
               const std::vector<OpenedExport*>& exports);

// The captures of `exports`, in order (for analysis::AssignRunRanks).
std::vector<const model::CaptureInfo*> CapturesOf(const std::vector<OpenedExport*>& exports);

// Whether text read from any of `exports` was not UTF-8.
template <class Exports>
bool AnyInvalidUtf8(const Exports& exports) {
  for (const auto& x : exports) {
    if (x.invalid_utf8_seen()) return true;
  }
  return false;
}

}  // namespace cpprof::pipeline
