// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// How the export was captured: META_DATA_CAPTURE (nsys's options, the launched command) and
// DIAGNOSTIC_EVENT (nsys's own messages), read into model::CaptureInfo.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "model/capture.h"
#include "nsys/sqlite_db.h"

namespace cpprof::nsys {

// Reads the capture options and nsys's messages. An export without META_DATA_CAPTURE (a
// synthetic one) gives recorded=false and no error; without DIAGNOSTIC_EVENT, no messages.
// Errors only when a table that is present cannot be read.
StatusOr<model::CaptureInfo> ReadCaptureInfo(const Database& db);

// Standard base64 (RFC 4648, '+' and '/'), as nsys stores the functions-trace JSON. Whitespace
// is skipped and the '=' padding may be left out; anything else that is not in the alphabet, a
// lone trailing character, or data after padding gives nullopt.
std::optional<std::string> Base64Decode(std::string_view in);

// `text` with every absolute path ("/tmp/a/b.log") shortened to ".../b.log" and cut to at most
// `max_chars` characters (ending in "..." when cut).
std::string ElidePaths(std::string_view text, size_t max_chars = 240);

// The options of `info` as nsys flags ("--trace cuda,nvtx --cuda-memory-usage true ..."),
// reconstructed from the recorded values; "" when nothing was recorded.
std::string ReconstructFlags(const model::CaptureInfo& info);

// Whether an Info message of nsys matters to a user (something disabled, lost, skipped...).
bool IsNotableInfoMessage(std::string_view text);

}  // namespace cpprof::nsys
