// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
#include "doctor/nsys_version.h"

#include <fmt/format.h>

#include <cctype>

namespace cpprof::doctor {

std::string NsysVersion::ToString() const { return fmt::format("{}.{}.{}.{}", year, minor, patch, build); }
std::string NsysVersion::ShortString() const { return fmt::format("{}.{}", year, minor); }

std::optional<NsysVersion> ParseNsysVersion(std::string_view text) {
  auto digit = [&](size_t i) { return i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); };
  // The first "20YY.N" not inside a longer number; then up to two more ".N".
  for (size_t i = 0; i + 6 <= text.size(); ++i) {
    if (text.compare(i, 2, "20") != 0 || !digit(i + 2) || !digit(i + 3) || text[i + 4] != '.' || !digit(i + 5) ||
        (i > 0 && digit(i - 1))) {
      continue;
    }
    int parts[4] = {0, 0, 0, 0};
    size_t p = i;
    for (int k = 0; k < 4; ++k) {
      if (k > 0) {
        if (p >= text.size() || text[p] != '.' || !digit(p + 1)) break;
        ++p;
      }
      int v = 0;
      while (digit(p)) v = v * 10 + (text[p++] - '0');
      parts[k] = v;
    }
    return NsysVersion{parts[0], parts[1], parts[2], parts[3]};
  }
  return std::nullopt;
}

namespace {

// The oldest nsys release that supports each architecture. Nsight Systems ships in every CUDA
// toolkit, so an entry is "the release bundled with the first CUDA toolkit that supports that
// compute capability", from the component-version tables of the CUDA toolkit release notes
// (docs.nvidia.com/cuda/cuda-toolkit-release-notes), unless said otherwise. `recommended` is
// where support is mature: below it, the doctor warns. Keep sorted by capability.
// One row per architecture (clang-format would break the long rows apart).
// clang-format off
constexpr ArchSupport kTable[] = {
    // Pascal: supported by every nsys release with a CLI (2018.x); the floor of this table.
    {6, 0, "sm_60", "Pascal", {2018, 1, 0, 0}, {2018, 1, 0, 0}, "every nsys release", true},
    {6, 1, "sm_61", "Pascal", {2018, 1, 0, 0}, {2018, 1, 0, 0}, "every nsys release", true},
    // Volta, Turing: CUDA 10.1, the first toolkit to bundle nsys, ships 2019.1.
    {7, 0, "sm_70", "Volta", {2019, 1, 0, 0}, {2019, 1, 0, 0}, "CUDA 10.1 bundles nsys 2019.1", true},
    {7, 5, "sm_75", "Turing", {2019, 1, 0, 0}, {2019, 1, 0, 0}, "CUDA 10.1 bundles nsys 2019.1", true},
    // Ampere GA100 (A100): CUDA 11.0 bundles nsys 2020.3.
    {8, 0, "sm_80", "Ampere", {2020, 3, 0, 0}, {2020, 3, 0, 0}, "CUDA 11.0 bundles nsys 2020.3", true},
    // Ampere GA10x (A10, A40, RTX 30): CUDA 11.1 bundles nsys 2020.3.4.
    {8, 6, "sm_86", "Ampere", {2020, 3, 0, 0}, {2020, 3, 0, 0}, "CUDA 11.1 bundles nsys 2020.3", true},
    // Ada (L4, L40, RTX 40): CUDA 11.8 bundles nsys 2022.4.2.
    {8, 9, "sm_89", "Ada", {2022, 4, 0, 0}, {2022, 4, 0, 0}, "CUDA 11.8 bundles nsys 2022.4", true},
    // Hopper (H100, H200): CUDA 11.8, the first toolkit for sm_90, bundles nsys 2022.4.2. Seen
    // working on 2 x H200 with the nsys 2025.3.1 bundled in Nsight Compute (device-nsys.md).
    {9, 0, "sm_90", "Hopper", {2022, 4, 0, 0}, {2023, 1, 0, 0}, "CUDA 11.8 bundles nsys 2022.4", true},
    // Blackwell (B200, GB200): CUDA 12.8, the first toolkit for sm_100, bundles nsys 2024.6; the
    // profiling recipe (seed skill, step 1) asks for 2024.5+ and prefers 2025.x; a 2022.x does
    // not know Blackwell at all.
    {10, 0, "sm_100", "Blackwell", {2024, 5, 0, 0}, {2025, 1, 0, 0}, "CUDA 12.8 bundles nsys 2024.6; recipe: 2024.5+, prefer 2025.x", true},
    // Blackwell Ultra (B300, GB300): CUDA 12.9, the first toolkit for sm_103, bundles nsys 2025.1.
    {10, 3, "sm_103", "Blackwell", {2025, 1, 0, 0}, {2025, 1, 0, 0}, "CUDA 12.9 bundles nsys 2025.1", true},
    // Blackwell GB20x (RTX 50, RTX PRO 6000): CUDA 12.8, like sm_100; same recipe.
    {12, 0, "sm_120", "Blackwell", {2024, 5, 0, 0}, {2025, 1, 0, 0}, "CUDA 12.8 bundles nsys 2024.6; recipe: 2024.5+, prefer 2025.x", true},
};
// clang-format on

}  // namespace

std::optional<ArchSupport> ArchForComputeCap(int major, int minor) {
  const ArchSupport* best = nullptr;
  for (const auto& e : kTable) {
    if (e.major == major && e.minor <= minor) best = &e;
  }
  if (!best) return std::nullopt;
  ArchSupport s = *best;
  s.exact = best->minor == minor;
  return s;
}

}  // namespace cpprof::doctor
