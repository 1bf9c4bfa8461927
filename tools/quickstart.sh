#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build cpprof, and show the readout.
# On a GPU box it profiles the reference workload (cpfold) under nsys with `cpprof profile`;
# without a GPU it reports on a bundled real export (a 2-rank torchrun job profiled with nsys on
# 2 x H200).
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
  echo "quickstart: a GPU is present: cpprof profile (the reference workload under nsys)"
  exec build/cpprof profile
fi
echo "quickstart: no GPU here: cpprof report on the bundled example export"
echo
build/cpprof report "$out"
