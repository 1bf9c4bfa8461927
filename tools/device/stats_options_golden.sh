#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# On a GPU machine with nsys: what the real `nsys stats` prints for the options `cpprof stats`
# copies from it (--timeunit, the default report set, comma lists, -o PREFIX, an .nsys-rep), on
# the committed real exports, beside what cpprof prints for the same (when BUILD_DIR is given).
#   tools/device/stats_options_golden.sh OUT_DIR [BUILD_DIR] [EXPORT_NAME...]
# Default exports: cpwork-train cpfold-trunk-2x2. Writes OUT_DIR/stats-options/:
#   <name>/<name>-<unit>_<report>.csv   nsys stats --report R --format csv --timeunit UNIT --output <name>-UNIT
#                                        (the goldens: copy them into tests/data/real/<name>/; the test
#                                        StatsTimeUnitGolden compares them once they are there)
#   <name>/default/<name>_*.csv         nsys stats --format csv --output (no --report: nsys's default set)
#   <name>/console-*.txt                the console output of the default set, a comma list, --timeunit usec
#   help-formats.txt, help-stats.txt    nsys stats --help-formats ALL; nsys stats --help
#   rep/                                an .nsys-rep given to nsys stats and nsys export (the fake nsys's model)
#   compare.txt                         cpprof vs nsys for every golden: identical or the first lines of the diff
# Needs nothing from the network. nsys stats and nsys export do not run the importer; the tiny
# profile of rep/ does: where QdstrmImporter lacks libdw (docs: ../shared/notes/device-nsys.md), set
# DEBS_DIR to a folder with Debian's libdw1 and libelf1 .deb files and the fix of
# tools/testdata/lib.sh is applied.
set -uo pipefail
out=$(realpath -m "$1")
build=${2:-}
shift $(( $# >= 2 ? 2 : $# ))
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(cpwork-train cpfold-trunk-2x2)
here=$(cd "$(dirname "$0")/../.." && pwd)
nsys=${NSYS:-$(command -v nsys || ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | sort -V | tail -1)}
[ -x "$nsys" ] || { echo "no nsys found (set NSYS=PATH)"; exit 1; }
if [ -n "${DEBS_DIR:-}" ]; then
  keep_out=$out
  # shellcheck source=../testdata/lib.sh
  source "$here/tools/testdata/lib.sh"
  nsys_setup "$DEBS_DIR" /tmp/cpprof-stats-options-setup /tmp/cpprof-stats-options-setup-out  # exports LD_LIBRARY_PATH
  out=$keep_out
fi
reports="cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum nvtx_sum nvtx_gpu_proj_sum"
work=/tmp/cpprof-stats-options
rm -rf "$work"; mkdir -p "$work" "$out/stats-options"
o=$out/stats-options
echo "nsys: $nsys ($("$nsys" --version))" | tee "$o/summary.txt"
"$nsys" stats --help-formats ALL >"$o/help-formats.txt" 2>&1
"$nsys" stats --help >"$o/help-stats.txt" 2>&1
: >"$o/compare.txt"

compare() {  # compare NSYS_FILE CPPROF_ARGS...
  local golden=$1; shift
  [ -n "$build" ] || return 0
  local mine=$work/cpprof.out
  "$build/cpprof" "$@" >"$mine" 2>"$work/cpprof.err"
  [ -f "$golden" ] || : >"$golden.missing"
  if cmp -s "$golden" "$mine"; then
    echo "identical: $(basename "$golden")  (cpprof $*)" >>"$o/compare.txt"
  else
    { echo "DIFFERENT: $(basename "$golden")  (cpprof $*)"; diff "$golden" "$mine" | head -10; tail -3 "$work/cpprof.err"; } >>"$o/compare.txt"
  fi
}

for name in "${names[@]}"; do
  d=$o/$name; mkdir -p "$d/default"
  src=$here/tests/data/real/$name/$name.sqlite.xz
  [ -f "$src" ] || { echo "no $src"; continue; }
  db=$work/$name.sqlite
  xz -dc "$src" >"$db" 2>/dev/null || python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]),open(sys.argv[2],"wb"))' "$src" "$db"
  for unit in usec msec sec; do
    for r in $reports; do
      timeout "${STATS_TIMEOUT:-300}" "$nsys" stats --report "$r" --format csv --timeunit "$unit" --force-overwrite true \
        --output "$d/$name-$unit" "$db" >>"$d/nsys.log" 2>&1
      compare "$d/$name-${unit}_$r.csv" stats --report "$r" --format csv --timeunit "$unit" "$db"
    done
  done
  # No --report: nsys's default set, one file per report.
  timeout "${STATS_TIMEOUT:-600}" "$nsys" stats --format csv --force-overwrite true --output "$d/default/$name" "$db" \
    >"$d/default/nsys.log" 2>&1
  ls -la "$d/default" >>"$d/default/nsys.log"
  for r in $reports; do
    [ -f "$d/default/${name}_$r.csv" ] && compare "$d/default/${name}_$r.csv" stats --report "$r" --format csv "$db"
  done
  timeout "${STATS_TIMEOUT:-600}" "$nsys" stats "$db" >"$d/console-default.txt" 2>&1
  timeout 300 "$nsys" stats -r cuda_gpu_kern_sum,cuda_gpu_mem_time_sum --format csv "$db" >"$d/console-comma.txt" 2>&1
  timeout 300 "$nsys" stats -r cuda_gpu_kern_sum --timeunit usec "$db" >"$d/console-usec-column.txt" 2>&1
  timeout 300 "$nsys" stats -r cuda_gpu_kern_sum --timeunit msec --format csv "$db" >"$d/console-msec-csv.txt" 2>&1
  timeout 300 "$nsys" stats -r cuda_gpu_kern_sum --timeunit milli --format csv "$db" >"$d/console-milli-csv.txt" 2>&1
  timeout 300 "$nsys" stats -r cuda_gpu_kern_sum --timeunit m --format csv "$db" >"$d/console-m-csv.txt" 2>&1
  echo "rc of --timeunit m: $?" >>"$d/console-m-csv.txt"
