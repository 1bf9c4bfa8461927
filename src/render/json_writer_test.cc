// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "render/json_writer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace cpprof::render {
namespace {

using Json = nlohmann::ordered_json;

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

TEST(JsonWriter, ThousandthsAreWhatNlohmannPrintsForTheDouble) {
  std::mt19937_64 rng(3);
  std::vector<int64_t> values = {0,
                                 1,
                                 10,
                                 100,
                                 999,
                                 1000,
                                 1001,
                                 1010,
                                 123456789,
                                 999999999999999,
                                 1000000000000000,
                                 -1,
                                 -1500,
                                 4611686018427387904};
  for (int i = 0; i < 2000000; ++i) {
    int digits = static_cast<int>(rng() % 16) + 1;
    int64_t bound = 1;
    for (int d = 0; d < digits; ++d) bound *= 10;
    values.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(bound)));
  }
  std::string out;
  JsonWriter w(out);
  for (int64_t n : values) {
    out.clear();
    w.Thousandths(n);
    ASSERT_EQ(out, Dump(Json(static_cast<double>(n) / 1000.0))) << n;
  }
}

TEST(JsonWriter, StringsAreWhatNlohmannPrints) {
  const std::string cases[] = {"",
                               "plain kernel_name<float, 4>(int)",
                               "quote \" and backslash \\",
                               "tab\tnewline\ncontrol\x01\x1f del\x7f",
                               "caf\xc3\xa9 \xe2\x86\x92",
                               "bad \xff\xfe utf-8 \xc3",
                               std::string("nul\0x", 5)};
  std::string out;
  JsonWriter w(out);
  for (const auto& s : cases) {
    out.clear();
    w.String(s);
    EXPECT_EQ(out, Dump(Json(s))) << s;
    EXPECT_EQ(w.EscapedString(s), Dump(Json(s)));
  }
}

TEST(JsonWriter, ObjectsAndArraysAsNlohmannDumpsThem) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject();
  w.Key("ph"), w.String("X");
  w.Key("n"), w.Int(-3);
  w.Key("id"), w.UInt(18446744073709551615ull);
  w.Key("ts"), w.Double(0.5);
  w.Key("ok"), w.Bool(true);
  w.Key("grid");
  w.BeginArray();
  for (int d : {1, 2, 3}) w.Int(d);
  w.EndArray();
  w.Key("empty");
  w.BeginObject();
  w.EndObject();
  w.Key("any"), w.Value(Json{{"a", 1}});
  w.EndObject();
  Json j;
  j["ph"] = "X";
  j["n"] = -3;
  j["id"] = 18446744073709551615ull;
  j["ts"] = 0.5;
  j["ok"] = true;
  j["grid"] = {1, 2, 3};
  j["empty"] = Json::object();
  j["any"] = Json{{"a", 1}};
  EXPECT_EQ(out, Dump(j));
}

}  // namespace
}  // namespace cpprof::render
