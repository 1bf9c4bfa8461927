#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build cpprof, and show the readout.
# On a GPU box it profiles the reference workload (cpfold) under nsys with `cpprof profile`;
# without a GPU it reports on a bundled real export (a 2-rank torchrun job profiled with nsys on
# 2 x H200).
#   tools/quickstart.sh             # build in build/, run the main job
#   tools/quickstart.sh --install   # the same, and install system-wide first (/usr/local: cpprof, its
#                                   # Python helpers, 'man cpprof', bash/zsh completion)
set -euo pipefail
cd "$(dirname "$0")/.."
install=0
[ "${1:-}" = "--install" ] && install=1
tools/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
ninja -C build cpprof cpprof_docs
if [ "$install" = 1 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo cmake --install build --prefix /usr/local
  echo "quickstart: installed $(command -v cpprof || echo /usr/local/bin/cpprof); 'man cpprof'; completion in new shells"
fi
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