done

# An .nsys-rep: what nsys export and nsys stats print for one (the fake nsys answers the same).
r=$o/rep; mkdir -p "$r"
py=$(command -v python3)
if timeout 300 "$nsys" profile -o "$work/tiny" --trace cuda,nvtx --force-overwrite true \
     "$py" -c 'import torch; print(torch.ones(8, device="cuda").sum().item())' >"$r/profile.log" 2>&1 \
   && [ -f "$work/tiny.nsys-rep" ]; then
  cp "$work/tiny.nsys-rep" "$work/tiny2.nsys-rep"
  "$nsys" export --type sqlite --force-overwrite true --output "$work/tiny-export.sqlite" "$work/tiny.nsys-rep" \
    >"$r/export.stdout" 2>"$r/export.stderr"; echo "rc=$?" >>"$r/export.stderr"
  ls -la "$work" >"$r/after-export.ls"
  "$nsys" export --type sqlite --force-overwrite true --output "$work/x.sqlite" "$work/missing.nsys-rep" \
    >"$r/export-missing.stdout" 2>"$r/export-missing.stderr"; echo "rc=$?" >>"$r/export-missing.stderr"
  "$nsys" stats --report cuda_gpu_kern_sum --format csv "$work/tiny2.nsys-rep" >"$r/stats-rep.stdout" 2>"$r/stats-rep.stderr"
  echo "rc=$?" >>"$r/stats-rep.stderr"
  ls -la "$work" >"$r/after-stats.ls"
  if [ -n "$build" ]; then
    cp "$work/tiny.nsys-rep" "$work/tiny3.nsys-rep"
    "$build/cpprof" stats --report cuda_gpu_kern_sum --format csv "$work/tiny3.nsys-rep" >"$r/cpprof-rep.stdout" \
      2>"$r/cpprof-rep.stderr"; echo "rc=$?" >>"$r/cpprof-rep.stderr"
    cmp -s "$r/stats-rep.stdout" "$r/cpprof-rep.stdout" && echo "rep: identical" >>"$o/compare.txt" \
      || echo "rep: DIFFERENT (see rep/)" >>"$o/compare.txt"
  fi
else
  echo "could not profile a tiny job: see rep/profile.log" | tee -a "$o/summary.txt"
fi
grep -c '^identical' "$o/compare.txt" | sed 's/^/identical: /' | tee -a "$o/summary.txt"
grep '^DIFFERENT\|^rep:' "$o/compare.txt" | tee -a "$o/summary.txt"
rm -rf "$work"
