#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# sweep.html in a real browser: `cpprof sweep --render` writes the page from a committed sweep.json
# (tests/data/sweep: 2 sizes x 2 grids with an out-of-memory point, made by the fakes of
# tests/cli/sweep_test.cc; and a copy cut to one grid, whose speedup plots say why they are empty),
# then one headless Chromium start loads each page inside an iframe of an exact width
# (browser_driver.sh):
#   - no console errors, the page's checks ran;
#   - at 420 and 1600 px no horizontal overflow (scrollWidth <= clientWidth);
#   - every plot is there: each <figure> of the list below holds an <svg> with a non-zero size, and
#     its series (lines, bars) or, when it has none, a note saying why.
# Skipped (exit 77) when chromium is not installed.
#
#   tests/cli/sweep_browser_test.sh CPPROF_BINARY TESTS_DATA_DIR OUT_DIR
set -euo pipefail
cpprof=$1 data=$2 out=$3
. "$(dirname "$0")/find_browser.sh"
. "$(dirname "$0")/browser_driver.sh"
[ -n "$browser" ] || { echo "SKIP: no chromium (apt-get install chromium)"; exit 77; }
rm -rf "$out"; mkdir -p "$out"
out=$(cd "$out" && pwd)
fail=0

checks='<script>
(function () {
  var bad = [], de = document.documentElement;
  if (de.scrollWidth > de.clientWidth) bad.push("horizontal overflow: scrollWidth " + de.scrollWidth + " > clientWidth " + de.clientWidth);
  var ids = "IDS".split(" ");
  ids.forEach(function (id) {
    var f = document.getElementById(id);
    if (!f) { bad.push("no plot " + id); return; }
    var svg = f.querySelector("svg");
    if (!svg) { bad.push(id + ": no svg"); return; }
    var r = svg.getBoundingClientRect();
    if (r.width < 100 || r.height < 50) bad.push(id + ": svg " + Math.round(r.width) + "x" + Math.round(r.height));
    if (r.right > de.clientWidth + 1) bad.push(id + ": svg past the right edge");
    var n = +f.getAttribute("data-series"), drawn = svg.querySelectorAll("[data-series]").length;
    if (n > 0 && drawn === 0) bad.push(id + ": " + n + " series, none drawn");
    if (n === 0 && !f.querySelector(".note")) bad.push(id + ": empty and no note says why");
  });
  var t = bad.length ? "CHECK FAILED: " + bad.join("; ") : "CHECK OK " + de.scrollWidth + "<=" + de.clientWidth + " plots " + ids.length;
  document.title = t;
  if (window.parent !== window) window.parent.postMessage(t, "*");
})();
</script>'

check() {  # NAME IDS
  local name=$1 ids=$2 dir="$out/$1"
  mkdir -p "$dir"
  cp "$data/sweep/$name.json" "$dir/sweep.json"
  if ! "$cpprof" sweep --render --out "$dir" > "$dir/render.out" 2> "$dir/render.err"; then
    echo "FAIL $name: cpprof sweep --render failed: $(tail -1 "$dir/render.err")"; fail=1; return
  fi
  local page="$out/$name.check.html"
  sed 's#</body>#'"$(printf '%s' "${checks/IDS/$ids}" | tr '\n' ' ' | sed 's/[&#\\]/\\&/g')"'</body>#' "$dir/sweep.html" > "$page"
  for width in 420 1600; do add_case "$name" "$page" "$width" ""; done
}

check two-grids "plot-module-time-1x1 plot-module-time-1x2 plot-speedup plot-efficiency plot-exposed-transfer plot-memory plot-largest"
check one-grid "plot-module-time-1x1 plot-speedup plot-efficiency plot-exposed-transfer plot-memory plot-largest"
# Every page at every width in one browser start (browser_driver.sh).
check_all
exit $fail
