#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# tools/device/profile_check.sh without a GPU: a fake cpprof (profile and sweep write what the real
# ones leave) and a fake nvidia-smi (the H200's `-L`). Checks what the script says of itself:
#   - the sweep step alone (no results/ folder) exits 0 and reports rc=0 (the script used to exit
#     2 there: its last command listed results/*, which did not exist);
#   - a profile step (fast) then the sweep: exit 0, results-ls.txt lists the profile's results;
#   - an unknown step: exit 2 and the list of steps, before anything runs.
#
#   tests/cli/profile_check_test.sh REPO_DIR TESTS_DATA_DIR OUT_DIR
set -euo pipefail
repo=$1 data=$2 out=$3
rm -rf "$out"; mkdir -p "$out/bin"
fail=0
check() {  # WHAT, then a command that must succeed
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}

cat > "$out/bin/nvidia-smi" <<EOF
#!/bin/sh
[ "\$1" = -L ] && cat "$data/fakes/h200/nvidia-smi-L.txt"
exit 0
EOF
# profile --results-dir DIR --name NAME ...: DIR/inference/NAME.readout.md; sweep --out DIR:
# sweep.json/md/html and a point's log (--render: md and html from the sweep.json there).
cat > "$out/bin/cpprof" <<'EOF'
#!/bin/bash
cmd=$1; shift
case $cmd in
  --version) echo "0.0-fake"; exit 0 ;;
  profile)
    [ "${1:-}" = --help ] && { echo "usage: cpprof profile"; exit 0; }
    while [ $# -gt 0 ]; do
      case $1 in --results-dir) dir=$2; shift ;; --name) name=$2; shift ;; esac; shift
    done
    mkdir -p "$dir/inference" && echo "# readout" > "$dir/inference/$name.readout.md"
    echo 'cpfold: {"median_iter_s": 0.125, "peak_mem_max_bytes": 1024}'
    exit 0 ;;
  sweep)
    render=0
    while [ $# -gt 0 ]; do
      case $1 in --out) dir=$2; shift ;; --render) render=1 ;; --) break ;; esac; shift
    done
    mkdir -p "$dir/points"
    [ $render = 1 ] || { echo '{"points": []}' > "$dir/sweep.json"; echo log > "$dir/points/trunk-n512-1x1.log"; }
    printf '| grid | largest N | fits |\n| 1x1 | 4096 | 2048 |\n' > "$dir/sweep.md"
    echo '<html></html>' > "$dir/sweep.html"
    exit 0 ;;
esac
exit 1
EOF
chmod +x "$out/bin/nvidia-smi" "$out/bin/cpprof"
run() {  # OUT_NAME STEP...: the script with the fakes; its status in $out/OUT_NAME.rc
  local name=$1; shift
  local rc=0
  PATH="$out/bin:$PATH" CPPROF="$out/bin/cpprof" DEBS_DIR="$out/no-debs" SWEEP_DIR="$out/$name-sweep" \
    "$repo/tools/device/profile_check.sh" "$out/$name" "$@" > "$out/$name.stdout" 2> "$out/$name.stderr" || rc=$?
  echo "$rc" > "$out/$name.rc"
}

run sweep-only sweep
check "sweep alone exits 0 ($(cat "$out/sweep-only.rc"))" test "$(cat "$out/sweep-only.rc")" = 0
check "sweep step reports rc=0" grep -q '^sweep: rc=0 ' "$out/sweep-only/summary.txt"
check "sweep --render identical" grep -q -- '--render identical: yes' "$out/sweep-only/summary.txt"
check "sweep.json kept" test -f "$out/sweep-only/sweep/sweep.json"
check "no results listing without results" test ! -e "$out/sweep-only/results-ls.txt"

run both fast sweep
check "fast then sweep exits 0 ($(cat "$out/both.rc"))" test "$(cat "$out/both.rc")" = 0
check "fast step reports rc=0" grep -q '^fast: rc=0 .*median_iter_s=0.125' "$out/both/summary.txt"
check "results listed" grep -q 'trunk1024-fast.readout.md' "$out/both/results-ls.txt"

run typo fats
check "unknown step exits 2 ($(cat "$out/typo.rc"))" test "$(cat "$out/typo.rc")" = 2
check "unknown step named with the list" grep -q "unknown step 'fats' (steps: none fast" "$out/typo.stderr"
check "nothing run for an unknown step" test ! -e "$out/typo"

if [ $fail = 0 ]; then rm -rf "$out"; fi
exit $fail
