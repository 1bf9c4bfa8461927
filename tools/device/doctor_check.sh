#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# The GPU-machine check of `cpprof doctor` and `cpprof trace-json` (issue 4), for the lead to run
# on the 2 x H200 machine from the repository root:
#
#   tools/device/doctor_check.sh OUT_DIR [DEBS_DIR]
#
# DEBS_DIR (default .debs) holds Debian's libdw1 and libelf1 .deb files (see
# ../shared/notes/device-nsys.md; the machine has no package registry). cpprof: $CPPROF if set,
# else build-static/cpprof or build/cpprof if one runs here (carry one built with
# -DCPPROF_STATIC=ON), else a fresh build into build-h200 (needs CLI11, nlohmann-json, fmt and
# SQLite headers there).
#
# It writes under OUT_DIR:
#   doctor-before.{txt,json}   cpprof doctor as the machine is (expected: the importer FAILs on libdw.so.1)
#   doctor-after.{txt,json}    cpprof doctor --deep with the libdw fix on LD_LIBRARY_PATH (expected: exit 0)
#   cpwork-trace.json          cpprof trace-json --discover cpwork ... (the classes of cpwork.layers)
#   trace-json.log
#   profile.log                nsys profile ... torchrun --nproc_per_node=2 -m cpwork.run --iters 2
#   cpwork.sqlite.xz           its export (the .nsys-rep is removed)
#   cpwork-ranges.txt          the distinct NVTX range names of the cpwork domain, with counts
#   summary.txt                the exit codes and what each step found
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: tools/device/doctor_check.sh OUT_DIR [DEBS_DIR]}
debs=${2:-$repo/.debs}
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

# Multicast stays off in every child (device-nsys.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export CPPROF_HELPERS_DIR=$repo/python/cpprof_helpers

# --- cpprof ---------------------------------------------------------------------------------------
cpprof=${CPPROF:-}
if [ -z "$cpprof" ]; then
  for c in "$repo/build-static/cpprof" "$repo/build/cpprof"; do
    if [ -x "$c" ] && "$c" --version >/dev/null 2>&1; then cpprof=$c; break; fi
  done
fi
if [ -z "$cpprof" ]; then
  say "building cpprof into build-h200"
  cxx=$(command -v /opt/gcc/bin/g++ || command -v g++)
  if cmake -S "$repo" -B "$repo/build-h200" -G Ninja -DCPPROF_BUILD_TESTS=OFF -DCMAKE_CXX_COMPILER="$cxx" \
       >"$out/build.log" 2>&1 && ninja -C "$repo/build-h200" cpprof >>"$out/build.log" 2>&1; then
    cpprof=$repo/build-h200/cpprof
  else
    say "cannot build cpprof here (see build.log): carry a static one (cmake -DCPPROF_STATIC=ON) as build-static/cpprof"
    tail -20 "$out/build.log"
    exit 1
  fi
fi
say "cpprof: $cpprof ($("$cpprof" --version))"

jq_py() {  # FILE EXPR: a value of a JSON file, with Python (jq may be missing)
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=eval(sys.argv[2], {"d": d}); print("" if v is None else v)' "$1" "$2"
}

# --- 1. doctor as the machine is --------------------------------------------------------------------
"$cpprof" doctor >"$out/doctor-before.txt" 2>&1
rc_before=$?
"$cpprof" doctor --json >"$out/doctor-before.json" 2>>"$out/doctor-before.txt"
say "doctor before the fix: exit $rc_before"
sed -n '1,200p' "$out/doctor-before.txt"
nsys=$(jq_py "$out/doctor-before.json" 'd["nsys"]["chosen"]["path"] if d["nsys"]["chosen"] else None')
importer=$(jq_py "$out/doctor-before.json" 'd["nsys"]["importer"]["path"]')
say "chosen nsys: ${nsys:-none}; importer: ${importer:-none}"
say "importer check: $(jq_py "$out/doctor-before.json" '[c for c in d["checks"] if c["id"]=="importer"][0]["status"] + ": " + [c for c in d["checks"] if c["id"]=="importer"][0]["detail"]')"
[ -n "$nsys" ] || { say "no nsys chosen: stopping"; exit 1; }

