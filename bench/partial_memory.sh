#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Memory and time of reading one large partial (issue 39: "a 133 MB partial needs 3 GB"): the
# partial of a real export (cpfold-trunk-2x2, 4 ranks) grown to NODES module nodes (each rank's
# module times with them) and POINTS memory-timeline points, then `cpprof merge` of it. Prints the
# partial's size, the time and peak RSS of reading it (CPPROF_TIMING's "partials read" line) and of
# the whole merge with a text readout. Deletes what it made.
#
#   bench/partial_memory.sh [BUILD_DIR]    (default: build)
#   NODES=65000 POINTS=1200000             (default: a 123 MB partial)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
nodes=${NODES:-65000}
points=${POINTS:-1200000}
[ -x "$build/cpprof" ] || { echo "missing $build/cpprof: ninja -C $build cpprof" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cpprof-partial-memory.XXXXXX")
trap 'rm -rf "$work"' EXIT
xz -dkc tests/data/real/cpfold-trunk-2x2/cpfold-trunk-2x2.sqlite.xz > "$work/run.sqlite"
"$build/cpprof" report --partial "$work/run.sqlite" -o "$work/small.partial.json" 2> /dev/null
python3 - "$work/small.partial.json" "$work/big.partial.json" "$nodes" "$points" <<'PY'
import json, sys
src, dst, nodes, points = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
j = json.load(open(src))
base = len(j["nodes"])
for k in range(nodes - base):
    j["nodes"].append({"depth": 1, "is_group": False, "name": f"Block{k}.forward", "parent": 1,
                       "range": f"m:Block{k}.forward"})
for p in j["processes"]:
    row = p["sweep"]["nodes"][2]
    p["sweep"]["nodes"] += [dict(row, busy_ns=row["busy_ns"] + k) for k in range(nodes - base)]
series = j["memory"]["series"]
for s in series:
    last = s["timeline"][-1]["time_ns"]
    s["timeline"] += [{"bytes": 1000 + k, "time_ns": last + k + 1} for k in range(points // len(series))]
json.dump(j, open(dst, "w"), separators=(",", ":"))
PY
size=$(stat -c %s "$work/big.partial.json")
CPPROF_TIMING=1 /usr/bin/time -f "%e %M" -o "$work/time" "$build/cpprof" merge "$work/big.partial.json" \
  -o "$work/readout.txt" 2> "$work/stderr"
read_line=$(grep "timing: partials read" "$work/stderr")
read -r total_s total_kb < "$work/time"
echo "| partial | module nodes | memory points | read | read peak RSS | merge (text readout) | merge peak RSS |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
printf "| %d MB | %d | %d | %s s | %s MB | %s s | %d MB |\n" $((size / 1000000)) "$nodes" "$points" \
  "$(sed -E 's/.*read +([0-9.]+) s.*/\1/' <<< "$read_line")" \
  "$(sed -E 's/.*peak RSS so far +([0-9.]+) MB.*/\1/' <<< "$read_line")" "$total_s" $((total_kb / 1024))
