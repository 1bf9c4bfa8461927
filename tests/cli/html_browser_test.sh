#!/usr/bin/env bash
# A real browser loads `cpprof report --format html` pages of the committed real exports from
# file URLs: no script error (window.onerror writes errors into the title), the script finished
# drawing (data-rendered="1"), no console errors; one screenshot per export for a look.
# Skipped (exit 77) when chromium is not installed (tools/install-deps.sh installs it).
#
#   tests/cli/html_browser_test.sh CPPROF_BINARY TESTS_DATA_DIR OUT_DIR
set -euo pipefail
cpprof=$1 data=$2 out=$3
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" > /dev/null; then browser=$(command -v "$b"); break; fi
done
[ -n "$browser" ] || { echo "SKIP: no chromium (apt-get install chromium)"; exit 77; }
mkdir -p "$out"
fail=0
run_browser() {  # URL, extra flags...: stdout = what the browser printed, stderr kept in $out/browser.err
  local url=$1; shift
  local profile
  profile=$(mktemp -d)
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --no-first-run --user-data-dir="$profile" --enable-logging=stderr --v=0 "$@" "$url" 2> "$out/browser.err"
  rm -rf "$profile"
}
for xz in "$data"/real/*/*.sqlite.xz; do
  name=$(basename "$xz" .sqlite.xz)
  db="$out/$name.sqlite"
  [ -f "$db" ] || xz -dc "$xz" > "$db"
  html="$out/$name.html"
  "$cpprof" report "$db" --format html -o "$html" --force 2> /dev/null
  url="file://$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"
  run_browser "$url" --dump-dom > "$out/$name.dom.html"
  errors=$(grep -E "Uncaught|CONSOLE.*(Error|error)|:ERROR:CONSOLE" "$out/browser.err" || true)
  title=$(grep -o -m1 '<title>[^<]*</title>' "$out/$name.dom.html" || true)
  if ! grep -q 'data-rendered="1"' "$out/$name.dom.html"; then
    echo "FAIL $name: the page's script did not finish drawing (no data-rendered=\"1\"); title: $title"; fail=1
  elif [[ $title == *"cpprof: error"* ]]; then
    echo "FAIL $name: script error: $title"; fail=1
  elif [ -n "$errors" ]; then
    echo "FAIL $name: console errors:"; echo "$errors"; fail=1
  else
    echo "ok   $name: $title ($(stat -c %s "$html") bytes)"
  fi
  run_browser "$url" --screenshot="$out/$name.png" --window-size=1600,1200 --hide-scrollbars > /dev/null || true
  if [ ! -s "$out/$name.png" ]; then echo "FAIL $name: no screenshot"; fail=1; fi
done
exit $fail
