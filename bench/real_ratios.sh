#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# The shape of the real exports in tests/data/real, per kernel: the ratios make_synthetic_export's
# defaults come from (bench/README.md). Needs xz and the sqlite3 CLI.
#   bench/real_ratios.sh [WORK_DIR]      (default /tmp/cpprof-real-ratios; decompressed there)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/cpprof-real-ratios}
mkdir -p "$work"
count() { sqlite3 "$1" "SELECT count(*) FROM $2" 2>/dev/null || echo 0; }
printf '| export | MB | kernels | NVTX/k | runtime/k | OS runtime/k | mem usage/k | memcpy/k | memset/k | NCCL kernels %% | ranks | streams/rank | distinct NVTX text %% |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for xz in "$root"/tests/data/real/*/*.sqlite.xz; do
  name=$(basename "$xz" .sqlite.xz)
  db=$work/$name.sqlite
  [ -f "$db" ] || xz -dkc "$xz" > "$db"
  k=$(count "$db" CUPTI_ACTIVITY_KIND_KERNEL)
  [ "$k" -gt 0 ] || continue
  nv=$(count "$db" NVTX_EVENTS)
  rt=$(count "$db" CUPTI_ACTIVITY_KIND_RUNTIME)
  os=$(count "$db" OSRT_API)
  mu=$(count "$db" CUDA_GPU_MEMORY_USAGE_EVENTS)
  mc=$(count "$db" CUPTI_ACTIVITY_KIND_MEMCPY)
  ms=$(count "$db" CUPTI_ACTIVITY_KIND_MEMSET)
  nccl=$(sqlite3 "$db" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName WHERE s.value LIKE 'nccl%'")
  ranks=$(sqlite3 "$db" "SELECT count(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL")
  streams=$(sqlite3 "$db" "SELECT count(DISTINCT globalPid || ':' || streamId) FROM CUPTI_ACTIVITY_KIND_KERNEL")
  distinct=$(sqlite3 "$db" "SELECT count(DISTINCT coalesce(text, textId)) FROM NVTX_EVENTS")
  awk -v n="$name" -v b="$(stat -c %s "$db")" -v k="$k" -v nv="$nv" -v rt="$rt" -v os="$os" -v mu="$mu" -v mc="$mc" \
      -v ms="$ms" -v nc="$nccl" -v r="$ranks" -v st="$streams" -v d="$distinct" 'BEGIN{
    printf "| %s | %.0f | %d | %.1f | %.1f | %.1f | %.2f | %.2f | %.3f | %.1f | %d | %.1f | %.0f |\n", n, b / 1048576, k,
      nv / k, rt / k, os / k, mu / k, mc / k, ms / k, 100 * nc / k, r, st / r, nv ? 100 * d / nv : 0 }'
done
