#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# `cmake --install` into a temporary DESTDIR, then the installed cpprof run from there: it starts,
# finds its Python helpers and the reference workload beside it, and its man page and bash/zsh
# completions are where man and the shells look, equal to what the binary generates (so they
# cannot drift from its flags). Then `cpack -G DEB` (when dpkg-deb is there): the package holds
# the same files under /usr.
#   tests/cli/install_test.sh BUILD_DIR TEST_DATA_DIR
set -euo pipefail
build=$(realpath "$1")
data=$(realpath "$2")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cpprof-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

DESTDIR=$tmp/root cmake --install "$build" --prefix /usr/local >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log"; fail "cmake --install failed"; }
root=$tmp/root/usr/local
bin=$root/bin/cpprof
for f in bin/cpprof share/man/man1/cpprof.1.gz share/doc/cpprof/copyright share/doc/cpprof/changelog.Debian.gz share/bash-completion/completions/cpprof share/zsh/site-functions/_cpprof \
         share/cpprof/python/cpprof_helpers/probe_python.py share/cpprof/python/cpprof_helpers/launch_workload.py \
         share/cpprof/python/cpfold/run.py share/cpprof/python/cpfold/presets.json \
         share/cpprof/python/cpprof_read/__init__.py share/cpprof/python/cpprof_workload/__init__.py; do
  [ -e "$root/$f" ] || fail "$f was not installed (under $root)"
done
if find "$root/share/cpprof" -name __pycache__ | grep -q .; then fail "__pycache__ installed"; fi
[ -x "$bin" ] || fail "$bin is not executable"

"$bin" --version | grep -q '^cpprof [0-9]' || fail "the installed binary does not start"
# The generated files are what the installed binary generates.
cmp -s <("$bin" help --man) <(zcat "$root/share/man/man1/cpprof.1.gz") || fail "installed man page differs from 'cpprof help --man'"
cmp -s <("$bin" help --completion bash) "$root/share/bash-completion/completions/cpprof" || fail "bash completion differs"
cmp -s <("$bin" help --completion zsh) "$root/share/zsh/site-functions/_cpprof" || fail "zsh completion differs"

# man renders it without warnings (groff's own checks), when man is there.
if command -v man >/dev/null && command -v groff >/dev/null; then
  warnings=$(MANWIDTH=100 man --warnings -l "$root/share/man/man1/cpprof.1.gz" 2>&1 >/dev/null || true)
  [ -z "$warnings" ] || fail "man reports: $warnings"
  MANWIDTH=100 man -l "$root/share/man/man1/cpprof.1.gz" 2>/dev/null | grep -q 'cpprof stats' || fail "man page lacks 'cpprof stats'"
fi

# bash: the script parses, and completes commands, flags and flag values.
bash -n "$root/share/bash-completion/completions/cpprof" || fail "bash completion does not parse"
complete_words() {  # words... (the last is the one being completed)
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _cpprof; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$root/share/bash-completion/completions/cpprof" "$@"
}
[ "$(complete_words cpprof st)" = stats ] || fail "bash: 'cpprof st<TAB>' gave '$(complete_words cpprof st)'"
complete_words cpprof stats --time | grep -qx -- --timeunit || fail "bash: 'cpprof stats --time<TAB>'"
[ "$(complete_words cpprof report --format h)" = html ] || fail "bash: 'cpprof report --format h<TAB>'"
if command -v zsh >/dev/null; then
  zsh -n "$root/share/zsh/site-functions/_cpprof" || fail "zsh completion does not parse"
fi

# The installed binary runs a real command.
xz -dc "$data/real/cpwork-train/cpwork-train.sqlite.xz" >"$tmp/run.sqlite"
"$bin" stats -r cuda_gpu_kern_sum -f csv "$tmp/run.sqlite" | cmp -s - "$data/real/cpwork-train/cpwork-train_cuda_gpu_kern_sum.csv" ||
  fail "installed cpprof stats differs from nsys's CSV"

# cpprof_read imports from the installed tree and finds the installed binary on PATH.
PATH=$root/bin:$PATH PYTHONPATH=$root/share/cpprof/python python3 -c '
import sys, cpprof_read
r = cpprof_read.load(sys.argv[1])
assert r.world_size == 2 and r.straggler_rank == 1, r
' "$tmp/run.sqlite" || fail "cpprof_read from the installed tree"

