#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# `nsys stats` against `cpprof stats`, side by side, for each of the five reports cpprof
# implements, on one synthetic export shaped like a real CP capture (issue 13, item 6).
#
# Two steps:
#   1. here (any Linux machine with the repo):
#        bench/nsys_side_by_side.sh prepare [BUILD_DIR] [DEST]
#      BUILD_DIR (default build-static) is a static build
#        cmake -S . -B build-static -G Ninja -DCPPROF_STATIC=ON -DCPPROF_BUILD_TESTS=OFF
#        ninja -C build-static cpprof make_synthetic_export bare_scan
#      DEST (default /work/main/.device-bench, a folder git ignores) receives this script, the
#      schema, the stripped binaries and libdw1/libelf1 .debs (apt-get download; nsys's bundled
#      importer needs them on the GPU machines, see /work/shared/notes/device-nsys.md).
#   2. on the GPU machine, from the repo root, with DEST carried (device tool: carry
#      [".device-bench"]):
#        bash .device-bench/nsys_side_by_side.sh run [.device-bench]
#      It generates the export there (SIZE_GB, default 1), checks first on a tiny export that nsys
#      accepts the synthetic file, then for each report runs `cpprof stats --report R --format
#      csv` on a copy nsys never touches (B) and `nsys stats --report R --format csv` on a fresh
#      copy of its own (nsys writes helper tables into the file it reads, which speeds up a second
#      run: each nsys run here is its first on that file), compares the CSVs byte for byte and
#      prints one table. The table goes to $OUT (or OUT_DIR) as side_by_side.md; logs, diffs and
#      the CSVs' first lines, line counts and checksums as side_by_side.tar.gz.
#      Environment: SIZE_GB=1, NSYS_TIMEOUT=300 (seconds per nsys report), NSYS_PARALLEL=1 (the
#      five nsys runs at once, one core each: the machine has 16; 0 runs them one after another),
#      REPORTS="..." (a subset), NSYS=path.
set -uo pipefail
reports_all="cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum nvtx_sum nvtx_gpu_proj_sum"

prepare() {
  local build=${1:-build-static} dest=${2:-/work/main/.device-bench} here
  here=$(cd "$(dirname "$0")" && pwd)
  for b in cpprof bench/make_synthetic_export bench/bare_scan; do
    [ -x "$build/$b" ] || { echo "nsys_side_by_side: $build/$b is missing: configure with -DCPPROF_STATIC=ON and build it (see the top of this script)"; exit 1; }
  done
  mkdir -p "$dest/debs"
  cp "$here/nsys_side_by_side.sh" "$here/nsys-3.20.3-schema.sql" "$dest/"
  for b in cpprof bench/make_synthetic_export bench/bare_scan; do
    strip -o "$dest/$(basename "$b")" "$build/$b"
  done
  if ! ls "$dest"/debs/libdw1_*.deb "$dest"/debs/libelf1_*.deb > /dev/null 2>&1; then
    (cd "$dest/debs" && apt-get download libdw1 libelf1) || { echo "nsys_side_by_side: apt-get download libdw1 libelf1 failed"; exit 1; }
  fi
  du -sh "$dest"
  echo "ready: on the GPU machine run 'bash $(basename "$dest")/nsys_side_by_side.sh run $(basename "$dest")' from the repo root, carrying $(basename "$dest")"
}

secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", b - a}'; }