# --- 2. the libdw fix, then doctor --deep ----------------------------------------------------------------
dl=$out/dl
fix_env=()  # only nsys and cpprof doctor get the fix, as `cpprof profile` will do it
if ls "$debs"/*.deb >/dev/null 2>&1; then
  rm -rf "$dl"; mkdir -p "$dl"
  for f in "$debs"/*.deb; do dpkg -x "$f" "$dl"; done
  libdir=$(dirname "$(find "$dl" -name 'libdw.so.1' | head -1)")
  importer_dir=$(dirname "$importer")
  fix_env=(env "LD_LIBRARY_PATH=$libdir:$importer_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  say "fix applied: ${fix_env[1]}"
else
  say "no .deb files in $debs: the 'after' run has no fix"
fi
${fix_env[@]+"${fix_env[@]}"} "$cpprof" doctor --deep >"$out/doctor-after.txt" 2>&1
rc_after=$?
${fix_env[@]+"${fix_env[@]}"} "$cpprof" doctor --json >"$out/doctor-after.json" 2>>"$out/doctor-after.txt"
say "doctor --deep after the fix: exit $rc_after"
sed -n '1,200p' "$out/doctor-after.txt"

# --- 3. trace-json for cpwork ------------------------------------------------------------------------------
cd "$repo/tools/testdata" || exit 1
export PYTHONPATH=$repo/tools/testdata${PYTHONPATH:+:$PYTHONPATH}
"$cpprof" trace-json --discover cpwork --match 'TinyFold|Trunk|Pairformer|TriMul|PairTransition|Confidence' \
  --entry-module cpwork.run -o "$out/cpwork-trace.json" >"$out/trace-json.log" 2>&1
rc_trace=$?
cat "$out/trace-json.log"
say "trace-json: exit $rc_trace; own entries: $(python3 -c 'import json,sys; print([e for e in json.load(open(sys.argv[1])) if e["domain"]=="cpwork"])' "$out/cpwork-trace.json" 2>&1)"

# --- 4. profile cpwork with it ------------------------------------------------------------------------------
t0=$EPOCHREALTIME
${fix_env[@]+"${fix_env[@]}"} timeout 400 "$nsys" profile -o "$out/cpwork" --force-overwrite true --export sqlite --trace cuda,nvtx \
  --python-functions-trace="$out/cpwork-trace.json" \
  torchrun --standalone --nnodes=1 --nproc_per_node=2 -m cpwork.run --iters 2 >"$out/profile.log" 2>&1
rc_prof=$?
say "nsys profile: exit $rc_prof in $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $t0}") s"
tail -15 "$out/profile.log"
find "$out" -maxdepth 1 -type f -printf '%10s  %f\n' | sort -k2 | tee -a "$summary"

# --- 5. the NVTX ranges of the cpwork domain ------------------------------------------------------------
if [ -f "$out/cpwork.sqlite" ]; then
  python3 - "$out/cpwork.sqlite" >"$out/cpwork-ranges.txt" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
# Ranges (59 push/pop, 60 start/end) whose domain, created by the same process (event 75), is "cpwork".
q = """SELECT COALESCE(e.text, s.value) AS name, COUNT(*) FROM NVTX_EVENTS e
       LEFT JOIN StringIds s ON s.id = e.textId
       WHERE e.eventType IN (59, 60) AND EXISTS (
         SELECT 1 FROM NVTX_EVENTS d WHERE d.eventType = 75 AND d.text = 'cpwork'
           AND d.domainId = e.domainId
           AND ((d.globalTid >> 24) & 16777215) = ((e.globalTid >> 24) & 16777215))
       GROUP BY name ORDER BY name"""
rows = db.execute(q).fetchall()
print(f"{len(rows)} distinct NVTX range names in domain 'cpwork':")
for name, n in rows:
    print(f"  {n:5d}  {name}")
diag = db.execute("SELECT name FROM sqlite_master WHERE name = 'DIAGNOSTIC_EVENT'").fetchone()
if diag:
    for (text,) in db.execute("SELECT text FROM DIAGNOSTIC_EVENT WHERE text LIKE '%annotat%' OR text LIKE '%unction%'"):
        print("diagnostic:", text)
PY
  tee -a "$summary" <"$out/cpwork-ranges.txt"
  rm -f "$out/cpwork.nsys-rep"
  if command -v xz >/dev/null; then xz -9 -f "$out/cpwork.sqlite"; else
    python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(open(sys.argv[1],"rb"), lzma.open(sys.argv[1]+".xz","wb",preset=9))' "$out/cpwork.sqlite" && rm -f "$out/cpwork.sqlite"
  fi
else
  say "no cpwork.sqlite: see profile.log"
fi
rm -rf "$dl"
say "exit codes: doctor before $rc_before (expected 3), after $rc_after (expected 0), trace-json $rc_trace, profile $rc_prof"
