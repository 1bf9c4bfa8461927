// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// libFuzzer target (issue 39, Deliver 6): damaged partials through `cpprof merge`, in process,
// under ASan + UBSan. The seed partial is made at start from the seed export ($CPPROF_FUZZ_SEED,
// a real one: `report --partial`); each input is a program of damage applied to it
// (fuzz_support.h), merged alone or with the undamaged partial (forced: it is the same capture).
// A crash, a sanitizer report, an "internal error" or output on stdout with a failing exit code
// stops the run.
#include "fuzz_support.h"

namespace {

nlohmann::json g_partial;
std::string g_clean, g_damaged;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* seed = std::getenv("CPPROF_FUZZ_SEED");
  if (!seed) {
    std::cerr << "partial_fuzzer: set CPPROF_FUZZ_SEED to a small nsys SQLite export (bench/fuzz.sh does)\n";
    std::exit(2);
  }
  setenv("CPPROF_THREADS", "1", 1);
  g_clean = cpprof::fuzz::Scratch("clean.partial.json");
  g_damaged = cpprof::fuzz::Scratch("damaged.partial.json");
  if (cpprof::fuzz::Run({"report", "--partial", seed, "-o", g_clean, "--force"}, "partial_fuzzer") != 0) {
    std::cerr << "partial_fuzzer: cannot make a partial of " << seed << '\n';
    std::exit(2);
  }
  g_partial = nlohmann::json::parse(cpprof::fuzz::ReadAll(g_clean));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  cpprof::fuzz::WriteAll(g_damaged, cpprof::fuzz::Damaged(g_partial, in, 6));
  const char* const formats[] = {"text", "json", "csv", "md", "html"};
  std::vector<std::string> args = {"merge", "--format", in.PickValueInArray(formats), g_damaged};
  if (in.ConsumeBool()) args.insert(args.end(), {g_clean, "--force"});
  cpprof::fuzz::Run(args, "partial_fuzzer");
  return 0;
}
