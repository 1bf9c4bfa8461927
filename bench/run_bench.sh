#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Speed and memory of every cpprof command at scale (issue 13, item 5), side by side for each size,
# in one run. For each size it generates two synthetic exports shaped like a real CP capture
# (bench/make_synthetic_export: A, and B with another seed and a slow rank, for `diff`), then for
# each command measures the wall time (best of REPEAT, warm page cache) and the peak RSS of that
# run (/usr/bin/time), the time of ONE bare SQLite scan of the columns the command reads
# (bench/bare_scan MODE; measured once per mode and size: the report formats share one), their
# ratio and RSS / file size, and checks the targets:
#   time <= 1.5 x the bare scan;  peak RSS <= 25 % of the file (<= 10 % from 10 GB on).
# (A time over 1.5 x but within 0.1 s of the scan is "PASS*": start-up and timer resolution.)
# (`diff` reads two exports: its scan reads both and its RSS is compared with their sum.)
# The exports are made in WORK and deleted after each size (KEEP=1 keeps them); at most two
# exports of one size exist at a time (2 x 10 GB for SIZES=10), and the run stops before
# generating if the disk has too little room.
#
#   bench/run_bench.sh [BUILD_DIR]                 (default: build)
#
# Environment:
#   SIZES="1 10"     export sizes in GB (10^9 bytes)       QUICK=1   SIZES=0.2, REPEAT=1
#   REPEAT=3         runs per command below 5 GB (best)    REPEAT_BIG=1  from 5 GB on
#   WORK=/tmp/cpprof-bench   where exports and logs go     KEEP=1    keep the exports
#   ONLY=regex       only the commands whose label matches (e.g. ONLY='stats|export')
#   TIMEOUT=1200     seconds per command run (a run over it is a FAIL, "timeout")
#   MEM_CAP_GB=N     address-space cap per command run (default: 70 % of MemAvailable);
#                    a run killed by it is a FAIL, "over the cap"
#   GEN_ARGS="..."   extra make_synthetic_export options (e.g. "--ranks 8 --osrt-per-kernel 300")
#   CPPROF=path      the cpprof to measure (default: BUILD_DIR/cpprof)
# Prints a table per size as it goes, then one Markdown table of all sizes side by side (also
# written to WORK/summary.md) to paste into the README.
set -uo pipefail
build=${1:-build}
if [ "${QUICK:-0}" = 1 ]; then
  sizes=${SIZES:-0.2}
  repeat=${REPEAT:-1}
else
  sizes=${SIZES:-"1 10"}
  repeat=${REPEAT:-3}
fi
repeat_big=${REPEAT_BIG:-1}
work=${WORK:-/tmp/cpprof-bench}
keep=${KEEP:-0}
only=${ONLY:-.}
timeout_s=${TIMEOUT:-1200}
cpprof=${CPPROF:-$build/cpprof}
gen=$build/bench/make_synthetic_export
bare=$build/bench/bare_scan
for b in "$cpprof" "$gen" "$bare"; do
  [ -x "$b" ] || { echo "run_bench: $b is missing: build first (ninja -C $build cpprof make_synthetic_export bare_scan)"; exit 1; }
done
[ -x /usr/bin/time ] || { echo "run_bench: /usr/bin/time is missing: apt-get install time"; exit 1; }
avail_kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
mem_cap_kb=$(awk -v g="${MEM_CAP_GB:-0}" -v a="$avail_kb" 'BEGIN{printf "%d", (g > 0) ? g * 1048576 : a * 0.7}')
mkdir -p "$work"
schema_dir=$(cd "$(dirname "$0")" && pwd)
results=$work/results.tsv  # size, label, seconds, rss_kb, scan_s, file_bytes, status
: > "$results"

# The commands: label | bare_scan mode | cpprof arguments (A and B stand for the exports).
commands=(
  "report --format text|report|report --format text A"
  "report --format md|report|report --format md A"
  "report --format json|report|report --format json A"
  "report --format csv|report|report --format csv A"
  "report --format html|report|report --format html A"
  "stats cuda_gpu_kern_sum|kern_sum|stats --report cuda_gpu_kern_sum --format csv A"
  "stats cuda_gpu_mem_time_sum|mem_time_sum|stats --report cuda_gpu_mem_time_sum --format csv A"
  "stats cuda_gpu_mem_size_sum|mem_size_sum|stats --report cuda_gpu_mem_size_sum --format csv A"
  "stats nvtx_sum|nvtx_sum|stats --report nvtx_sum --format csv A"
  "stats nvtx_gpu_proj_sum|nvtx_gpu_proj_sum|stats --report nvtx_gpu_proj_sum --format csv A"
  "diff A B|diff|diff A B"
  "export (chrome trace)|export|export A"
  "export --flows|export_flows|export --flows A"
)

