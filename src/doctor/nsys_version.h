// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// nsys release numbers, and which release first supports each GPU architecture.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace cpprof::doctor {

// An Nsight Systems release: year.minor.patch[.build], e.g. 2025.3.1.0.
struct NsysVersion {
  int year = 0, minor = 0, patch = 0, build = 0;

  auto operator<=>(const NsysVersion&) const = default;
  std::string ToString() const;     // "2025.3.1.0"
  std::string ShortString() const;  // "2025.3"
};

// Reads the release from `nsys --version` output ("NVIDIA Nsight Systems version
// 2025.3.1.0", "... 2022.4.2.1-df9881f") or from a bare "2024.5".
std::optional<NsysVersion> ParseNsysVersion(std::string_view text);

// What cpprof knows of a compute capability: its architecture and the oldest nsys release that
// supports it (below `minimum`: FAIL), and the release from which support is mature (below
// `recommended`: WARN).
struct ArchSupport {
  int major = 0, minor = 0;  // compute capability
  const char* sm;            // "sm_90"
  const char* arch;          // "Hopper"
  NsysVersion minimum;
  NsysVersion recommended;
  const char* source;  // where the entry comes from
  bool exact = true;   // false: the capability is not in the table; the nearest lower
                       // entry of the same major was used
};

// The table's entry for a compute capability; nullopt for one older than the table (< 6.0) or
// of an unknown major.
std::optional<ArchSupport> ArchForComputeCap(int major, int minor);

}  // namespace cpprof::doctor
