#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Checks that every C++ file in git is formatted as .clang-format says (clang-format from apt).
#   tools/check_format.sh          # check: lists the files that differ, exits 1 if any
#   tools/check_format.sh --fix    # rewrite them in place
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format > /dev/null || {
  echo "check_format: clang-format is missing: run tools/install-deps.sh (apt-get install clang-format)"; exit 1; }
mapfile -t files < <(git ls-files '*.cc' '*.h' | grep -v '^tests/data/')
mapfile -t bad < <(clang-format --dry-run --Werror "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)
if [ "${1:-}" = "--fix" ]; then
  if [ "${#bad[@]}" -gt 0 ]; then
    clang-format -i "${bad[@]}"
    printf 'check_format: reformatted %s\n' "${bad[@]}"
  fi
  echo "check_format: checked ${#files[@]} files, reformatted ${#bad[@]}"
  exit 0
fi
if [ "${#bad[@]}" -gt 0 ]; then
  printf 'check_format: %s is not formatted\n' "${bad[@]}"
  echo "check_format: ${#bad[@]} of ${#files[@]} files differ from .clang-format: run tools/check_format.sh --fix"
  exit 1
fi
echo "check_format: checked ${#files[@]} files: all formatted as .clang-format says (nothing changed)"
