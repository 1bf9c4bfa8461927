#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# The map and reduce steps at cluster scale (issue 14, item 3): one synthetic export of one rank
# (bench/make_synthetic_export), its partial (`cpprof report --partial`: time, peak RSS, size),
# then the merge of RANKS copies of that partial (`cpprof merge`: time, peak RSS), as for a run of
# RANKS exports of that size. Prints one Markdown table; deletes what it made (KEEP=1 keeps it).
#
#   bench/merge_scale.sh [BUILD_DIR]            (default: build)
#
# Environment:
#   RANKS=512                   partials merged (64 nodes x 8 GPUs)
#   GEN_ARGS="--size-gb 1"      make_synthetic_export options for the one export (--ranks 1 is added);
#                               e.g. "--kernels 8000000 --nvtx-per-kernel 1 --runtime-per-kernel 1
#                               --osrt-per-kernel 0 --memusage-per-kernel 0.01" for a kernel-heavy one
#   WORK=/tmp/cpprof-merge-scale
set -euo pipefail
build=${1:-build}
ranks=${RANKS:-512}
gen_args=${GEN_ARGS:---size-gb 1}
work=${WORK:-/tmp/cpprof-merge-scale}
cpprof=$build/cpprof
gen=$build/bench/make_synthetic_export
for b in "$cpprof" "$gen"; do
  [ -x "$b" ] || { echo "missing $b: ninja -C $build cpprof make_synthetic_export" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
mkdir -p "$work/parts"
cleanup() { [ "${KEEP:-0}" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT

# /usr/bin/time -f "%e %M": seconds and peak KB of the command, on the last line of $1.
measure() {
  local log=$1
  shift
  /usr/bin/time -f "%e %M" -o "$log" "$@" > /dev/null 2>> "$work/stderr.log"
  tail -1 "$log"
}

# shellcheck disable=SC2086
"$gen" "$work/rank.sqlite" --ranks 1 $gen_args --quiet
export_bytes=$(stat -c %s "$work/rank.sqlite")
kernels=$(sqlite3 "$work/rank.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL" 2> /dev/null || echo "?")
read -r map_s map_kb < <(measure "$work/map.time" "$cpprof" report --partial "$work/rank.sqlite" -o "$work/parts/rep.0.partial.json")
partial_bytes=$(stat -c %s "$work/parts/rep.0.partial.json")
rm -f "$work/rank.sqlite"
for ((i = 1; i < ranks; i++)); do cp "$work/parts/rep.0.partial.json" "$work/parts/rep.$i.partial.json"; done
# --force: copies of one partial are one capture given many times, which merge refuses otherwise.
read -r merge_s merge_kb < <(measure "$work/merge.time" "$cpprof" merge --force "$work/parts" --format json -o "$work/merged.json")

echo "| export | kernels | map time | map peak RSS | partial | partials merged | merge time | merge peak RSS |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
printf "| %.2f GB (%s) | %s | %s s | %d MB | %d KB | %d | %s s | %d MB |\n" \
  "$(echo "$export_bytes / 1000000000" | bc -l)" "$gen_args" "$kernels" "$map_s" $((map_kb / 1024)) \
  $((partial_bytes / 1024)) "$ranks" "$merge_s" $((merge_kb / 1024))
