#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# On a GPU machine with nsys: `nsys stats` against `cpprof stats` on a large synthetic export in
# the real schema: the same CSV (diffed), and the wall time of each.
#   tools/device/stats_speed.sh BUILD_DIR OUT_DIR [KERNELS]
# BUILD_DIR holds cpprof and bench/make_synthetic_export (e.g. a -DCPPROF_STATIC=ON build).
set -uo pipefail
build=$1
out=$2
kernels=${3:-5000000}
mkdir -p "$out"
nsys=${NSYS:-$(command -v nsys || ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | sort -V | tail -1)}
work=/tmp/cpprof-stats-speed
mkdir -p "$work"
db=$work/synthetic.sqlite
"$build/bench/make_synthetic_export" "$db" --kernels "$kernels" --runtime $((kernels / 5)) --nvtx $((kernels / 5)) --ranks 4 \
  --schema "$(dirname "$0")/../../bench/nsys-3.20.3-schema.sql"
ls -la "$db"
cat "$db" > /dev/null
for r in cuda_gpu_kern_sum cuda_gpu_mem_time_sum; do
  t0=$EPOCHREALTIME
  "$nsys" stats --report "$r" --format csv --output "$work/nsys" "$db" > "$work/nsys-$r.log" 2>&1
  t1=$EPOCHREALTIME
  "$build/cpprof" stats --report "$r" --format csv "$db" > "$work/cpprof_$r.csv" 2> "$work/cpprof-$r.err"
  t2=$EPOCHREALTIME
  nsys_s=$(awk "BEGIN{print $t1 - $t0}")
  cpprof_s=$(awk "BEGIN{print $t2 - $t1}")
  [ -f "$work/nsys_$r.csv" ] || : > "$work/nsys_$r.csv"  # nsys writes no file for empty results
  if cmp -s "$work/nsys_$r.csv" "$work/cpprof_$r.csv"; then same=identical; else same=DIFFERENT; fi
  echo "$r: nsys stats ${nsys_s}s, cpprof stats ${cpprof_s}s, speed-up $(awk "BEGIN{printf \"%.1f\", $nsys_s / $cpprof_s}")x, CSV $same" | tee -a "$out/stats_speed.txt"
  tail -3 "$work/nsys-$r.log" >> "$out/stats_speed.txt"
  diff "$work/nsys_$r.csv" "$work/cpprof_$r.csv" | head -20 >> "$out/stats_speed.txt"
done
