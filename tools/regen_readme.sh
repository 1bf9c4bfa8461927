#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Regenerates the real output in README.md and docs/example.md (between their BEGIN/END example
# markers) from the bundled example export, so neither drifts from what cpprof prints: the whole
# readout (stdout, then the notes on stderr) in docs/example.md, its top (up to the end of the
# verdict) in README.md. At 120 columns, as a file or a pipe gets it ($COLUMNS unset).
#   tools/regen_readme.sh [BUILD_DIR]          rewrite both
#   tools/regen_readme.sh --check [BUILD_DIR]  exit 1 if one of them is out of date
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
build=$(cd "${1:-build}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
xz -dc tests/data/real/cpwork-train/cpwork-train.sqlite.xz > "$tmp/cpwork-train.sqlite"
(cd "$tmp" && env -u COLUMNS "$build/cpprof" report cpwork-train.sqlite --top 4 > "$tmp/stdout" 2> "$tmp/stderr")
{
  echo '```'
  echo '$ cpprof report cpwork-train.sqlite --top 4'
  cat "$tmp/stdout" "$tmp/stderr"  # the notes (stderr) after the data (stdout)
  echo '```'
} > "$tmp/whole"
{
  echo '```'
  echo '$ cpprof report cpwork-train.sqlite'
  # The header, the window and the verdict: up to the second blank line.
  awk '/^$/ { if (++blank == 2) exit } { print }' "$tmp/stdout"
  echo '...'
  echo '```'
} > "$tmp/top"
status=0
regen() {  # FILE BLOCK
  awk -v block="$2" '
    /<!-- BEGIN example/ { print; while ((getline line < block) > 0) print line; skip = 1; next }
    /<!-- END example/ { skip = 0 }
    !skip { print }' "$1" > "$tmp/new"
  if [ "$check" = 1 ]; then
    diff -u "$1" "$tmp/new" > /dev/null || { echo "$1 is out of date: run tools/regen_readme.sh"; status=1; }
  else
    cp "$tmp/new" "$1"
  fi
}
regen README.md "$tmp/top"
regen docs/example.md "$tmp/whole"
exit "$status"
