#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Installs what cpprof needs to build and test on Debian 12 / Ubuntu 22.04+ (apt only);
# chromium runs the HTML report in a real browser (tests/cli/html_browser_test.sh); pandas is
# cpprof_read's optional DataFrames (python/tests/test_cpprof_read.py); zsh checks the generated
# completion parses and man-db/groff that the man page renders without warnings
# (tests/cli/install_test.sh skips those checks without them); jupyter-nbconvert and ipykernel run
# the notebook example (tests/cli/notebook_test.sh); clang and its libFuzzer runtime build the
# fuzz target (bench/fuzz.sh); git names the commit in `cpprof --version` (cmake/build_commit.cmake);
# universal-ctags measures function lengths (tools/check_function_lengths.sh); bash-completion
# makes bash load the installed completion in new shells.
set -euo pipefail
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  cmake ninja-build g++ pkg-config clang libclang-rt-14-dev \
  libsqlite3-dev libcli11-dev nlohmann-json3-dev libfmt-dev libre2-dev libgtest-dev clang-format \
  liblzma-dev zlib1g-dev libzstd-dev \
  sqlite3 xz-utils time git universal-ctags bash-completion \
  python3 python3-torch python3-pytest python3-pandas zsh dpkg-dev man-db groff-base \
  jupyter-nbconvert python3-ipykernel python3-nbformat \
  chromium > /dev/null
echo "tools/install-deps.sh: dependencies installed"
