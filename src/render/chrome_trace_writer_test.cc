// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/chrome_trace_writer.h"

#include <gtest/gtest.h>

#include <sstream>

namespace cpprof::render {
namespace {

using Json = ChromeTraceWriter::Json;

TEST(ChromeTraceWriter, EmptyTraceIsValid) {
  std::ostringstream out;
  ChromeTraceWriter w(out, nullptr);
  w.Finish();
  Json j = Json::parse(out.str());
  EXPECT_TRUE(j["traceEvents"].is_array());
  EXPECT_EQ(j["traceEvents"].size(), 0u);
  EXPECT_EQ(j["displayTimeUnit"], "ns");
}

TEST(ChromeTraceWriter, OneEventPerLineEscapedByTheLibrary) {
  std::ostringstream out;
  ChromeTraceWriter w(out, Json{{"k", "v"}});
  w.Event(Json{{"name", "a\"b\\c\n\x01"}});
  w.Event(Json{{"name", std::string("bad\xff")}});
  w.Finish();
  EXPECT_EQ(w.events(), 2);
  EXPECT_EQ(out.str(),
            "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"k\":\"v\"},\"traceEvents\":[\n"
            "{\"name\":\"a\\\"b\\\\c\\n\\u0001\"},\n"
            "{\"name\":\"bad\xEF\xBF\xBD\"}\n]}\n");
}

// Event times are nanoseconds written as microseconds (JsonWriter::Thousandths), keeping ns.
TEST(ChromeTraceWriter, MicrosKeepNanoseconds) {
  auto micros = [](int64_t ns) {
    std::string out;
    JsonWriter w(out);
    w.Thousandths(ns);
    return out;
  };
  EXPECT_EQ(micros(1234567), "1234.567");
  EXPECT_EQ(micros(13295419214), "13295419.214");
  EXPECT_EQ(micros(1), "0.001");
  EXPECT_EQ(micros(0), "0.0");
}

}  // namespace
}  // namespace cpprof::render
