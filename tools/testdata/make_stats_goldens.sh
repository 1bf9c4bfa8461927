#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Runs nsys's own `nsys stats` (CSV) for REPORTS on every committed real export
# (tests/data/real/<name>/<name>.sqlite.xz), each on a copy of its own (nsys writes helper tables
# into the file it reads), and leaves OUT/<name>/<name>_<report>.csv (xz-compressed when over
# 1 MB, as the tests read them) and OUT/<name>/stats.log. Run on the GPU machine that made the
# exports (nsys 2025.3.1): the goldens are what that nsys prints.
#   tools/testdata/make_stats_goldens.sh OUT [REPORTS...]
set -uo pipefail
out=$1; shift
reports=${*:-cuda_api_sum osrt_sum nvtx_kern_sum cuda_gpu_trace cuda_api_gpu_sum}
nsys=${NSYS:-$(command -v nsys || ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | sort -V | tail -1)}
echo "nsys: $nsys ($("$nsys" --version))"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
xzs() { if command -v xz >/dev/null; then xz -9 -T0; else
  python3 -c 'import lzma,shutil,sys; f=lzma.LZMAFile(sys.stdout.buffer,"w",preset=9); shutil.copyfileobj(sys.stdin.buffer,f); f.close()'; fi; }
unxz_to() { if command -v xz >/dev/null; then xz -dc "$1" > "$2"; else
  python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],"wb"))' "$1" "$2"; fi; }
for x in tests/data/real/*/*.sqlite.xz; do
  name=$(basename "$x" .sqlite.xz)
  mkdir -p "$out/$name"
  for r in $reports; do
    db=$work/$r/$name.sqlite
    mkdir -p "$work/$r"
    unxz_to "$x" "$db"
    t0=$EPOCHREALTIME
    timeout "${STATS_TIMEOUT:-300}" "$nsys" stats --report "$r" --format csv --output "$out/$name/$name" "$db" \
      >>"$out/$name/stats.log" 2>&1
    echo "$name $r rc=$? $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $t0}") s" | tee -a "$out/$name/stats.log"
    rm -f "$db"
  done
  for f in "$out/$name"/*.csv; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 1000000 ] && { xzs < "$f" > "$f.xz" && rm -f "$f"; }
  done
done
ls -la "$out"/*/ | head -100
