#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build cpprof, and show the readout.
# Without a GPU it reports on a bundled real export (a 2-rank torchrun job profiled with nsys on
# 2 x H200); `cpprof profile` (which runs the reference workload under nsys on a GPU box) is the
# next milestone, so on a GPU box this does the same for now and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
ninja -C build cpprof
example=tests/data/real/cpwork-train/cpwork-train.sqlite.xz
out=build/example/cpwork-train.sqlite
mkdir -p build/example
[ -f "$out" ] || xz -dc "$example" > "$out"
if command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
  echo "quickstart: a GPU is present; profiling the reference workload needs 'cpprof profile' (not built yet)."
  echo "quickstart: showing the bundled example instead."
fi
echo "quickstart: cpprof report $out"
echo
build/cpprof report "$out"
