// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// libFuzzer target (issue 39, Deliver 6): damaged sweep states (OUT/sweep.json) through `cpprof
// sweep --render`, in process, under ASan + UBSan. The seed state is a real one
// ($CPPROF_FUZZ_SWEEP_SEED: tests/data/sweep/two-grids.json); each input is a program of damage
// applied to it (fuzz_support.h). A crash, a sanitizer report, an "internal error" or output on
// stdout with a failing exit code stops the run.
#include <filesystem>

#include "fuzz_support.h"

namespace {

nlohmann::json g_state;
std::string g_dir;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* seed = std::getenv("CPPROF_FUZZ_SWEEP_SEED");
  if (!seed) {
    std::cerr << "sweep_state_fuzzer: set CPPROF_FUZZ_SWEEP_SEED to a sweep.json (bench/fuzz.sh does)\n";
    std::exit(2);
  }
  g_state = nlohmann::json::parse(cpprof::fuzz::ReadAll(seed), nullptr, false);
  if (g_state.is_discarded()) {
    std::cerr << "sweep_state_fuzzer: cannot read " << seed << '\n';
    std::exit(2);
  }
  g_dir = cpprof::fuzz::Scratch("sweep");
  std::filesystem::create_directories(g_dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  cpprof::fuzz::WriteAll(g_dir + "/sweep.json", cpprof::fuzz::Damaged(g_state, in, 8));
  cpprof::fuzz::Run({"sweep", "--render", "--out", g_dir}, "sweep_state_fuzzer");
  return 0;
}
