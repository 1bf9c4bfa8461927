#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# One fuzz target through its standalone main (tests/fuzz/standalone_main.cc), as ctest runs it in
# every build tree (so CI runs it, under ASan + UBSan in the sanitizer tree): the target's kept
# crash inputs, then RUNS pseudo-random inputs from seed 1, in a private scratch folder that is
# removed afterwards. A finding leaves its input in FINDINGS/ and says how to keep it.
#
#   tests/fuzz/run_standalone.sh export|partial|sweep BINARY SOURCE_DIR FINDINGS RUNS
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: $0 export|partial|sweep BINARY SOURCE_DIR FINDINGS RUNS" >&2; exit 2; }
target=$1 binary=$2 src=$3 findings=$4 runs=$5
work=$(mktemp -d "${TMPDIR:-/tmp}/cpprof-fuzz-$target.XXXXXX")
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work  # the targets' scratch files
export CPPROF_FUZZ_SEED=$work/seed.sqlite
export CPPROF_FUZZ_SWEEP_SEED=$src/tests/data/sweep/two-grids.json
xz -dkc "$src/tests/data/real/cpwork-trace/cpwork-trace.sqlite.xz" > "$CPPROF_FUZZ_SEED"
case $target in
  export) prefix="" ;;
  partial) prefix=partial- ;;
  sweep) prefix=sweep- ;;
  *) echo "$0: no target '$target' (export, partial, sweep)" >&2; exit 2 ;;
esac
shopt -s nullglob
kept=("$src"/tests/fuzz/crashes/"$prefix"crash-*)
if [ "$target" = export ]; then kept+=("$src"/tests/fuzz/corpus/*); fi
if ! "$binary" --random "$runs" --seed 1 --artifact "$work/input" "${kept[@]}"; then
  if [ -s "$work/input" ] || [ -f "$work/input" ]; then
    mkdir -p "$findings"
    name="${prefix}crash-$(sha1sum < "$work/input" | cut -c1-40)"
    cp "$work/input" "$findings/$name"
    echo "$0: the $target target failed on the input now in $findings/$name:" \
      "fix it, then keep the input as tests/fuzz/crashes/$name (it is replayed from then on)" >&2
  fi
  exit 1
fi
