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

TEST(ChromeTraceWriter, MicrosKeepNanoseconds) {
  EXPECT_EQ(Json(Micros(1234567)).dump(), "1234.567");
  EXPECT_EQ(Json(Micros(13295419214)).dump(), "13295419.214");
  EXPECT_EQ(Json(Micros(1)).dump(), "0.001");
  EXPECT_EQ(Json(Micros(0)).dump(), "0.0");
}

}  // namespace
}  // namespace cpprof::render
