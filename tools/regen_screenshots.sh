#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Retakes the HTML page's screenshots in docs/images with headless Chromium, as
# tests/cli/html_browser_test.sh loads the page (same flags, 1600 px wide, no scrollbars):
#   html-cpwork-train.png            the bundled example export (README's first command), 1600x2400
#   html-cpfold-trunk-2x2.png        the 2x2 trunk (docs/html-report.md), 1600x2400
#   html-range-cpfold-trunk-2x2.png  the 2x2 trunk with iterations 2 and 3 selected on the timeline
#                                    (#range=START_NS,END_NS over their windows), 1600x1500
# Each page is written as a user would write it, with cpfold's log beside the export (the model's
# sizes: the efficiency section). PNGs are recompressed losslessly with optipng when it is
# installed (apt-get install optipng).
#
#   tools/regen_screenshots.sh [BUILD_DIR]      (default: build)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
cpprof=$(cd "$build" && pwd)/cpprof
. "$repo/tests/cli/find_browser.sh"
[ -n "$browser" ] || { echo "regen_screenshots: no chromium (apt-get install chromium)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
images=$repo/docs/images

page() {  # EXPORT_NAME: $tmp/NAME.html, from the committed export and its log
  local name=$1 src=$repo/tests/data/real/$1
  xz -dc "$src/$name.sqlite.xz" > "$tmp/$name.sqlite"
  if [ -f "$src/$name.log" ]; then cp "$src/$name.log" "$tmp/$name.log"; fi
  "$cpprof" report "$tmp/$name.sqlite" --format html -o "$tmp/$name.html" --force
}
shot() {  # URL PNG WIDTH,HEIGHT
  local profile
  profile=$(mktemp -d -p "$tmp")
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
    --user-data-dir="$profile" --hide-scrollbars --window-size="$3" --screenshot="$2" "$1" > /dev/null 2>&1 || true
  [ -s "$2" ] || { echo "regen_screenshots: no screenshot of $1" >&2; exit 1; }
  if command -v optipng > /dev/null; then optipng -quiet -o2 -strip all "$2"; fi
  echo "$(basename "$2"): $(stat -c %s "$2") bytes"
}

page cpwork-train
shot "file://$tmp/cpwork-train.html" "$images/html-cpwork-train.png" 1600,2400
page cpfold-trunk-2x2
shot "file://$tmp/cpfold-trunk-2x2.html" "$images/html-cpfold-trunk-2x2.png" 1600,2400
# Iterations 2 and 3 (from 1): from the start of the first to the end of the second, in ns since
# the capture started, as the page's own data gives them.
range=$(python3 -c 'import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
data = re.search(r"<script type=\"application/json\" id=\"cpprof-data\">(.*?)</script>", html, re.S).group(1)
its = json.loads(data.replace("<\\/", "</"))["iterations"]
print("%d,%d" % (its[1]["start_ns"], its[2]["end_ns"]))' "$tmp/cpfold-trunk-2x2.html")
shot "file://$tmp/cpfold-trunk-2x2.html#range=$range" "$images/html-range-cpfold-trunk-2x2.png" 1600,1500
