#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Every source file git tracks under DIR that is ours (C++, Python, shell, CMake; a script known
# by its #! line) names its license and its copyright in its first lines:
#   // Copyright 2026 cpprof developers          (# in Python, shell and CMake; after any #! line)
#   // SPDX-License-Identifier: Apache-2.0        (LICENSE holds the text)
# Left out: fuzz crash inputs, measured results, and tests/data/spdx (the fixture that proves the
# check can fail).
#   tools/check_spdx.sh [DIR]      # default: the repository
set -euo pipefail
dir=${1:-"$(dirname "$0")/.."}
cd "$dir"
git rev-parse --is-inside-work-tree > /dev/null 2>&1 || {
  echo "check_spdx: '$dir' is not in a git checkout: run it in a clone (it checks the files git tracks)"; exit 1; }
ours() {  # file: is it a source file of ours?
  case "$1" in
    tests/fuzz/crashes/* | bench/results/* | tests/data/spdx/*) return 1 ;;  # paths from the repository's top
  esac
  case "$1" in
    *.cc | *.h | *.py | *.sh | *.cmake | CMakeLists.txt | */CMakeLists.txt) return 0 ;;
  esac
  [ -f "$1" ] && head -n 1 "$1" | grep -qE '^#!.*(sh|python)'
}
files=()
while IFS= read -r f; do
  if ours "$f"; then files+=("$f"); fi
done < <(git ls-files .)
total=${#files[@]}
missing=()
if [ "$total" -gt 0 ]; then
  # One awk over all the files: the first 4 lines of each.
  mapfile -t missing < <(awk 'FNR == 1 { spdx[FILENAME] = 0; copy[FILENAME] = 0; order[++n] = FILENAME }
    /SPDX-License-Identifier: Apache-2.0/ { spdx[FILENAME] = 1 }
    /Copyright [0-9]/ { copy[FILENAME] = 1 }
    FNR == 4 { nextfile }
    END { for (i = 1; i <= n; i++) if (!spdx[order[i]] || !copy[order[i]]) print order[i] }' "${files[@]}")
fi
if [ "${#missing[@]}" -gt 0 ]; then
  printf 'check_spdx: %s lacks the license header\n' "${missing[@]}"
  echo "check_spdx: ${#missing[@]} of $total source files lack '// Copyright YEAR cpprof developers' and" \
    "'// SPDX-License-Identifier: Apache-2.0' in their first lines ('#' in Python, shell and CMake, after any #!)"
  exit 1
fi
echo "check_spdx: checked $total source files: each names its copyright and Apache-2.0"
