#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Fuzzes cpprof's hostile inputs for MINUTES (default 5) under AddressSanitizer +
# UndefinedBehaviorSanitizer with libFuzzer (clang from apt), from a fixed seed. Targets
# (tests/fuzz/README.md):
#   export       damaged nsys exports through report, stats and export, and multi-export sets
#   partial      damaged partials through merge
#   sweep        damaged sweep states (OUT/sweep.json) through sweep --render
#   contract     damaged input contracts through cpprof_workload (Python, tests/fuzz/contract_fuzz.py)
#
#   bench/fuzz.sh 30           # the issue-19 acceptance run (the export target)
#   bench/fuzz.sh 15 partial   # one target
#   FUZZ_SEED=7 bench/fuzz.sh 5
#   CPPROF_FUZZ_THREADS=16 bench/fuzz.sh 10   # 16 worker threads: NVTX read by 4 readers in parts of
#                                             # 7 rowids (default: one thread)
#   bench/fuzz.sh --replay     # every kept crash input once, per target (regression check)
#   bench/fuzz.sh --ci         # --replay, then 2000 runs of each target from seed 1 (a check
#                              # before a commit; CI runs the targets through ctest instead:
#                              # tests/fuzz/standalone_main.cc)
#
# A crash, sanitizer report, hang (-timeout) or "internal error" stops the run and leaves the input
# in tests/fuzz/crashes/ (named crash-*, partial-crash-*, sweep-crash-*, contract-*): commit it (a
# few hundred bytes), it is replayed by --replay from then on. The build is build-fuzz/ (separate
# from build/).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-fuzz
# The contract target needs torch: the apt python3 (tools/install-deps.sh), not the first python3 on PATH.
py=/usr/bin/python3
declare -A binary=([export]=export_fuzzer [partial]=partial_fuzzer [sweep]=sweep_state_fuzzer)
declare -A prefix=([export]="" [partial]=partial- [sweep]=sweep-)
# -O1 -g1 as in tools/test.sh's sanitizer build: a quarter of the compile time, the same checks.
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCPPROF_SANITIZE=ON \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DCPPROF_FUZZ=ON -DCPPROF_BUILD_TESTS=OFF > "$build.cmake.log" 2>&1 || { cat "$build.cmake.log"; exit 1; }
ninja -C "$build" ${FUZZ_JOBS:+-j "$FUZZ_JOBS"} export_fuzzer partial_fuzzer sweep_state_fuzzer
# The targets' scratch files go to a private folder, removed at the end.
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/cpprof-fuzz.XXXXXX")
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
seed="$build/fuzz-seed.sqlite"
[ -s "$seed" ] || xz -dkc tests/data/real/cpwork-trace/cpwork-trace.sqlite.xz > "$seed"
export CPPROF_FUZZ_SEED="$PWD/$seed"
export CPPROF_FUZZ_SWEEP_SEED="$PWD/tests/data/sweep/two-grids.json"
replay() {
  shopt -s nullglob
  local t inputs
  for t in export partial sweep; do
    inputs=(tests/fuzz/crashes/"${prefix[$t]}"crash-*)
    [ "$t" = export ] && inputs+=(tests/fuzz/corpus/*)
    [ ${#inputs[@]} -eq 0 ] && { echo "fuzz: $t: no kept inputs to replay"; continue; }
    "$build/${binary[$t]}" -runs=1 "${inputs[@]}"
  done
}
run() {  # TARGET, then libFuzzer's flags
  local t=$1
  shift
  "$build/${binary[$t]}" -max_len=512 -timeout=120 -rss_limit_mb=6144 -print_final_stats=1 \
    -artifact_prefix=tests/fuzz/crashes/"${prefix[$t]}" "$@"
}
if [ "${1:-}" = "--replay" ]; then
  replay
  exit
fi
if [ "${1:-}" = "--ci" ]; then
  replay
  ci_corpus=$TMPDIR/ci-corpus
  # A crash leaves its input in tests/fuzz/crashes/ (the log says which): commit it with the fix.
  for t in export partial sweep; do
    mkdir -p "$ci_corpus/$t"
    run "$t" -runs="${FUZZ_RUNS:-2000}" -seed=1 "$ci_corpus/$t" 2>&1 | tail -20
    [ "${PIPESTATUS[0]}" = 0 ] || exit 1
  done
  "$py" tests/fuzz/contract_fuzz.py --runs "${FUZZ_RUNS:-2000}" --seed 1
  exit
fi
minutes=${1:-5}
target=${2:-export}
if [ "$target" = contract ]; then
  "$py" tests/fuzz/contract_fuzz.py --minutes "$minutes" --seed "${FUZZ_SEED:-1}"
  exit
fi
[ -n "${binary[$target]:-}" ] || { echo "fuzz: no target '$target' (export, partial, sweep, contract)"; exit 2; }
corpus="$build/fuzz-corpus${prefix[$target]:+-$target}"
mkdir -p "$corpus" tests/fuzz/crashes
seeds=()
[ "$target" = export ] && seeds=(tests/fuzz/corpus)
run "$target" -max_total_time=$((minutes * 60)) -seed="${FUZZ_SEED:-1}" "$corpus" "${seeds[@]}"
