#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# The GPU-machine check of `cpprof profile` (issue 5) and the CP readout (issue 3), run from the
# repository root on an H200 machine with 2 or 4 GPUs:
#
#   tools/device/profile_check.sh OUT_DIR STEP...      steps: none fast full e2e own perrank twonodes multi
#                                                             scaffold sweep payloads boltz
#
# cpprof: $CPPROF, else .devbin/cpprof (a static build carried along). DEBS_DIR (.debs) holds
# Debian's libdw1/libelf1 .deb files for the importer fix (../shared/notes/device-nsys.md).
#   none   cpfold trunk N=1024 on 4 ranks (2x2; 2 ranks, 1x2, on a 2-GPU machine) under plain
#          torchrun: the unprofiled time per iteration
#   fast   the same under `cpprof profile --preset fast`
#   full   the same under `cpprof profile --preset full --compare <fast>` (sanity: same GPU work)
#   e2e    `cpprof profile e2e 512 2 --preset full`: the whole model on 2 GPUs (1x2)
#   own    a torchrun script of our own (tools/testdata/cpwork) with --preset full --trace-discover
#   perrank  cpfold trunk N=256 on every GPU twice: one nsys over torchrun, then `--per-rank` (one
#          nsys per rank inside torchrun); then `cpprof diff --sanity` of the two (same GPU work
#          per rank) and the per-rank run's readout (issue 14)
#   twonodes cpfold trunk N=256 as two "nodes" on one host (one launcher, GPU and nsys each)
#   multi  issue 14's committed exports (tests/data/real/cpfold-multi-1x2): a small bf16 trunk on
#          1x2 captured three ways (one nsys, --per-rank, two "nodes"), readouts and sanity diffs
#   scaffold issue 21: the toy user model (python/tests/toy_user_model) scaffolded by `cpprof scaffold`
#          and profiled by `cpprof profile --probe --trace-discover` on one GPU, as a user would
#   sweep  issue 16 item 3 on ONE GPU (GPU 0): `cpprof sweep trunk --n 512,1024,2048 --grids 1x1 --dtype bf16
#          --largest --max-n 4096 -- --preset af3 --blocks 2 --recycles 0` (AF3 sizes, a 2-block trunk, one pass)
#          with timeouts that fit ~8 minutes: each run of a point at
#          most 200 s, the whole sweep stopped by SIGINT at 470 s (the finished points are kept: a rerun of the
#          same step resumes). Leaves sweep.json/md/html, the points' logs and readouts, and `cpprof sweep
#          --render`'s output of the same sweep.json (must be byte-identical) under OUT_DIR/sweep/.
#   boltz  issue 35 item 6 on ONE GPU: boltz-cp's serial Pairformer (tools/device/boltz_pairformer.py, fp32,
#          N=256, 2 blocks) under `--preset full` twice: with the functions-trace JSON (--trace-discover over
#          boltz.model.layers) and without it (modules from the Python backtraces); each export, readout and
#          report JSON. The boltz-cp source comes from BOLTZ_SRC (default .boltz-cp/src: a snapshot of
#          github.com/NVIDIA-Digital-Bio/boltz-cp's src/, carried along; not part of cpprof).
#   payloads on ONE GPU: cpfold trunk N=256 on one rank under `--preset full` and `--preset fast`: the
#          export cpprof writes after the run with `nsys export --include-json true` (how long it took, how
#          many NVTX rows carry a JSON payload, the readout's diagnostics and backtrace modules)
# Each step leaves its results folder's small files (readout, report JSON, command, logs) and
# the .sqlite.xz under OUT_DIR/<step>/, and a line with the wall time in OUT_DIR/summary.txt.
# Exit status: 0 once every step has run (each step's own rc is its line in summary.txt), 2 for an
# unknown step (said before anything runs).
# tests/cli/profile_check_test.sh runs the sweep step here with a fake cpprof and nvidia-smi.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: tools/device/profile_check.sh OUT_DIR STEP...}; shift
for step in "$@"; do
  case $step in
    none|fast|full|e2e|own|perrank|twonodes|multi|scaffold|sweep|payloads|boltz) ;;
    *) echo "profile_check.sh: unknown step '$step' (steps: none fast full e2e own perrank twonodes multi scaffold sweep payloads boltz)" >&2
       exit 2 ;;
  esac
