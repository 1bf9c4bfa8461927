#!/usr/bin/env bash
# Runs every test of cpprof: the format check, the C++ tests (unit, golden on real nsys exports, black-box on the
# built binary) in a normal build and again under AddressSanitizer + UndefinedBehaviorSanitizer,
# a short fixed run of the fuzz target (bench/fuzz.sh --ci), then the Python tests of the reference workload (cpfold) and of cpprof's helpers.
#
#   tools/test.sh              # everything (what CI runs)
#   tools/test.sh --no-sanitize
#
# Needs the packages that tools/install-deps.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=1
[ "${1:-}" = "--no-sanitize" ] && sanitize=0
jobs=$(nproc)

build_and_test() {  # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" > "$dir.cmake.log" 2>&1 || {
    cat "$dir.cmake.log"; exit 1; }
  ninja -C "$dir"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs"
}

echo "== C++ format (.clang-format)"
tools/check_format.sh

echo "== C++ build and tests"
mkdir -p build
build_and_test build
if [ "$sanitize" = 1 ]; then
  # -O1 -g1: a quarter of the compile time of -O2 -g under the sanitizers, same checks, and
  # reports still name functions and lines.
  echo "== C++ tests under ASan + UBSan"
  mkdir -p build-asan
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    build_and_test build-asan -DCPPROF_SANITIZE=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
fi

if [ "$sanitize" = 1 ]; then
  # Damaged exports through report, stats and export under libFuzzer (tests/fuzz/README.md): the
  # kept crash inputs, then a fixed number of runs from a fixed seed.
  echo "== Fuzz: damaged exports (bench/fuzz.sh --ci)"
  bench/fuzz.sh --ci
fi

if [ -d python/tests ]; then
  echo "== Python tests (reference workload, helpers)"
  py=/usr/bin/python3
  "$py" -c 'import torch, pytest' 2>/dev/null || {
    echo "tools/test.sh: $py lacks torch or pytest: run tools/install-deps.sh"; exit 1; }
  (cd python && "$py" -m pytest -q tests)   # python/pyproject.toml: pythonpath, options
fi
