// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Python backtraces of CUDA launches (`nsys profile --python-backtrace=cuda`): nsys records one
// NVTX mark per CUDA API call that got a CUDA backtrace, in the domain "Python Backtrace on
// CUDA", at the call's start and on its thread. Its payload, exported only with `nsys export
// --include-json true`, lists the Python frames innermost first:
//   {"Python Backtrace on CUDA":{"Thread state":"Running","Frames count":3,
//    "Frames":[{"Function":5305,"File":4958,"Line":108},...]}}
// where Function and File are StringIds ids (HTML-escaped there: "&lt;module&gt;").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "model/python_frames.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

// Collects backtrace marks from payloads streamed by someone else (the report's one pass over
// NVTX_EVENTS), then names their frames from StringIds.
class PythonBacktraceDecoder {
 public:
  // Keeps `payload` when it is a Python backtrace (else returns false and keeps nothing). A
  // backtrace whose JSON is damaged is counted (PythonBacktraces::damaged), not kept.
  bool Add(int64_t start, int64_t global_tid, std::string_view payload);
  // The kept backtraces with their frames' names; `db`'s StringIds are read once per distinct id.
  StatusOr<model::PythonBacktraces> Finish(const Database& db);

 private:
  struct RawFrame {
    int64_t function, file, line;
  };
  std::vector<model::PythonBacktrace> marks_;  // frames index raw_
  std::vector<RawFrame> raw_;
  int64_t damaged_ = 0;
};

// "&lt;module&gt;" -> "<module>": the entities nsys writes into StringIds for frame names.
std::string UnescapeHtml(std::string_view text);

}  // namespace cpprof::nsys
