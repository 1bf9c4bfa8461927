// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// Writes JSON straight into a string, value by value, for output of millions of small objects
// (the Chrome trace's events) without building an nlohmann::json object per event. Strings and
// floating-point numbers go through nlohmann's own serializer, so the bytes are exactly those of
// dumping the same nlohmann::ordered_json (compact, invalid UTF-8 replaced by U+FFFD).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace cpprof::render {

class JsonWriter {
 public:
  using Json = nlohmann::ordered_json;

  explicit JsonWriter(std::string& out);
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  // An object's key (plain ASCII without quotes or backslashes: the writer's own field names).
  void Key(std::string_view key);
  void String(std::string_view v);
  // A string already serialized by EscapedString (with its quotes).
  void RawString(std::string_view escaped);
  void Int(int64_t v);
  void UInt(uint64_t v);
  void Double(double v);
  // n / 1000 as Double(n / 1000.0) writes it (nanoseconds as microseconds), without the
  // floating-point formatting.
  void Thousandths(int64_t n);
  void Bool(bool v);
  // Any value, dumped by nlohmann.
  void Value(const Json& v);

  // `v` serialized as a JSON string, quotes included: to cache the names that repeat.
  std::string EscapedString(std::string_view v);

 private:
  void Separate();  // the comma before a value that is not the first of its container
  void Open(char bracket);
  void Close(char bracket);
  void AppendString(std::string_view v, std::string& out);

  std::string& out_;
  std::string scratch_;
  std::unique_ptr<nlohmann::detail::serializer<Json>> serializer_;  // writes into scratch_
  std::vector<bool> first_;                                         // per open container: no value yet
  bool after_key_ = false;
};

}  // namespace cpprof::render