# run_once OUTFILE CMD...: one run under the caps; prints "seconds rss_kb status"
run_once() {
  local tf=$work/time.txt rc
  rm -f "$tf"
  ( ulimit -v "$mem_cap_kb"; exec /usr/bin/time -f "%e %M" -o "$tf" timeout "$timeout_s" "$@" ) > /dev/null 2> "$work/stderr.txt"
  rc=$?
  local t m
  read -r t m < <(tail -1 "$tf" 2>/dev/null || echo "- -")
  if [ "$rc" = 124 ]; then echo "$timeout_s ${m:--} timeout"; return; fi
  if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then  # diff exits 3 when the work differs: that is an answer
    if grep -qiE "bad_alloc|cannot allocate|out of memory" "$work/stderr.txt"; then echo "${t:--} ${m:--} over-the-cap"
    else echo "${t:--} ${m:--} rc=$rc"; fi
    return
  fi
  echo "$t $m ok"
}
# best of N: "seconds rss_kb status" of the fastest run
measure() {
  local n=$1 best="" rss="" status=ok
  shift
  for _ in $(seq "$n"); do
    read -r t m s < <(run_once "$@")
    if [ "$s" != ok ]; then echo "$t $m $s"; return; fi
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; rss=$m; fi
  done
  echo "$best $rss $status"
}

fmt_gb() { awk "BEGIN{printf \"%.2f\", $1/1e9}"; }
echo "cpprof benchmark: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f", $2/1048576}' /proc/meminfo) GiB RAM, sizes: $sizes GB, best of $repeat (of $repeat_big from 5 GB), warm page cache"
echo "cpprof: $cpprof ($("$cpprof" --version 2>/dev/null || echo "?"))"
for size in $sizes; do
  a=$work/synthetic-${size}gb-a.sqlite
  b=$work/synthetic-${size}gb-b.sqlite
  need_kb=$(awk "BEGIN{printf \"%d\", $size * 2.1 * 1e9 / 1024}")
  free_kb=$(df -Pk "$work" | awk 'NR==2 {print $4}')
  for f in "$a" "$b"; do [ -f "$f" ] && free_kb=$((free_kb + $(stat -Lc %s "$f") / 1024)); done
  if [ "$need_kb" -gt "$free_kb" ] || awk "BEGIN{exit !($size * 2.1 > 25)}"; then
    echo "run_bench: $size GB needs $((need_kb / 1048576)) GiB of disk for two exports; $((free_kb / 1048576)) GiB free in $work (limit 25 GB): skipped"
    continue
  fi
  n=$repeat
  awk "BEGIN{exit !($size >= 5)}" && n=$repeat_big
  declare -A scan_of=()
  exports=("$a:1")
  [[ "diff A B" =~ $only ]] && exports+=("$b:2 --slow-rank 1")  # B is only for diff
  for f in "${exports[@]}"; do
    path=${f%%:*}
    args=${f#*:}
    if [ ! -f "$path" ]; then
      t0=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$gen" "$path" --size-gb "$size" --seed $args --quiet ${GEN_ARGS:-} --schema "$schema_dir/nsys-3.20.3-schema.sql" \
        | sed 's/^/  /' || { echo "run_bench: generating $path failed"; exit 1; }
      echo "  (generated in $(awk "BEGIN{printf \"%.0f\", $(date +%s.%N) - $t0}") s)"
    fi
  done
  size_a=$(stat -Lc %s "$a")
  size_b=$(stat -Lc %s "$b" 2>/dev/null || echo 0)
  echo
  echo "== $size GB: A = $(fmt_gb "$size_a") GB, B = $(fmt_gb "$size_b") GB; best of $n"
  printf '  %-28s %9s %9s %7s %10s %8s  %s\n' command seconds "scan s" "x scan" "RSS MB" "RSS/file" "time / memory"
  for c in "${commands[@]}"; do
    IFS='|' read -r label mode cmdline <<< "$c"
    [[ "$label" =~ $only ]] || continue
    files=$size_a
    scan_args=("$a")
    if [ "$mode" = diff ]; then files=$((size_a + size_b)); scan_args=("$a" "$b"); fi
    cat "${scan_args[@]}" > /dev/null  # warm the page cache
    # One bare scan per mode and size (the report formats share theirs).
    if [ -z "${scan_of[$mode]:-}" ]; then
      scan_of[$mode]=$(measure "$n" "$bare" "$mode" "${scan_args[@]}")
    fi
    read -r ts ms ss <<< "${scan_of[$mode]}"
    args=()
    for w in $cmdline; do
      case $w in A) args+=("$a") ;; B) args+=("$b") ;; *) args+=("$w") ;; esac
    done
    read -r t m s < <(measure "$n" "$cpprof" "${args[@]}")
    pct_target=25
    awk "BEGIN{exit !($size >= 10)}" && pct_target=10
    verdict=$(awk -v t="$t" -v ts="$ts" -v m="$m" -v f="$files" -v p="$pct_target" -v s="$s" 'BEGIN{
      if (s != "ok") { printf "FAIL (%s) / -", s; exit }
      tv = (ts > 0 && t / ts <= 1.5) ? "PASS" : (t - ts <= 0.1 ? "PASS*" : "FAIL");
      mv = (m * 1024 / f * 100 <= p) ? "PASS" : "FAIL";
      printf "%s / %s", tv, mv }')
    printf '  %-28s %9s %9s %7s %10s %8s  %s\n' "$label" "$t" "$ts" \
      "$(awk -v t="$t" -v ts="$ts" 'BEGIN{ if (ts > 0 && t != "-") printf "%.2f", t / ts; else print "-" }')" \
      "$(awk -v m="$m" 'BEGIN{ if (m != "-") printf "%.0f", m / 1024; else print "-" }')" \
      "$(awk -v m="$m" -v f="$files" 'BEGIN{ if (m != "-") printf "%.1f%%", m * 1024 / f * 100; else print "-" }')" \
      "$verdict (<= 1.5x, <= $pct_target%)"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$label" "$t" "$m" "$ts" "$files" "$s" "$pct_target" >> "$results"
    [ "$s" = ok ] || sed 's/^/    stderr: /' "$work/stderr.txt" | tail -3
  done
  if [ "$keep" != 1 ]; then rm -f "$a" "$b"; fi