# A module written by the installed scaffold falls back to the installed cpprof_workload.
printf '{"inputs": [{"name": "x", "shape": ["N_token"], "dtype": "float32", "kind": "float"}]}' >"$tmp/contract.json"
"$bin" scaffold --model mypkg.model:Fold --contract "$tmp/contract.json" -o "$tmp/profile_fold.py" 2>"$tmp/scaffold.err" ||
  fail "scaffold: $(cat "$tmp/scaffold.err")"
grep -q "sys.path.append(\"$root/share/cpprof/python\")" "$tmp/profile_fold.py" ||
  fail "the scaffolded module does not name the installed cpprof_workload: $(grep sys.path.append "$tmp/profile_fold.py")"

# cpprof_workload imports from the installed tree (with a Python that has torch).
for py in /usr/bin/python3 python3; do
  if "$py" -c 'import torch' 2>/dev/null; then
    PYTHONPATH=$root/share/cpprof/python "$py" -c 'import cpprof_workload as cw; assert cw.broadcast_counts(n=1) == {"n": 1}' ||
      fail "cpprof_workload from the installed tree"
    break
  fi
done

# The Debian package from the same install rules (prefix /usr: zsh's vendor-completions).
if command -v dpkg-deb >/dev/null && command -v cpack >/dev/null; then
  (cd "$tmp" && cpack -G DEB -B "$tmp/pkg" --config "$build/CPackConfig.cmake" >"$tmp/cpack.log" 2>&1) || {
    cat "$tmp/cpack.log"; fail "cpack -G DEB failed"; }
  deb=$(ls "$tmp"/pkg/cpprof_*.deb)
  contents=$(dpkg-deb -c "$deb")
  for f in ./usr/bin/cpprof ./usr/share/man/man1/cpprof.1.gz ./usr/share/doc/cpprof/copyright \
           ./usr/share/doc/cpprof/changelog.Debian.gz ./usr/share/bash-completion/completions/cpprof \
           ./usr/share/zsh/vendor-completions/_cpprof ./usr/share/cpprof/python/cpprof_helpers/probe_python.py; do
    grep -q " $f\$" <<<"$contents" || fail "the .deb lacks $f"
  done
  dpkg-deb -f "$deb" Depends | grep -q libsqlite3 || fail "the .deb's Depends lacks SQLite: $(dpkg-deb -f "$deb" Depends)"
  # Completions load in new shells only through bash-completion; the maintainer is the project's.
  dpkg-deb -f "$deb" Recommends | grep -q bash-completion || fail "the .deb does not recommend bash-completion"
  maintainer=$(sed -n 's/^set(CPPROF_MAINTAINER_NAME "\(.*\)")$/\1/p' "$data/../../CMakeLists.txt")
  dpkg-deb -f "$deb" Maintainer | grep -qF "$maintainer <" || fail "Maintainer: $(dpkg-deb -f "$deb" Maintainer)"
  # The copyright file is DEP-5 (machine-readable) and names Apache-2.0.
  dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/cpprof/copyright >"$tmp/copyright"
  head -n 1 "$tmp/copyright" | grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
    fail "copyright is not DEP-5"
  grep -q '^License: Apache-2.0$' "$tmp/copyright" || fail "copyright does not name Apache-2.0"
  # The binary is stripped; its debug info is in the -dbgsym package, linked by build id.
  dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/bin/cpprof >"$tmp/cpprof.deb-bin"
  if command -v readelf >/dev/null; then
    readelf -S "$tmp/cpprof.deb-bin" | grep -q '\.debug_info' && fail "the .deb's cpprof is not stripped"
  fi
  dbg=$(ls "$tmp"/pkg/cpprof-dbgsym_*.ddeb 2>/dev/null) || fail "no cpprof-dbgsym package beside the .deb"
  dpkg-deb -c "$dbg" | grep -q '/usr/lib/debug/.build-id/.*\.debug$' || fail "cpprof-dbgsym lacks the .debug file"
fi
echo "install_test: ok"
