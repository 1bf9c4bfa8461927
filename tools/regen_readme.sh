#!/usr/bin/env bash
# Regenerates the real output at the top of README.md (between the BEGIN/END example markers)
# from the bundled example export, so the README never drifts from what cpprof prints.
#   tools/regen_readme.sh [BUILD_DIR]          rewrite README.md
#   tools/regen_readme.sh --check [BUILD_DIR]  exit 1 if README.md is out of date
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
build=$(cd "${1:-build}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
xz -dc tests/data/real/cpwork-train/cpwork-train.sqlite.xz > "$tmp/cpwork-train.sqlite"
{
  echo '```'
  echo '$ cpprof report cpwork-train.sqlite --top 4'
  (cd "$tmp" && "$build/cpprof" report cpwork-train.sqlite --top 4 2> "$tmp/stderr")
  cat "$tmp/stderr"  # the notes (stderr) after the data (stdout)
  echo '```'
} > "$tmp/block"
awk -v block="$tmp/block" '
  /<!-- BEGIN example/ { print; while ((getline line < block) > 0) print line; skip = 1; next }
  /<!-- END example/ { skip = 0 }
  !skip { print }' README.md > "$tmp/README.md"
if [ "$check" = 1 ]; then
  diff -u README.md "$tmp/README.md" > /dev/null || {
    echo "README.md is out of date: run tools/regen_readme.sh"; exit 1; }
else
  cp "$tmp/README.md" README.md
fi
