// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A streaming writer of Chrome Trace Event Format JSON (the format chrome://tracing and
// ui.perfetto.dev load): one object {"otherData": ..., "traceEvents": [ ... ]} written event by
// event, so a trace of millions of events never sits in memory as one JSON document. Events are
// serialized by nlohmann (an event as a json object, or field by field through JsonWriter, which
// uses nlohmann's serializer for strings and numbers: never escaped by hand); bytes that are not
// UTF-8 come out as U+FFFD.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "render/json_writer.h"

namespace cpprof::render {

class ChromeTraceWriter {
 public:
  using Json = nlohmann::ordered_json;

  // Writes the opening of the document, with `other_data` as "otherData" (may be null) and the
  // fields of `top_level` (an object, or null) before "traceEvents" (a Kineto trace's
  // "schemaVersion", "distributedInfo", ...). `spaced_top_level`: those fields' objects written with
  // a space after each ':' and a line per field (a Kineto trace: HTA finds a file's rank with the
  // regex `"rank":\s+(\d+)`, line by line, as PyTorch's writer spaces it).
  ChromeTraceWriter(std::ostream& out, const Json& other_data, const Json& top_level = nullptr,
                    bool spaced_top_level = false);
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  // Appends one event object.
  void Event(const Json& event);
  // The fast path for the many events: Begin() opens an event object and returns the writer to
  // add its fields with (Key, then a value); End() closes it. Same bytes as Event(json).
  JsonWriter& Begin();
  void End();
  // Events serialized elsewhere, as Begin()/End() would write them (",\n" before each, "\n"
  // before the document's first), appended as they are; `count` more events.
  void AppendRaw(std::string_view events, int64_t count);
  // `v` as a JSON string (quotes included), for JsonWriter::RawString.
  std::string Escape(std::string_view v) { return json_.EscapedString(v); }
  // Closes the array and the document. Call once, after the last event.
  void Finish();

  int64_t events() const { return events_; }
  // Threads that may format a batch of events at once (trace_batches.h's WriteInBlocks): the
  // command's budget (ExecContext::threads). 1 until set.
  void set_format_threads(size_t threads) { format_threads_ = threads; }
  size_t format_threads() const { return format_threads_; }

 private:
  void Flush();

  std::ostream& out_;
  std::string buffer_;  // written to out_ in blocks
  JsonWriter json_{buffer_};
  int64_t events_ = 0;
  bool finished_ = false;
  size_t format_threads_ = 1;
};

}  // namespace cpprof::render
