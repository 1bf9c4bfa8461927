#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Function lengths in src/ (Universal Ctags: each function's first and last line, test files
# included). Fails when a function is longer than the hard limit, or when more functions than
# allowed are longer than the soft limit; lists the offenders, longest first.
#
#   tools/check_function_lengths.sh [SRC_DIR]          # the check (the ctest function_lengths)
#   tools/check_function_lengths.sh --list [SRC_DIR]   # every function over the soft limit
set -euo pipefail
hard=120 soft=80 max_soft=15
list=0
[ "${1:-}" = "--list" ] && { list=1; shift; }
src=${1:-"$(dirname "$0")/../src"}
command -v ctags > /dev/null || { echo "check_function_lengths: ctags missing: run tools/install-deps.sh (universal-ctags)"; exit 1; }
ctags --version | grep -q "Universal Ctags" || { echo "check_function_lengths: needs Universal Ctags (apt universal-ctags)"; exit 1; }
lengths=$(cd "$src" && ctags -R --languages=C++ --c++-kinds=f --fields=+ne -f - * 2> /dev/null |
  awk -F'\t' '{ line = ""; end = "";
    for (i = 4; i <= NF; i++) { if ($i ~ /^line:/) line = substr($i, 6); if ($i ~ /^end:/) end = substr($i, 5) }
    if (line != "" && end != "") printf "%d %s:%s %s\n", end - line + 1, $2, line, $1 }' | sort -k1,1nr -k2,2)
over_hard=$(awk -v h=$hard '$1 > h' <<< "$lengths")
over_soft=$(awk -v s=$soft '$1 > s' <<< "$lengths")
n_soft=$(grep -c . <<< "$over_soft" || true)
total=$(grep -c . <<< "$lengths" || true)
if [ "$list" = 1 ]; then
  echo "$over_soft"
  echo "$n_soft of $total functions over $soft lines (at most $max_soft allowed), none allowed over $hard"
  exit 0
fi
status=0
if [ -n "$over_hard" ]; then
  echo "error: functions over $hard lines (split them into named steps):"
  sed 's/^/  /' <<< "$over_hard"
  status=1
fi
if [ "$n_soft" -gt "$max_soft" ]; then
  echo "error: $n_soft functions over $soft lines, at most $max_soft allowed:"
  sed 's/^/  /' <<< "$over_soft"
  status=1
fi
[ "$status" = 0 ] && echo "check_function_lengths: $total functions; $n_soft over $soft lines (at most $max_soft), none over $hard"
exit $status
