#include "render/chrome_trace_writer.h"

namespace cpprof::render {

namespace {
std::string Dump(const ChromeTraceWriter::Json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, const Json& other_data) : out_(out) {
  out_ << "{\"displayTimeUnit\":\"ns\"";
  if (!other_data.is_null()) out_ << ",\"otherData\":" << Dump(other_data);
  out_ << ",\"traceEvents\":[";
}

void ChromeTraceWriter::Event(const Json& event) {
  out_ << (events_ ? ",\n" : "\n") << Dump(event);
  ++events_;
}

void ChromeTraceWriter::Finish() {
  if (finished_) return;
  finished_ = true;
  out_ << "\n]}\n";
}

}  // namespace cpprof::render
