// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/chrome_trace_writer.h"

namespace cpprof::render {

namespace {
std::string Dump(const ChromeTraceWriter::Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}
}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, const Json& other_data, const Json& top_level,
                                     bool spaced_top_level)
    : out_(out) {
  out_ << "{\"displayTimeUnit\":\"ns\"";
  if (!other_data.is_null()) out_ << ",\"otherData\":" << Dump(other_data);
  if (top_level.is_object()) {
    for (const auto& [key, value] : top_level.items()) {
      out_ << "," << Dump(Json(key)) << (spaced_top_level ? ": " : ":") << Dump(value, spaced_top_level ? 0 : -1);
    }
  }
  out_ << ",\"traceEvents\":[";
}

void ChromeTraceWriter::Event(const Json& event) {
  buffer_ += events_ ? ",\n" : "\n";
  buffer_ += Dump(event);
  ++events_;
  if (buffer_.size() >= (1 << 20)) Flush();
}

JsonWriter& ChromeTraceWriter::Begin() {
  buffer_ += events_ ? ",\n" : "\n";
  json_.BeginObject();
  return json_;
}

void ChromeTraceWriter::End() {
  json_.EndObject();
  ++events_;
  if (buffer_.size() >= (1 << 20)) Flush();
}

void ChromeTraceWriter::AppendRaw(std::string_view events, int64_t count) {
  events_ += count;
  if (events.size() >= (1 << 18)) {  // a block of events formatted elsewhere: written as it is, not copied
    Flush();
    out_.write(events.data(), static_cast<std::streamsize>(events.size()));
    return;
  }
  buffer_ += events;
  if (buffer_.size() >= (1 << 20)) Flush();
}

void ChromeTraceWriter::Flush() {
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  buffer_.clear();
}

void ChromeTraceWriter::Finish() {
  if (finished_) return;
  finished_ = true;
  buffer_ += "\n]}\n";
  Flush();
}

}  // namespace cpprof::render
