#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# The main job on a fresh machine: install dependencies, build cpprof (the build's output to a log
# file), and show the readout. On a GPU box it profiles the reference workload (cpfold) under nsys
# with `cpprof profile`; without a GPU it reports on a bundled real export (a 2-rank torchrun job
# profiled with nsys on 2 x H200), then says which file it read, the HTML page it wrote and what
# to run next.
#   tools/quickstart.sh             # build in build/, run the main job
#   tools/quickstart.sh --install   # the same, and install system-wide first
#   tools/quickstart.sh --help      # usage only
set -euo pipefail
usage() {
  cat <<'USAGE'
usage: tools/quickstart.sh [--install | --help]

Installs cpprof's dependencies (apt), builds cpprof in build/ (its output goes to
build/quickstart.log; the end of it is shown if the build fails), then runs the
main job: without a GPU, the readout of a bundled real export and the same
readout as an HTML page; on a GPU box, 'cpprof profile' (the reference workload
under nsys).

  --install   also install system-wide first (/usr/local: cpprof, its Python
              helpers, 'man cpprof', bash/zsh completion)
  --help      print this and exit
USAGE
}
install=0
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  --install) install=1 ;;
  "") ;;
  *) echo "quickstart: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
mkdir -p build
log=build/quickstart.log
echo "quickstart: installing dependencies and building cpprof (output in $log) ..."
if ! { tools/install-deps.sh && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
  ninja -C build cpprof cpprof_docs; } > "$log" 2>&1; then
  echo "quickstart: the build failed; the end of $log:" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
if [ "$install" = 1 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo cmake --install build --prefix /usr/local >> "$log" 2>&1 || {
    echo "quickstart: the install failed; the end of $log:" >&2; tail -n 20 "$log" >&2; exit 1; }
  echo "quickstart: installed /usr/local/bin/cpprof; 'man cpprof'; bash completion in new shells" \
    "(through bash-completion); Python helpers in /usr/local/share/cpprof/python"
fi
if command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
  echo "quickstart: a GPU is present: cpprof profile (the reference workload under nsys)"
  build/cpprof profile
  echo "quickstart: next: cpprof report YOUR.sqlite (nsys export --type sqlite YOUR.nsys-rep makes it)"
  exit 0
fi
example=tests/data/real/cpwork-train/cpwork-train.sqlite.xz
page=build/example/cpwork-train.html
mkdir -p build/example
echo "quickstart: no GPU here: cpprof report on the bundled example export"
echo
build/cpprof report "$example" 2> /dev/null
build/cpprof report "$example" --format html -o "$page" --force 2> /dev/null
echo
echo "quickstart: read $example (a 2-rank torchrun training job, nsys 2025.3 on 2 x H200)"
echo "quickstart: wrote $page (the same readout as one page: open it in a browser)"
echo "quickstart: next: cpprof report YOUR.sqlite (or .nsys-rep); on a GPU box: cpprof profile"