done
mkdir -p "$out"; out=$(cd "$out" && pwd)
cd "$repo"
cpprof=${CPPROF:-$repo/.devbin/cpprof}
debs=${DEBS_DIR:-$repo/.debs}
say() { echo "$*" | tee -a "$out/summary.txt"; }

# The importer fix and the settings every child needs.
for f in "$debs"/*.deb; do [ -f "$f" ] && mkdir -p /tmp/dl && dpkg -x "$f" /tmp/dl; done
nsys=$(ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | sort -V | tail -1)
hostdir=$(ls -d "$(dirname "$(dirname "$nsys")")"/linux-desktop-*-x64 2>/dev/null | head -1)
export LD_LIBRARY_PATH=/tmp/dl/usr/lib/x86_64-linux-gnu:$hostdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export CPPROF_HELPERS_DIR=$repo/python/cpprof_helpers
export PYTHONPATH=$repo/python:$repo/tools/testdata${PYTHONPATH:+:$PYTHONPATH}
gpus=$(nvidia-smi -L | wc -l)
# The trunk steps use 4 ranks (2x2) on a 4-GPU machine, else 2 (1x2).
if [ "$gpus" -ge 4 ]; then ranks=4 cp0=2 cp1=2; else ranks=2 cp0=1 cp1=2; fi
say "cpprof $("$cpprof" --version) | nsys $nsys | $gpus GPUs"
nvidia-smi -L >"$out/gpus.txt"
results=$out/results
iters=(--iters 5 --warmup 2)
# An older cpprof (carried before --compare and --trace-discover existed) still measures.
has() { "$cpprof" profile --help 2>&1 | grep -q -- "$1"; }
compare=(); has --compare && compare=(--compare "$results/inference/trunk1024-fast")

keep() {  # STEP WORKFLOW NAME: copy a result's small files and its compressed export
  local d=$out/$1; mkdir -p "$d"
  for f in "$results/$2/$3".{readout.md,report.json,command.txt,doctor.json,probe.json,functions-trace.json}; do
    [ -f "$f" ] && cp "$f" "$d/"
  done
  cp "$results/$2/$3".*log "$d/" 2>/dev/null
  [ -f "$results/$2/$3.sqlite" ] && xz -T0 -c "$results/$2/$3.sqlite" >"$d/$3.sqlite.xz"
}
timed() {  # STEP LOG CMD...: run, record rc, wall time and cpfold's own summary (median s/iteration)
  local step=$1 log=$2; shift 2
  local t0=$EPOCHREALTIME
  "$@" >"$log" 2>&1
  local rc=$?
  local wall; wall=$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $t0}")
  local newest; newest=$(ls -t "$results"/*/*.stdout.log 2>/dev/null | head -1)  # this step's result
  local summary; summary=$(cat "$log" $newest 2>/dev/null | grep -h '^cpfold: ' | tail -1)
  say "$step: rc=$rc wall_s=$wall | $(echo "$summary" | python3 -c 'import json,sys; l=sys.stdin.read().strip(); d=json.loads(l[8:]) if l else {}; print("median_iter_s=%s peak_mem_max_bytes=%s" % (d.get("median_iter_s"), d.get("peak_mem_max_bytes")))')"
}

