#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Runs every test of cpprof: the format check, the C++ tests (unit, golden on real nsys exports, black-box on the
# built binary, and the fuzz targets on their kept and fixed inputs) in a normal build and again
# under AddressSanitizer + UndefinedBehaviorSanitizer, then the Python tests of the reference
# workload (cpfold) and of cpprof's helpers. The sanitizer tree leaves out the tests that check
# what a browser shows and what gets installed (labels browser, install): they run in the normal
# tree, and the code they drive is what the other tests run under the sanitizers.
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

build_and_test() {  # dir, ctest args (one word, may be empty), extra cmake args...
  local dir=$1 ctest_args=$2; shift 2
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" > "$dir.cmake.log" 2>&1 || {
    cat "$dir.cmake.log"; exit 1; }
  ninja -C "$dir"
  # shellcheck disable=SC2086
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" $ctest_args | tee "$dir/ctest.log"
  no_skips "$dir/ctest.log"
}

# A test skipped for a missing tool (chromium, torch, jupyter...) would leave CI green without
# it: every skip fails the run here, except those that depend on the data, not the machine (a
# real export without module ranges).
no_skips() {  # ctest log
  local skipped
  skipped=$(sed -n '/The following tests did not run:/,$p' "$1" | grep '(Skipped)' |
    grep -Ev 'ModulesReal\.RowsAddUpPerRank/(cpwork_trace|inline_main) ' || true)
  if [ -n "$skipped" ]; then
    echo "tools/test.sh: tests were skipped (a tool missing? run tools/install-deps.sh):"
    echo "$skipped"
    exit 1
  fi
}

echo "== C++ format (.clang-format)"
tools/check_format.sh

echo "== C++ build and tests"
mkdir -p build
# -g1 (line tables, no variables' locations): a third less compile time than -g on
# pipeline/run_reader.cc (26.3 s -> 16.9 s); test failures and the .deb's debug package still
# name functions and lines.
build_and_test build "" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
if [ "$sanitize" = 1 ]; then
  # -Og -g1: 28-40 % less compile time than -O1 -g1 under the sanitizers (run_reader.cc, readout.cc),
  # same checks, and reports still name functions and lines.
  echo "== C++ tests under ASan + UBSan"
  mkdir -p build-asan
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    build_and_test build-asan "--label-exclude browser|install" -DCPPROF_SANITIZE=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG"
fi

if [ -d python/tests ]; then
  echo "== Python tests (reference workload, helpers)"
  py=/usr/bin/python3
  "$py" -c 'import torch, pytest' 2>/dev/null || {
    echo "tools/test.sh: $py lacks torch or pytest: run tools/install-deps.sh"; exit 1; }
  # -rs names any skip; a skip fails the run, as above (the C++ build is done, so none is expected).
  (cd python && "$py" -m pytest -q -rs tests) | tee build/python-tests.log
  if grep -Eq "[0-9]+ skipped" build/python-tests.log; then
    echo "tools/test.sh: Python tests were skipped (see above): run tools/install-deps.sh"; exit 1
  fi
fi
