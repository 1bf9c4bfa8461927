// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// User regular expressions (--modules patterns, --exclude-ranges, --iteration-range,
// --trace-match): RE2 (https://github.com/google/re2/wiki/Syntax), searched: a pattern matches
// when it is found anywhere in the text (RE2::PartialMatch; anchor with ^ and $). RE2 runs in
// time linear in the text for every pattern, so no pattern can backtrack catastrophically; the
// price is no backreferences and no lookarounds ((?=...), (?!...), (?<=...)).
#pragma once

#include <fmt/format.h>
#include <re2/re2.h>

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cpprof {

inline constexpr std::string_view kRegexSyntaxUrl = "https://github.com/google/re2/wiki/Syntax";

// How cpprof compiles every user pattern: UTF-8, case-sensitive, errors returned (not logged).
inline RE2::Options RegexOptions() {
  RE2::Options o;
  o.set_log_errors(false);
  return o;
}

// Compiles `pattern`. On error (exit code `code`) the message names `what` (the flag or config
// field, e.g. "--iteration-range"), the pattern, RE2's reason, where the pattern is searched
// (`searched_in`, e.g. "'domain:text' of each NVTX range") and the syntax:
//   --iteration-range 'it(' is not a valid regular expression (RE2: missing ): it(); patterns
//   use RE2's syntax (https://github.com/google/re2/wiki/Syntax: no lookarounds or
//   backreferences) and are searched in 'domain:text' of each NVTX range.
inline StatusOr<std::shared_ptr<const RE2>> CompileRegex(const std::string& pattern, std::string_view what,
                                                         ExitCode code, std::string_view searched_in) {
  auto re = std::make_shared<const RE2>(pattern, RegexOptions());
  if (re->ok()) return std::shared_ptr<const RE2>(std::move(re));
  return Status(code, fmt::format("{} '{}' is not a valid regular expression (RE2: {}); patterns use RE2's syntax "
                                  "({}: no lookarounds or backreferences) and are searched in {}.",
                                  what, pattern, re->error(), kRegexSyntaxUrl, searched_in));
}

// Patterns are searched in at most this many bytes of a name (64 KiB): RE2 is linear, but every
// pattern meets every distinct name, so a hostile export's megabyte names must not multiply that.
// A name past it is matched on its first 64 KiB ('$' then anchors there).
inline constexpr size_t kMaxMatchedBytes = size_t{64} << 10;

// True when `re` is found in `text` (std::regex_search's meaning), searched in the first
// kMaxMatchedBytes bytes only.
inline bool RegexSearch(std::string_view text, const RE2& re) {
  return RE2::PartialMatch(text.substr(0, kMaxMatchedBytes), re);
}

}  // namespace cpprof
