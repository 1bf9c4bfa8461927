#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# The README's quickstart as a new user runs it (issue 36, item 5): its first sh block has five
# lines; the install line names a script that takes --install; each `cpprof ...` line runs as
# written on a committed real export copied to run.sqlite and prints (or writes) something; the
# man page is generated; the docs it points to exist.
#   tests/cli/readme_quickstart_test.sh CPPROF_BINARY SOURCE_DIR OUT_DIR
set -euo pipefail
cpprof=$1 src=$2 out=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$out"
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
block=$(awk '/^```sh$/ && !done { inside = 1; next } /^```$/ && inside { inside = 0; done = 1 } inside' "$src/README.md")
lines=$(printf '%s\n' "$block" | grep -c .)
[ "$lines" = 5 ] || fail "the README's quickstart has $lines lines, not 5"
xz -dc "$src/tests/data/real/cpwork-train/cpwork-train.sqlite.xz" > "$out/run.sqlite"
while IFS= read -r line; do
  command=${line%%  #*}
  command=${command%"${command##*[![:space:]]}"}
  case $command in
    tools/quickstart.sh*)
      script=${command%% *}
      [ -x "$src/$script" ] || fail "'$command': $script is not an executable script"
      [[ $command != *--install* ]] || grep -q -- '--install' "$src/$script" || fail "$script takes no --install"
      # --help prints the usage and does nothing else: with only `cat` on PATH, anything more
      # (mkdir, apt-get, cmake) would fail.
      mkdir -p "$out/bin"
      ln -sf "$(command -v cat)" "$out/bin/cat"
      help=$(env PATH="$out/bin" /bin/bash "$src/$script" --help 2>&1) || fail "$script --help: $help"
      [[ $help == "usage: $script [--install | --help]"* ]] || fail "$script --help printed: $help"
      ;;
    cpprof\ *)
      read -r -a argv <<< "${command#cpprof }"
      (cd "$out" && env -u COLUMNS "$cpprof" "${argv[@]}" > "$out/stdout" 2> "$out/stderr") ||
        fail "'$command' failed: $(tail -1 "$out/stderr")"
      if [[ $command == *" -o "* ]]; then
        file=${command##* -o }
        file=${file%% *}
        [ -s "$out/$file" ] || fail "'$command' wrote no $file"
      else
        [ -s "$out/stdout" ] || fail "'$command' printed nothing"
      fi
      echo "ok   $command"
      ;;
    "man cpprof")
      "$cpprof" help --man | grep -q '^\.TH CPPROF 1' || fail "'cpprof help --man' (the installed man page) is no man page"
      ;;
    *) fail "a quickstart line this test does not know: '$command'" ;;
  esac
  for doc in $(printf '%s\n' "$line" | grep -o 'docs/[A-Za-z0-9_./-]*\.md' || true); do
    [ -f "$src/$doc" ] || fail "'$line' points to $doc, which does not exist"
  done
done <<< "$block"
echo "the README's quickstart works"
