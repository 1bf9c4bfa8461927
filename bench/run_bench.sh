#!/usr/bin/env bash
# Speed and memory of cpprof at scale (issue "foundation", item 7). Prints, in one run, the time
# and peak RSS of `cpprof report` and `cpprof stats --report cuda_gpu_kern_sum` on a large
# synthetic export in the real nsys schema, the time of one bare SQLite scan of the columns each
# reads, and the ratios. Targets: report <= 1.5x its bare scan; peak RSS <= 25% of the file size.
#
#   bench/run_bench.sh [BUILD_DIR] [WORK_DIR]      (defaults: build, /tmp/cpprof-bench)
#   KERNELS=5000000 RUNTIME=1000000 NVTX=1000000 RANKS=4 REPEAT=3 bench/run_bench.sh
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/cpprof-bench}
kernels=${KERNELS:-5000000}
runtime=${RUNTIME:-1000000}
nvtx=${NVTX:-1000000}
ranks=${RANKS:-4}
repeat=${REPEAT:-3}
for b in cpprof bench/make_synthetic_export bench/bare_scan; do
  [ -x "$build/$b" ] || { echo "run_bench: $build/$b is missing: build first (ninja -C $build)"; exit 1; }
done
[ -x /usr/bin/time ] || { echo "run_bench: /usr/bin/time is missing: apt-get install time"; exit 1; }
mkdir -p "$work"
db="$work/synthetic-${kernels}k${ranks}r-v2.sqlite"
if [ ! -f "$db" ]; then
  echo "generating $db ..."
  "$build/bench/make_synthetic_export" "$db" --kernels "$kernels" --runtime "$runtime" --nvtx "$nvtx" --ranks "$ranks"
fi
size=$(stat -c %s "$db")
cat "$db" > /dev/null  # warm the page cache: every measurement below reads from memory

# best-of-N wall time and the peak RSS of that run: "seconds kilobytes"
measure() {
  local best="" rss=""
  for _ in $(seq "$repeat"); do
    /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" > /dev/null
    read -r t m < "$work/time.txt"
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; rss=$m; fi
  done
  echo "$best $rss"
}

read -r t_bare_r m_bare_r < <(measure "$build/bench/bare_scan" report "$db")
read -r t_report m_report < <(measure "$build/cpprof" report --format json "$db")
read -r t_report1 m_report1 < <(CPPROF_THREADS=1 measure "$build/cpprof" report --format json "$db")
read -r t_bare_k m_bare_k < <(measure "$build/bench/bare_scan" kern_sum "$db")
read -r t_stats m_stats < <(measure "$build/cpprof" stats --report cuda_gpu_kern_sum --format csv "$db")

mb() { awk "BEGIN{printf \"%.1f\", $1/1024}"; }
ratio() { awk "BEGIN{ if ($2 > 0) printf \"%.2f\", $1/$2; else print \"-\" }"; }
pct() { awk "BEGIN{printf \"%.1f%%\", 100*$1*1024/$2}"; }
echo
echo "cpprof benchmark: $db"
echo "  $(sqlite3 "$db" 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL' 2>/dev/null || echo "$kernels") kernels, $ranks ranks, file $(awk "BEGIN{printf \"%.1f\", $size/1048576}") MiB, best of $repeat runs, warm page cache, $(nproc) cores"
printf '  %-44s %9s %12s %10s\n' "command" "seconds" "peak RSS MB" "RSS/file"
printf '  %-44s %9s %12s %10s\n' "bare scan of report's columns" "$t_bare_r" "$(mb "$m_bare_r")" "$(pct "$m_bare_r" "$size")"
printf '  %-44s %9s %12s %10s\n' "cpprof report --format json ($(nproc) threads)" "$t_report" "$(mb "$m_report")" "$(pct "$m_report" "$size")"
printf '  %-44s %9s %12s %10s\n' "the same with CPPROF_THREADS=1" "$t_report1" "$(mb "$m_report1")" "$(pct "$m_report1" "$size")"
printf '  %-44s %9s %12s %10s\n' "bare scan of cuda_gpu_kern_sum's columns" "$t_bare_k" "$(mb "$m_bare_k")" "$(pct "$m_bare_k" "$size")"
printf '  %-44s %9s %12s %10s\n' "cpprof stats --report cuda_gpu_kern_sum" "$t_stats" "$(mb "$m_stats")" "$(pct "$m_stats" "$size")"
echo
echo "  report / bare scan:          $(ratio "$t_report" "$t_bare_r")   (target <= 1.5; one thread: $(ratio "$t_report1" "$t_bare_r"))"
echo "  stats / bare scan:           $(ratio "$t_stats" "$t_bare_k")"
echo "  report peak RSS / file size: $(pct "$m_report" "$size")   (target <= 25%)"
echo "  stats peak RSS / file size:  $(pct "$m_stats" "$size")"
