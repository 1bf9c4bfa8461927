// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// What the libFuzzer targets share (tests/fuzz/README.md): a JSON document damaged by a program
// read from the input (values swapped for extremes, other types, long or invalid UTF-8 text;
// keys removed; array items dropped or copied; packed varint strings rewritten), and a command
// run in process whose failure must be a clean one.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "base/utf8.h"
#include "cli/cli.h"

namespace cpprof::fuzz {

inline std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline void WriteAll(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
}

inline std::string Scratch(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/cpprof-fuzz-" + std::to_string(::getpid()) + "-" + name;
}

// `args` run in process: a crash or sanitizer report fails by itself; an "internal error", an out
// of memory, output that is not UTF-8, or output on stdout with a failing exit code aborts (the
// fuzzer keeps the input). Returns the exit code.
inline int Run(const std::vector<std::string>& args, const char* target) {
  std::ostringstream out, err;
  int rc = cpprof::cli::Run(args, out, err);
  const std::string e = err.str();
  if (e.find("internal error") != std::string::npos || e.find("out of memory") != std::string::npos ||
      !cpprof::IsValidUtf8(out.str()) || (rc != 0 && !out.str().empty())) {
    std::cerr << target << ": " << args[0] << " rc=" << rc << ": " << e << '\n';
    std::abort();
  }
  return rc;
}

// Zigzag LEB128 varints in base64 (a partial's packed arrays), from fuzzed numbers.
inline std::string PackedFrom(FuzzedDataProvider& in) {
  static const int64_t kExtremes[] = {0, 1, -1, INT64_MAX, INT64_MIN, int64_t{1} << 62, -(int64_t{1} << 62), 65535};
  std::string bytes;
  const int n = in.ConsumeIntegralInRange<int>(0, 12);
  for (int i = 0; i < n; ++i) {
    const int64_t v = in.ConsumeBool() ? in.PickValueInArray(kExtremes) : in.ConsumeIntegral<int64_t>();
    uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    while (z >= 0x80) {
      bytes.push_back(static_cast<char>((z & 0x7F) | 0x80));
      z >>= 7;
    }
    bytes.push_back(static_cast<char>(z));
  }
  if (in.ConsumeBool()) bytes += in.ConsumeRandomLengthString(8);  // trailing garbage
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= uint8_t(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= uint8_t(bytes[i + 2]);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back(i + 2 < bytes.size() ? kAlphabet[v & 63] : '=');
  }
  return out;
}

// A damaging value: an extreme number, another type, odd text.
inline nlohmann::json ValueFrom(FuzzedDataProvider& in) {
  static const int64_t kExtremes[] = {
      0,      -1,    1,     INT64_MIN,        INT64_MAX,       int64_t{1} << 62, -(int64_t{1} << 62),
      100000, 65535, 65536, int64_t{1} << 60, int64_t{1} << 31};
  switch (in.ConsumeIntegralInRange<int>(0, 9)) {
    case 0:
    case 1:
      return in.PickValueInArray(kExtremes);
    case 2:
      return in.ConsumeIntegral<int64_t>();
    case 3:
      return UINT64_MAX - in.ConsumeIntegralInRange<uint64_t>(0, 3);
    case 4:
      return in.ConsumeFloatingPoint<double>();
    case 5:  // text, possibly not UTF-8 (the JSON library refuses to write it: kept as bytes)
      return in.ConsumeRandomLengthString(32);
    case 6:
      return in.ConsumeBool();
    case 7:
      return nullptr;
    case 8:
      return in.ConsumeBool() ? nlohmann::json::array({1}) : nlohmann::json::object();
    default:
      return std::string(in.ConsumeIntegralInRange<size_t>(0, 20000), 'a');
  }
}

// One value of `doc` (a walk from the root, each step a fuzzed child) damaged.
inline void DamageOnce(nlohmann::json& doc, FuzzedDataProvider& in) {
  nlohmann::json* at = &doc;
  nlohmann::json* parent = nullptr;
  std::string key;
  size_t index = 0;
  const int depth = in.ConsumeIntegralInRange<int>(0, 8);
  for (int d = 0; d < depth && (at->is_object() || at->is_array()) && !at->empty(); ++d) {
    parent = at;
    index = in.ConsumeIntegralInRange<size_t>(0, at->size() - 1);
    if (at->is_object()) {
      auto it = at->begin();
      std::advance(it, static_cast<std::ptrdiff_t>(index));
      key = it.key();
      at = &*it;
    } else {
      at = &(*at)[index];
    }
  }
  switch (in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0:  // removed
      if (parent && parent->is_object()) {
        parent->erase(key);
      } else if (parent && parent->is_array()) {
        parent->erase(parent->begin() + static_cast<std::ptrdiff_t>(index));
      }
      break;
    case 1:  // copied (an array item, several times)
      if (parent && parent->is_array()) {
        const nlohmann::json copy = *at;
        const int n = in.ConsumeIntegralInRange<int>(1, 64);
        for (int i = 0; i < n; ++i) parent->push_back(copy);
      }
      break;
    case 2:  // a packed array rewritten (wherever the walk ended: a string is likely one)
      *at = PackedFrom(in);
      break;
    default:
      *at = ValueFrom(in);
      break;
  }
}

// `doc` damaged by up to `max_ops` operations, as text (invalid UTF-8 written as it is).
inline std::string Damaged(nlohmann::json doc, FuzzedDataProvider& in, int max_ops) {
  const int ops = in.ConsumeIntegralInRange<int>(1, max_ops);
  for (int i = 0; i < ops && in.remaining_bytes() > 0; ++i) DamageOnce(doc, in);
  std::string text = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::ignore);
  if (in.ConsumeBool() && !text.empty()) {  // raw damage: a few bytes overwritten
    const size_t at = in.ConsumeIntegralInRange<size_t>(0, text.size() - 1);
    text.replace(at, std::min<size_t>(4, text.size() - at), in.ConsumeBytesAsString(4));
  }
  return text;
}

}  // namespace cpprof::fuzz
