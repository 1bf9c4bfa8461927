#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Fuzzes damaged nsys exports through report, stats and export for MINUTES (default 5) under
# AddressSanitizer + UndefinedBehaviorSanitizer with libFuzzer (clang from apt), from a fixed seed.
#
#   bench/fuzz.sh 30           # the issue-19 acceptance run
#   FUZZ_SEED=7 bench/fuzz.sh 5
#   CPPROF_FUZZ_THREADS=16 bench/fuzz.sh 10   # 16 worker threads: NVTX read by 4 readers in parts of
#                                             # 7 rowids (default: one thread)
#   bench/fuzz.sh --replay     # every kept crash input once (regression check)
#   bench/fuzz.sh --ci         # --replay, then a fixed number of runs from seed 1 (tools/test.sh: the
#                              # same inputs on every machine, about a minute, not a time limit)
#
# The target is tests/fuzz/export_fuzzer.cc; inputs are programs of damage applied to a copy of
# tests/data/real/cpwork-trace. A crash, sanitizer report, hang (-timeout) or "internal error"
# stops the run and leaves the input in tests/fuzz/crashes/: commit it (a few hundred bytes), it is
# replayed by --replay from then on. The build is build-fuzz/ (separate from build/).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-fuzz
# -O1 -g1 as in tools/test.sh's sanitizer build: a quarter of the compile time, the same checks.
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCPPROF_SANITIZE=ON \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DCPPROF_FUZZ=ON -DCPPROF_BUILD_TESTS=OFF > "$build.cmake.log" 2>&1 || { cat "$build.cmake.log"; exit 1; }
ninja -C "$build" ${FUZZ_JOBS:+-j "$FUZZ_JOBS"} export_fuzzer
seed="$build/fuzz-seed.sqlite"
[ -s "$seed" ] || xz -dkc tests/data/real/cpwork-trace/cpwork-trace.sqlite.xz > "$seed"
export CPPROF_FUZZ_SEED="$PWD/$seed"
replay() {
  shopt -s nullglob
  local inputs=(tests/fuzz/crashes/crash-* tests/fuzz/corpus/*)
  [ ${#inputs[@]} -eq 0 ] && { echo "fuzz: no kept inputs to replay"; return 0; }
  "$build/export_fuzzer" -runs=1 "${inputs[@]}"
}
if [ "${1:-}" = "--replay" ]; then
  replay
  exit
fi
if [ "${1:-}" = "--ci" ]; then
  replay
  ci_corpus=$(mktemp -d)
  trap 'rm -rf "$ci_corpus"' EXIT
  # A crash leaves its input in tests/fuzz/crashes/ (the log says which): commit it with the fix.
  "$build/export_fuzzer" -runs="${FUZZ_RUNS:-2000}" -seed=1 -max_len=512 -timeout=120 -rss_limit_mb=6144 \
    -print_final_stats=1 -artifact_prefix=tests/fuzz/crashes/ "$ci_corpus" 2>&1 | tail -40
  exit "${PIPESTATUS[0]}"
fi
minutes=${1:-5}
corpus="$build/fuzz-corpus"
mkdir -p "$corpus" tests/fuzz/crashes
exec "$build/export_fuzzer" -max_total_time=$((minutes * 60)) -seed="${FUZZ_SEED:-1}" -max_len=512 -timeout=120 \
  -rss_limit_mb=6144 -print_final_stats=1 -artifact_prefix=tests/fuzz/crashes/ "$corpus" tests/fuzz/corpus
