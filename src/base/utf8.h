// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// UTF-8 checks for names read from exports: names are data, and a byte that is not UTF-8 must
// never crash an output format (nlohmann::json throws on one) nor reach a terminal raw.
#pragma once

#include <string>
#include <string_view>

namespace cpprof {

// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool IsValidUtf8(std::string_view s);

// `s` with every byte that does not start a well-formed sequence replaced by U+FFFD.
std::string ToValidUtf8(std::string_view s);

}  // namespace cpprof
