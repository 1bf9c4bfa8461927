#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# bench/run_bench.sh on the GPU machine's host (16 cores, 128 GiB: warm page cache at 10 GB),
# with a static build carried there, its summary and log under OUT.
#   tools/device/bench_scale.sh BUILD_DIR OUT_DIR [SIZES] [ONLY]
# BUILD_DIR holds cpprof, bench/make_synthetic_export and bench/bare_scan (a -DCPPROF_STATIC=ON
# build, copied to .device-bench/build and carried). SIZES default "1"; ONLY default: every command.
# Example (device tool, carry [".device-bench"]):
#   bash tools/device/bench_scale.sh .device-bench/build "$OUT" 1
#   bash tools/device/bench_scale.sh .device-bench/build "$OUT" 10 'report --format json|stats nvtx|export'
set -uo pipefail
build=$1
out=$2
sizes=${3:-1}
only=${4:-.}
mkdir -p "$out"
command -v /usr/bin/time > /dev/null || { echo "bench_scale: /usr/bin/time is missing"; exit 1; }
tag=$(echo "$sizes" | tr ' ' '_')
WORK=/tmp/cpprof-bench-$tag SIZES=$sizes ONLY=$only REPEAT=${REPEAT:-1} \
  bash "$(dirname "$0")/../../bench/run_bench.sh" "$build" 2>&1 | tee "$out/bench-$tag.log"
cp "/tmp/cpprof-bench-$tag/summary.md" "$out/bench-$tag.md" 2> /dev/null
rm -rf "/tmp/cpprof-bench-$tag"