for step in "$@"; do
  mkdir -p "$out/$step"
  case $step in
    none)
      timed none "$out/none/run.log" torchrun --standalone --nnodes=1 --nproc_per_node=$ranks -m cpfold.run \
        --mode trunk --n-token 1024 --cp0 $cp0 --cp1 $cp1 "${iters[@]}" ;;
    fast)
      timed fast "$out/fast/profile.log" "$cpprof" profile --results-dir "$results" --name trunk1024-fast \
        --preset fast trunk 1024 $ranks -- "${iters[@]}"
      keep fast inference trunk1024-fast ;;
    full)
      timed full "$out/full/profile.log" "$cpprof" profile --results-dir "$results" --name trunk1024-full \
        --preset full "${compare[@]}" trunk 1024 $ranks -- "${iters[@]}"
      keep full inference trunk1024-full ;;
    e2e)
      timed e2e "$out/e2e/profile.log" "$cpprof" profile --results-dir "$results" --name e2e512-full \
        --preset full e2e 512 2
      keep e2e inference e2e512-full ;;
    boltz)
      bsrc=${BOLTZ_SRC:-$repo/.boltz-cp/src}
      if [ ! -d "$bsrc/boltz" ]; then say "boltz: no boltz-cp source in $bsrc (set BOLTZ_SRC)"; continue; fi
      python3 -c 'import einops, scipy' 2>/dev/null || say "boltz: this Python lacks einops or scipy (boltz-cp needs them)"
      for variant in json bt; do
        trace=(); [ $variant = json ] && trace=(--trace-discover boltz.model.layers
          --trace-match 'Pairformer|Triangle|Attention|Transition')
        PYTHONPATH=$bsrc:$PYTHONPATH timed boltz "$out/boltz/$variant.log" "$cpprof" profile --results-dir "$results" \
          --name boltz-pf-$variant --preset full --no-probe --timeout 270 --nproc-per-node 1 --gpus 0 "${trace[@]}" \
          -- tools/device/boltz_pairformer.py --n-token 256 --blocks 2 --iters 4 --warmup 1
        keep boltz custom boltz-pf-$variant
        "$cpprof" report --format json "$results/custom/boltz-pf-$variant.sqlite" >"$out/boltz/boltz-pf-$variant.json" 2>&1
        "$cpprof" report "$results/custom/boltz-pf-$variant.sqlite" >"$out/boltz/boltz-pf-$variant.readout.txt" 2>&1
        say "boltz $variant: readout rc=$? $(grep -m1 -i 'coverage\|named module' "$out/boltz/boltz-pf-$variant.readout.txt")"
      done ;;
    payloads)
      # One GPU: the export after the run keeps NVTX payloads (nsys export --include-json true).
      for preset in full fast; do
        timed payloads "$out/payloads/$preset.log" "$cpprof" profile --results-dir "$results" \
          --name trunk256-$preset-payloads --preset $preset --no-probe --gpus 0 trunk 256 1 -- --iters 3 --warmup 1
        keep payloads inference trunk256-$preset-payloads
        db=$results/inference/trunk256-$preset-payloads.sqlite
        say "payloads $preset: $(grep -h 'exporting SQLite\|exported in' "$out/payloads/$preset.log" | tr '\n' ' ')"
        say "payloads $preset: $(python3 - "$db" "$results/inference/trunk256-$preset-payloads.report.json" <<'PY'
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in c.execute("PRAGMA table_info(NVTX_EVENTS)")]
n = c.execute("SELECT count(*) FROM NVTX_EVENTS WHERE jsonText IS NOT NULL").fetchone()[0] if "jsonText" in cols else "no jsonText column"
r = json.load(open(sys.argv[2]))
diags = [d.get("id") for d in r.get("diagnostics", [])]
print(f"NVTX rows with jsonText: {n}; diagnostics: {diags}; python_backtraces: {r['modules']['grouping'].get('python_backtraces')}")
PY
)"
      done ;;
    scaffold)
      toy=$out/scaffold/work; rm -rf "$toy"; mkdir -p "$toy"; cp -r "$repo/python/tests/toy_user_model/." "$toy/"
      rm -rf "$toy"/toymodel/__pycache__
      (cd "$toy" && "$cpprof" scaffold --model toymodel.model:ToyFold --entry infer --cp-wrapper toymodel.cp:wrap_cp \
        --contract contract.json --count recycles=2 --n-token 512 --iters 5 --warmup 2 -o profile_toy.py) \
        >"$out/scaffold/scaffold.log" 2>&1
      say "scaffold: rc=$? $(grep -c . "$toy/profile_toy.py") lines written"
      (cd "$toy" && PYTHONPATH=$toy${PYTHONPATH:+:$PYTHONPATH} timed scaffold "$out/scaffold/profile.log" \
        "$cpprof" profile --results-dir "$results" --name toy512 --probe --trace-discover toymodel \
        --nproc-per-node 1 --gpus 0 -- -m profile_toy --n-token 512)
      keep scaffold custom toy512
      cp "$toy/profile_toy.py" "$out/scaffold/"; rm -rf "$toy" ;;
    own)
      if has --trace-discover; then
        trace=(--trace-discover cpwork --trace-match 'TriMul|Pairformer|Trunk|Confidence')
      else
        "$cpprof" trace-json --discover cpwork --match 'TriMul|Pairformer|Trunk|Confidence' --entry-module cpwork.run \
          -o "$out/own/cpwork-trace.json" >"$out/own/trace-json.log" 2>&1
        trace=(--trace-json "$out/own/cpwork-trace.json")
      fi
      timed own "$out/own/profile.log" "$cpprof" profile --results-dir "$results" --name cpwork-full \
        --preset full --nproc-per-node 2 --gpus 0,1 "${trace[@]}" -- -m cpwork.run --iters 3
      keep own custom cpwork-full ;;
    perrank)
      pr_ranks=$gpus; [ "$pr_ranks" -gt 2 ] && pr_ranks=2
      timed perrank "$out/perrank/single.log" "$cpprof" profile --results-dir "$results" --name trunk256-single \
        --preset fast --no-probe trunk 256 $pr_ranks -- --iters 3 --warmup 1
      keep perrank inference trunk256-single
      timed perrank "$out/perrank/per-rank.log" "$cpprof" profile --results-dir "$results" --name trunk256-perrank \
        --preset fast --no-probe --per-rank trunk 256 $pr_ranks -- --iters 3 --warmup 1
      keep perrank inference trunk256-perrank
      for f in "$results"/inference/trunk256-perrank.*.sqlite; do xz -T0 -c "$f" >"$out/perrank/$(basename "$f").xz"; done
      "$cpprof" diff --sanity "$results/inference/trunk256-single.sqlite" "$results/inference/trunk256-perrank.*.sqlite" \
        >"$out/perrank/sanity.txt" 2>&1; say "perrank sanity rc=$? $(head -1 "$out/perrank/sanity.txt")"
      "$cpprof" report "$results"/inference/trunk256-perrank.*.sqlite >"$out/perrank/readout.txt" 2>&1
      "$cpprof" report "$results/inference/trunk256-single.sqlite" >"$out/perrank/readout-single.txt" 2>&1 ;;
    twonodes)  # two launchers as two "nodes" on one host (c10d rendezvous on localhost), a GPU and an nsys each
      for node in 0 1; do
        "$cpprof" profile --results-dir "$results/node$node" --name trunk256-node --preset fast --no-probe \
          --nnodes 2 --nproc-per-node 1 --gpus $node --rdzv-endpoint localhost:29511 trunk 256 2 -- --iters 3 --warmup 1 \
          >"$out/twonodes/node$node.log" 2>&1 &
      done
      wait
      ls "$results"/node*/inference/ >"$out/twonodes/ls.txt" 2>&1
      for f in "$results"/node*/inference/trunk256-node*.sqlite; do
        xz -T0 -c "$f" >"$out/twonodes/$(basename "$(dirname "$(dirname "$f")")")-$(basename "$f").xz"
      done
      "$cpprof" report "$results"/node*/inference/trunk256-node*.sqlite --format json >"$out/twonodes/merged.json" 2>"$out/twonodes/merged.err"
      "$cpprof" report "$results"/node*/inference/trunk256-node*.sqlite >"$out/twonodes/merged.txt" 2>&1
      say "twonodes: $(grep -c . "$out/twonodes/merged.txt") lines of readout" ;;
    multi)  # issue 14's committed proof: a small cpfold trunk on 1x2 captured three ways, kept whole
      # (a) one nsys over torchrun, (b) --per-rank (one nsys per rank), (c) two launchers as two
      # "nodes" (c10d rendezvous on localhost, one GPU and one nsys each). Small on purpose (bf16,
      # one block, cpfold's small preset) so that the .sqlite.xz files can be committed.
      small=(--preset small --recycles 0 --blocks 1 --iters 3 --warmup 1 --dtype bf16)
      m=$out/multi; mr=$results/multi
      timed multi "$m/single.log" "$cpprof" profile --results-dir "$mr/single" --name trunk256 \
        --preset fast --no-probe trunk 256 2 -- "${small[@]}"
      timed multi "$m/perrank.log" "$cpprof" profile --results-dir "$mr/perrank" --name trunk256 \
        --preset fast --no-probe --per-rank trunk 256 2 -- "${small[@]}"
      for node in 0 1; do
        "$cpprof" profile --results-dir "$mr/node$node" --name trunk256 --preset fast --no-probe \
          --nnodes 2 --nproc-per-node 1 --gpus $node --rdzv-endpoint localhost:29512 trunk 256 2 -- "${small[@]}" \
          >"$m/node$node.log" 2>&1 &
      done
      wait
      for way in single perrank node0 node1; do
        mkdir -p "$m/$way"
        for f in "$mr/$way"/inference/*; do
          case $f in
            *.sqlite) xz -T0 -c "$f" >"$m/$way/$(basename "$f").xz" ;;
            *.readout.md|*.report.json|*.command.txt|*.log) cp "$f" "$m/$way/" ;;
          esac
        done
      done
      "$cpprof" report "$mr/single/inference/trunk256.sqlite" >"$m/readout-single.txt" 2>&1
      "$cpprof" report "$mr/perrank/inference/"trunk256.*.sqlite >"$m/readout-perrank.txt" 2>&1
      "$cpprof" report "$mr"/node*/inference/trunk256*.sqlite >"$m/readout-twonodes.txt" 2>&1
      "$cpprof" diff --sanity "$mr/single/inference/trunk256.sqlite" "$mr/perrank/inference/"trunk256.*.sqlite \
        >"$m/sanity-perrank.txt" 2>&1
      "$cpprof" diff --sanity "$mr/single/inference/trunk256.sqlite" "$mr"/node*/inference/trunk256*.sqlite \
        >"$m/sanity-twonodes.txt" 2>&1
      say "multi: $(head -1 "$m/sanity-perrank.txt") | $(head -1 "$m/sanity-twonodes.txt")" ;;
    sweep)
      sw=${SWEEP_DIR:-/tmp/cpprof-sweep}; rm -rf "$sw"
      t0=$EPOCHREALTIME
      timeout -s INT 470 "$cpprof" sweep trunk --n 512,1024,2048 --grids 1x1 --dtype bf16 --largest --max-n 4096 \
        --iters 3 --warmup 1 --capture-iters 1 --timeout 200 --gpus 0 --out "$sw" \
        -- --preset af3 --blocks 2 --recycles 0 >"$out/sweep/sweep.stdout" 2>"$out/sweep/sweep.log"
      rc=$?
      say "sweep: rc=$rc wall_s=$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $t0}")"
      cp "$sw"/sweep.json "$sw"/sweep.md "$sw"/sweep.html "$out/sweep/" 2>/dev/null
      mkdir -p "$out/sweep/points"
      for f in "$sw"/points/*; do
        case $f in
          *.log|*.readout.md|*.report.json|*.command.txt) cp "$f" "$out/sweep/points/" ;;
        esac
      done
      # Determinism: --render from the same sweep.json writes the same bytes.
      mkdir -p "$out/sweep/render"; cp "$sw/sweep.json" "$out/sweep/render/" 2>/dev/null
      "$cpprof" sweep --render --out "$out/sweep/render" >/dev/null 2>"$out/sweep/render.log"
      cmp -s "$out/sweep/render/sweep.html" "$sw/sweep.html" && same=yes || same=no
      say "sweep: $(grep -c '| 1x1 |' "$sw/sweep.md" 2>/dev/null) point rows; --render identical: $same"
      grep '^| 1x1 | [0-9-]* | [0-9-]* |' "$sw/sweep.md" | while read -r l; do say "sweep: largest N $l"; done ;;
  esac
done
# The results folders the profile steps left. The sweep step leaves none (its points are under
# SWEEP_DIR): `ls "$results"/*` then failed with "cannot access" and, as the script's last
# command, made its status 2 although every step had run.
shopt -s nullglob
left=("$results"/*)
if [ ${#left[@]} -gt 0 ]; then ls -la "${left[@]}" >"$out/results-ls.txt" 2>&1; fi
exit 0