done

# One Markdown table, every size side by side.
summary=$work/summary.md
awk -F'\t' -v sizes="$sizes" '
  { key = $1 SUBSEP $2; t[key] = $3; m[key] = $4; ts[key] = $5; f[key] = $6; s[key] = $7; p[key] = $8
    if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
  END {
    ns = split(sizes, sz, " ")
    hdr = "| command |"; sep = "|---|"
    for (i = 1; i <= ns; i++) { hdr = hdr " " sz[i] " GB: s (x scan) | " sz[i] " GB: peak RSS (% of file) |"; sep = sep "---:|---:|" }
    print hdr; print sep
    for (j = 1; j <= n; j++) {
      line = "| `" order[j] "` |"
      for (i = 1; i <= ns; i++) {
        k = sz[i] SUBSEP order[j]
        if (!(k in t)) { line = line " - | - |"; continue }
        if (s[k] != "ok") { line = line " FAIL: " s[k] " | " (m[k] == "-" ? "-" : sprintf("%.0f MB", m[k] / 1024)) " |"; continue }
        r = ts[k] > 0 ? t[k] / ts[k] : 0; pc = m[k] * 1024 / f[k] * 100
        line = line sprintf(" %.2f (%.2fx) %s | %.0f MB (%.1f%%) %s |", t[k], r,
                            r <= 1.5 ? "PASS" : (t[k] - ts[k] <= 0.1 ? "PASS*" : "**FAIL**"),
                            m[k] / 1024, pc, pc <= p[k] ? "PASS" : "**FAIL**")
      }
      print line
    }
  }' "$results" > "$summary"
echo
echo "Summary (targets: time <= 1.5x one bare scan of the columns the command reads; peak RSS <= 25% of the"
echo "file, <= 10% from 10 GB on; diff: both files; PASS*: over 1.5x but within 0.1 s of the scan, where process"
echo "start-up and /usr/bin/time's 10 ms resolution dominate). Also in $summary:"
echo
cat "$summary"