run() {
  local dir=${1:-.device-bench}
  local out=${OUT_DIR:-${OUT:-/tmp/side-by-side-out}}
  local work=${WORK:-/tmp/side-by-side}
  local size=${SIZE_GB:-1} nsys_timeout=${NSYS_TIMEOUT:-300} reports=${REPORTS:-$reports_all}
  mkdir -p "$out" "$work/logs"
  local log=$work/logs/run.log
  exec > >(tee "$log") 2>&1
  dir=$(cd "$dir" && pwd)
  local nsys=${NSYS:-$(command -v nsys || ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | sort -V | tail -1)}
  [ -x "$nsys" ] || { echo "nsys_side_by_side: no nsys found (set NSYS=path)"; exit 1; }
  local host_dir
  host_dir=$(ls -d "$(dirname "$(dirname "$nsys")")"/linux-desktop-glibc_*-x64 2>/dev/null | head -1)
  rm -rf /tmp/dl && mkdir -p /tmp/dl
  for d in "$dir"/debs/*.deb; do dpkg -x "$d" /tmp/dl; done
  export LD_LIBRARY_PATH=/tmp/dl/usr/lib/x86_64-linux-gnu:${host_dir}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f", $2/1048576}' /proc/meminfo) GiB; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  echo "nsys: $nsys ($("$nsys" --version 2>&1 | tail -1))"
  echo "cpprof: $("$dir/cpprof" --version 2>&1 | head -1)"
  local tiny=$work/tiny.sqlite master=$work/master.sqlite

  # 0. Does nsys accept the synthetic export at all?
  "$dir/make_synthetic_export" "$tiny" --kernels 3000 --quiet --schema "$dir/nsys-3.20.3-schema.sql"
  local ok=1 pids=()
  for r in $reports; do
    timeout 120 "$nsys" stats --report "$r" --format csv --output "$work/tiny-nsys" "$tiny" > "$work/logs/tiny-nsys-$r.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || ok=0; done
  for r in $reports; do
    "$dir/cpprof" stats --report "$r" --format csv "$tiny" > "$work/tiny-cpprof_$r.csv" 2> "$work/logs/tiny-cpprof-$r.err"
    if [ -f "$work/tiny-nsys_$r.csv" ] && cmp -s "$work/tiny-nsys_$r.csv" "$work/tiny-cpprof_$r.csv"; then s=identical; else s=DIFFERENT; fi
    echo "tiny export, $r: nsys $( [ -f "$work/tiny-nsys_$r.csv" ] && echo "wrote $(wc -l < "$work/tiny-nsys_$r.csv") lines" || echo "wrote nothing: $(tail -2 "$work/logs/tiny-nsys-$r.log" | tr '\n' ' ')"), CSV $s"
    [ "$s" = identical ] || diff "$work/tiny-nsys_$r.csv" "$work/tiny-cpprof_$r.csv" 2>&1 | head -6
  done
  if [ "$ok" = 0 ] && ! ls "$work"/tiny-nsys_*.csv > /dev/null 2>&1; then
    echo "nsys_side_by_side: nsys refused the synthetic export; its output:"
    tail -20 "$work"/logs/tiny-nsys-*.log
    tar -C "$work" -czf "$out/side_by_side.tar.gz" logs
    exit 2
  fi

  # 1. The export, one pristine copy for cpprof, a fresh copy per nsys run.
  local t0 t1
  t0=$EPOCHREALTIME
  local made
  made=$("$dir/make_synthetic_export" "$master" --size-gb "$size" --quiet --schema "$dir/nsys-3.20.3-schema.sql")
  t1=$EPOCHREALTIME
  echo "$made"
  echo "generated in $(secs "$t0" "$t1") s"
  for r in $reports; do cp "$master" "$work/nsys-$r.sqlite"; done
  cat "$master" "$work"/nsys-*.sqlite > /dev/null  # warm page cache for every copy

  # 2. cpprof, one report after another, on the copy nsys never touches.
  declare -A cp_s
  for r in $reports; do
    t0=$EPOCHREALTIME
    /usr/bin/time -f "%e s, %M KB peak RSS" -o "$work/logs/cpprof-$r.time" \
      "$dir/cpprof" stats --report "$r" --format csv "$master" > "$work/cpprof_$r.csv" 2> "$work/logs/cpprof-$r.err"
    t1=$EPOCHREALTIME
    cp_s[$r]=$(secs "$t0" "$t1")
    echo "cpprof $r: ${cp_s[$r]} s ($(cat "$work/logs/cpprof-$r.time" | tail -1))"
  done

  # 3. nsys, each report on its own fresh copy (its first run on that file).
  run_nsys() {
    local r=$1 a b
    a=$EPOCHREALTIME
    timeout "$nsys_timeout" /usr/bin/time -f "%e s, %M KB peak RSS" -o "$work/logs/nsys-$r.time" \
      "$nsys" stats --report "$r" --format csv --output "$work/nsys" "$work/nsys-$r.sqlite" \
      > "$work/logs/nsys-$r.log" 2>&1
    echo $? > "$work/logs/nsys-$r.rc"
    b=$EPOCHREALTIME
    secs "$a" "$b" > "$work/logs/nsys-$r.secs"
  }
  if [ "${NSYS_PARALLEL:-1}" = 1 ]; then
    local pids=()
    for r in $reports; do run_nsys "$r" & pids+=($!); done
    wait "${pids[@]}"  # (a bare wait would also wait for the tee of the log)
  else
    for r in $reports; do run_nsys "$r"; done
  fi

  # 4. The table.
  local md=$out/side_by_side.md
  {
    echo "Synthetic CP-shaped export (bench/make_synthetic_export --size-gb $size), $(awk -v b="$(stat -c %s "$master")" 'BEGIN{printf "%.2f", b/1e9}') GB: $(echo "$made" | grep -o '[0-9]* kernels, [0-9]* NVTX events'), $(nproc)-core GPU machine, warm page cache; nsys runs $( [ "${NSYS_PARALLEL:-1}" = 1 ] && echo "in parallel, one per report, each on its own fresh copy" || echo "one after another, each on its own fresh copy"); nsys timeout ${nsys_timeout} s."
    echo
    echo "| report | nsys stats s | cpprof stats s | speed-up | CSV identical? |"
    echo "|---|---:|---:|---:|---|"
    for r in $reports; do
      local ns rc same
      ns=$(cat "$work/logs/nsys-$r.secs")
      rc=$(cat "$work/logs/nsys-$r.rc")
      if [ "$rc" = 124 ]; then
        same="nsys timed out"
        ns=">$nsys_timeout"
      elif [ ! -f "$work/nsys_$r.csv" ]; then
        if [ -s "$work/cpprof_$r.csv" ]; then same="no: nsys wrote no CSV (rc $rc)"; else same="yes (both empty)"; fi
      elif cmp -s "$work/nsys_$r.csv" "$work/cpprof_$r.csv"; then
        same=yes
      else
        local nd
        nd=$(diff "$work/nsys_$r.csv" "$work/cpprof_$r.csv" | grep -c '^[<>]')
        same="no: $nd lines differ (of $(wc -l < "$work/nsys_$r.csv") / $(wc -l < "$work/cpprof_$r.csv"))"
        diff "$work/nsys_$r.csv" "$work/cpprof_$r.csv" | head -40 > "$work/logs/diff-$r.txt"
      fi
      local up
      up=$(awk -v n="$ns" -v c="${cp_s[$r]}" 'BEGIN{ if (n ~ /^>/) printf ">%.0fx", substr(n, 2) / c; else printf "%.1fx", n / c }')
      echo "| \`$r\` | $ns | ${cp_s[$r]} | $up | $same |"
    done
  } > "$md"
  echo
  cat "$md"
  for f in "$work"/logs/diff-*.txt; do [ -f "$f" ] && { echo "--- $f"; head -12 "$f"; }; done
  for r in $reports; do echo "nsys $r: $(tail -1 "$work/logs/nsys-$r.time" 2>/dev/null) rc $(cat "$work/logs/nsys-$r.rc")"; done
  # Logs, the CSVs' line counts and checksums and their first 200 lines back (whole CSVs can be
  # hundreds of MB: nvtx_sum has a row per distinct range text); the exports stay behind.
  mkdir -p "$work/csv"
  (cd "$work" && wc -l nsys_*.csv cpprof_*.csv && sha256sum nsys_*.csv cpprof_*.csv) > "$work/csv/summary.txt" 2>&1
  for f in "$work"/nsys_*.csv "$work"/cpprof_*.csv; do [ -f "$f" ] && head -200 "$f" > "$work/csv/$(basename "$f" .csv).head.csv"; done
  tar -C "$work" -czf "$out/side_by_side.tar.gz" logs csv
}

case ${1:-} in
  prepare) shift; prepare "$@" ;;
  run) shift; run "$@" ;;
  *) echo "usage: $0 prepare [BUILD_DIR] [DEST] | run [DIR]"; exit 2 ;;
esac
