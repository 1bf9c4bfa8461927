// Copyright 2026 cpprof developers
// SPDX-License-Identifier: Apache-2.0
// A libFuzzer target without libFuzzer: the main() that tests/CMakeLists.txt links each fuzz target
// with in the ordinary builds (gcc, and gcc's ASan + UBSan tree), so that CI runs every target on
// every commit without a clang build of its own (tests/fuzz/README.md). It runs each FILE given
// (the kept crash inputs, the seed corpus) once, then N inputs of pseudo-random bytes from a fixed
// seed: the same inputs on every machine, no coverage guidance (bench/fuzz.sh's libFuzzer runs
// are the search; this is the regression check).
//
//   export_fuzzer_standalone [--random N] [--seed S] [--max-len L] [--artifact PATH] [FILE|DIR ...]
//
// Before each input runs, its bytes are written to PATH (--artifact), so that the input a crash
// or a sanitizer report stopped at is on disk for the caller to keep (tests/fuzz/run_standalone.sh).
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

struct Options {
  uint64_t random = 0;
  uint64_t seed = 1;
  size_t max_len = 512;
  std::string artifact;
  std::vector<std::string> inputs;
};

[[noreturn]] void Usage(const char* self, const std::string& why) {
  std::cerr << self << ": " << why << "\nusage: " << self
            << " [--random N] [--seed S] [--max-len L] [--artifact PATH] [FILE|DIR ...]\n";
  std::exit(2);
}

uint64_t Number(const char* self, const char* flag, const char* text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-') {
    Usage(self, std::string(flag) + " takes a whole number, not '" + text + "'");
  }
  return v;
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if ((a == "--random" || a == "--seed" || a == "--max-len" || a == "--artifact") && !has_value) {
      Usage(argv[0], a + " needs a value");
    }
    if (a == "--random") {
      o.random = Number(argv[0], "--random", argv[++i]);
    } else if (a == "--seed") {
      o.seed = Number(argv[0], "--seed", argv[++i]);
    } else if (a == "--max-len") {
      o.max_len = Number(argv[0], "--max-len", argv[++i]);
    } else if (a == "--artifact") {
      o.artifact = argv[++i];
    } else if (a.rfind("--", 0) == 0) {
      Usage(argv[0], "unknown flag " + a);
    } else {
      o.inputs.push_back(a);
    }
  }
  return o;
}

// Files as given; a folder stands for its regular files, in name order (the same order everywhere).
std::vector<std::string> ExpandInputs(const char* self, const std::vector<std::string>& given) {
  std::vector<std::string> files;
  for (const auto& g : given) {
    std::error_code ec;
    if (std::filesystem::is_directory(g, ec)) {
      std::vector<std::string> in_dir;
      for (const auto& e : std::filesystem::directory_iterator(g, ec)) {
        if (e.is_regular_file()) in_dir.push_back(e.path().string());
      }
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (std::filesystem::is_regular_file(g, ec)) {
      files.push_back(g);
    } else {
      Usage(self, "no input file or folder '" + g + "'");
    }
  }
  return files;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void RunOne(const Options& o, const std::string& bytes) {
  if (!o.artifact.empty()) {
    std::ofstream f(o.artifact, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

// Input i of seed S depends on (S, i) alone: a failing input can be made again without the others.
std::string RandomInput(uint64_t seed, uint64_t i, size_t max_len) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(i),
                    static_cast<uint32_t>(i >> 32)};
  std::mt19937_64 rng(seq);
  std::string bytes(static_cast<size_t>(rng() % (max_len + 1)), '\0');
  for (auto& b : bytes) b = static_cast<char>(rng() & 0xff);
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  const std::vector<std::string> files = ExpandInputs(argv[0], o.inputs);
  LLVMFuzzerInitialize(&argc, &argv);
  for (const auto& f : files) RunOne(o, ReadFile(f));
  for (uint64_t i = 0; i < o.random; ++i) RunOne(o, RandomInput(o.seed, i, o.max_len));
  if (!o.artifact.empty()) std::remove(o.artifact.c_str());
  std::cout << argv[0] << ": " << files.size() << " kept input(s) and " << o.random << " random input(s) from seed "
            << o.seed << " ran without a finding\n";
  return 0;
}
