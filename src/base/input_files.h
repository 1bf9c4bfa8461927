// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// The exports named on a command line: files, directories (the exports in them) and glob
// patterns (quoted, so that cpprof expands them: `cpprof report 'run/rep.*.sqlite'`), in a
// natural order (rep.2 before rep.10).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cpprof {

// Each argument in turn: an existing file is itself; a directory gives its files ending in
// `extension`, naturally sorted; a pattern with * ? or [ gives its matches, naturally sorted.
// A path that does not exist is kept as it is (the reader says what is wrong with it).
// Errors (kUsage): a directory without such files, a pattern that matches nothing, a file named
// twice.
StatusOr<std::vector<std::string>> ExpandInputs(const std::vector<std::string>& args,
                                                std::string_view extension = ".sqlite");

// Names that tell the paths apart, for tables of exports: each path's file name, or, where two
// paths share a file name, the fewest trailing path components that differ
// ("node0/inference/rep.sqlite" vs "node1/inference/rep.sqlite" -> "node0/inference/rep.sqlite"
// and "node1/inference/rep.sqlite", "a/x.sqlite" vs "b/x.sqlite" -> "a/x.sqlite", "b/x.sqlite").
std::vector<std::string> DistinctNames(const std::vector<std::string>& paths);

// What tells one file's content from another's without reading it all: its size and a 64-bit
// hash (FNV-1a) of its first and last MiB, as hex. A copy under another name has the same; ""
// when the file cannot be read (a FIFO or other non-regular file is not opened).
std::string ContentFingerprint(const std::string& path);

// a < b with digit runs compared as numbers: "rep.2" < "rep.10".
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace cpprof
