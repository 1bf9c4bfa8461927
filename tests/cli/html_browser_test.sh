#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# A real browser loads `cpprof report --format html` pages of the committed real exports from
# file URLs and checks them as a user would read them:
#   - no script error (window.onerror writes errors into the title), the script finished drawing
#     (data-rendered="1"), no console errors;
#   - at 420, 800, 1600 and 2560 px no horizontal overflow (scrollWidth <= clientWidth); from 1600 px
#     the communication table whole in its box (4 ranks' columns were clipped there);
#   - every module row down to --depth is in the module table;
#   - the per-rank table shows the readout's numbers, and with #iter=N (from 0 as --window iter:N, every N) iteration
#     N's numbers (from the page's own data, which html_report_test checks against the CLI);
#   - the budget of the timeline's view has a row per rank that adds up to its span;
#   - who waited for whom, the ring waits of a known grid and the straggler's place on it are drawn;
#   - every section of the text readout is drawn (html_report_test maps the text's sections to
#     the page's), the efficiency table holds the readout's (or iteration N's) numbers;
#   - a time range selected on the timeline (window.cpprofSelectRange, as shift+drag does) over
#     the first three iterations turns the rank and module tables into those iterations' sums,
#     computed here from the page's per-iteration data;
#   - one 1600 px screenshot per export in OUT_DIR (tools/regen_screenshots.sh retakes docs/images' ones).
# The checks run in the page (a copy with a check script appended) and post their verdict to a
# driver page that loads every case (page, width, iteration) in turn in an iframe that wide and
# lists the verdicts, which --dump-dom prints: one browser start for all the checks (one per page
# was 234 s of a loaded 2-core machine's test run), then one per screenshot. Skipped (exit 77)
# when chromium is not installed (tools/install-deps.sh installs it).
#
#   tests/cli/html_browser_test.sh CPPROF_BINARY TESTS_DATA_DIR OUT_DIR
set -euo pipefail
cpprof=$1 data=$2 out=$3
. "$(dirname "$0")/find_browser.sh"
. "$(dirname "$0")/browser_driver.sh"
[ -n "$browser" ] || { echo "SKIP: no chromium (apt-get install chromium)"; exit 77; }
mkdir -p "$out"
fail=0

# The checks, appended to a copy of the page (its CSP allows inline scripts); they run after the
# page's own script. They go in on one line: no // comments in them.
checks='<script>
(function () {
  var bad = [], de = document.documentElement;
  if (de.getAttribute("data-rendered") !== "1") bad.push("not rendered");
  if (de.scrollWidth > de.clientWidth) {
    var wide = [];
    document.querySelectorAll("body *").forEach(function (e) {
      var r = e.getBoundingClientRect();
      if (r.right > de.clientWidth + 1 && wide.length < 3) wide.push(e.tagName + (e.id ? "#" + e.id : "") + "(" + Math.round(r.right) + ")");
    });
    bad.push("horizontal overflow: scrollWidth " + de.scrollWidth + " > clientWidth " + de.clientWidth + " " + wide.join(","));
  }
  var cb = document.getElementById("comm");
  if (de.clientWidth >= 1500 && cb && cb.scrollWidth > cb.clientWidth + 1) bad.push("communication table clipped: " + cb.scrollWidth + " > " + cb.clientWidth);
  var D = JSON.parse(document.getElementById("cpprof-data").textContent), R = D.report;
  var want = (R.modules.rows || []).filter(function (m) { return m.depth <= D.depth; }).map(function (m) { return m.name; });
  var got = [].map.call(document.querySelectorAll("#module-table tr[data-row]"), function (tr) { return tr.children[0].textContent.replace(/^[\u25be\u25b8]/, ""); });
  if (got.join("|") !== want.join("|")) bad.push("module rows: " + got.length + " shown, " + want.length + " to depth " + D.depth);
  var m = /iter=(\d+)/.exec(location.hash), n = m ? +m[1] : -1;
  var per = n >= 0 ? D.iterations[n].per_rank : R.per_rank;
  if (n >= 0 && de.getAttribute("data-iter") !== String(n)) bad.push("data-iter " + de.getAttribute("data-iter") + " for #iter=" + n);
  if (n >= 0 && document.querySelector("#iters button.sel span").textContent !== String(n)) bad.push("selected button is not labelled " + n);
  var trs = document.querySelectorAll("#rank-budget tr[data-rank]");
  if (trs.length !== per.length) bad.push("rank rows " + trs.length + " of " + per.length);
  per.forEach(function (r, k) {
    if (!trs[k]) return;
    var span = trs[k].children[2].textContent, wait = trs[k].children[5].textContent;
    if (span !== (r.span_ns / 1e6).toFixed(3)) bad.push("rank " + k + " window " + span + " != " + (r.span_ns / 1e6).toFixed(3));
    if (wait.split(" ")[0] !== (r.exposed_wait_ns / 1e6).toFixed(3)) bad.push("rank " + k + " waiting " + wait);
  });
  var secs = ["sec-verdict", "sec-ranks", "sec-modules", "sec-comm", "sec-imbalance", "sec-phases", "sec-kernels", "sec-memory", "sec-capture", "sec-diag"];
  if (R.efficiency || D.efficiency_note) secs.push("sec-efficiency");
  if ((R.window.iterations || []).length) secs.push("sec-iters");
  secs.forEach(function (id) {
    var e = document.getElementById(id);
    if (!e || e.offsetHeight === 0 || e.textContent.replace(/\s+/g, " ").length < 40) bad.push("section " + id + " hidden or empty");
  });
  var im = n >= 0 ? D.iterations[n].imbalance : R.imbalance;
  if ((im.waited_for_ns || []).some(function (row) { return row.some(function (x) { return x > 0; }); }) && !document.getElementById("who-waited")) bad.push("who waited for whom not drawn");
  if ((im.ring_waits || []).length && ((document.getElementById("ring-waits") || {}).textContent || "").indexOf(im.ring_waits[0].ring + " ") < 0) bad.push("ring waits not drawn");
  if (R.imbalance.grid && R.imbalance.grid.rows > 1 && R.imbalance.grid.cols > 1 && n < 0 && R.imbalance.straggler_rank >= 0 && document.getElementById("imb-head").textContent.indexOf("(row ") < 0) bad.push("straggler without its place on the grid");
  var E = R.efficiency;
  if (E && E.computed) {
    var er = document.querySelectorAll("#efficiency-table tr[data-module]");
    if (er.length !== E.modules.length) bad.push("efficiency rows " + er.length + " of " + E.modules.length);
    E.modules.forEach(function (mm, i) {
      var a = n >= 0 ? D.iterations[n].efficiency && D.iterations[n].efficiency.modules[i] : [mm.time_ns, mm.achieved_tflops, mm.percent_of_peak, mm.achieved_gbs, mm.percent_of_roof];
      /* A rate past the peak, HBM or the roofline is never shown as achieved (docs/cost-model.md). */
      var past = a && (n >= 0 ? a[2] > 100 || a[3] > E.device.hbm_tbs * 1e3 || a[4] > 100 : mm.impossible !== "");
      var want = !a ? ["-", "-", "-"] : past ? [(a[0] / 1e6).toFixed(3), "-", "impossible"] : [(a[0] / 1e6).toFixed(3), a[1].toFixed(2), a[2].toFixed(1)];
      var c = er[i] ? [4, 5, 6].map(function (j) { return er[i].children[j].textContent; }) : [];
      if (c.join("|") !== want.join("|")) bad.push("efficiency " + mm.module + ": " + c.join("|") + " != " + want.join("|"));
    });
    [].forEach.call(document.querySelectorAll("#efficiency-table td, #efficiency-comm-table td"), function (td) {
      var th = td.closest("table").querySelectorAll("th")[td.cellIndex];
      if (th && /^% (peak|roof|link|achievable)$/.test(th.textContent) && parseFloat(td.textContent) > 100) bad.push("efficiency: " + th.textContent + " " + td.textContent + " past 100");
    });
    var nImpossible = document.querySelectorAll("#efficiency-table tr.impossible, #efficiency-comm-table tr.impossible").length;
    if (nImpossible !== document.querySelectorAll("#eff-notes .impossible").length) bad.push("efficiency: " + nImpossible + " impossible rows, notes differ");
  }
  var vb = document.querySelectorAll("#view-budget-table tr");
  if (D.timeline.ranks.length && vb.length < 2) bad.push("no budget of the timeline view");
  [].forEach.call(vb, function (tr, i) {
    if (!i) return;
    var c = [].map.call(tr.children, function (td) { return parseFloat(td.textContent); });
    if (Math.abs(c[1] + c[2] + c[3] + c[4] - c[5]) > 0.0045) bad.push("view budget of rank " + c[0] + " does not add up");
  });
  var ranged = "";
  if (n < 0 && D.iterations.length >= 2) {
    var k = Math.min(3, D.iterations.length), its = D.iterations, a0 = its[0].start_ns, b0 = its[k - 1].end_ns, idx = [];
    its.forEach(function (w, i) { var mid = (w.start_ns + w.end_ns) / 2; if (mid >= a0 && mid <= b0) idx.push(i); });
    if (!window.cpprofSelectRange(a0, b0)) bad.push("range not selected");
    if (de.getAttribute("data-iters") !== idx.join(",")) bad.push("range selected iterations " + de.getAttribute("data-iters"));
    var sum = function (f) { return idx.reduce(function (s, i) { return s + f(its[i]); }, 0); };
    var rr = document.querySelectorAll("#rank-budget tr[data-rank]");
    its[0].per_rank.forEach(function (r, q) {
      var span = sum(function (w) { return w.per_rank[q].span_ns; }), wait = sum(function (w) { return w.per_rank[q].exposed_wait_ns; });
      var got2 = rr[q] ? [rr[q].children[2].textContent, rr[q].children[5].textContent.split(" ")[0]] : [];
      var want2 = [(span / 1e6).toFixed(3), (wait / 1e6).toFixed(3)];
      if (got2.join("|") !== want2.join("|")) bad.push("range: rank " + q + " " + got2.join("|") + " != " + want2.join("|"));
    });
    var m0 = its[0].modules.length ? its[0].modules[0][0] : -1;
    if (m0 >= 0) {
      var busy = 0, nr = its[0].per_rank.length;
      idx.forEach(function (i) { its[i].modules.forEach(function (e) { if (e[0] === m0) e[1].forEach(function (a) { busy += a[0]; }); }); });
      var mt = document.querySelector("#module-table tr[data-row=\"" + m0 + "\"]");
      if (!mt || mt.children[2].textContent !== (Math.floor(busy / nr) / 1e6).toFixed(3)) bad.push("range: module row " + m0 + " mean " + (mt ? mt.children[2].textContent : "none") + " != " + (Math.floor(busy / nr) / 1e6).toFixed(3));
    }
    if (!/iterations? \d/.test(document.getElementById("tables-say").textContent)) bad.push("range: the page does not say which iterations");
    ranged = " range " + idx.length + " iterations";
  }
  var t = (bad.length ? "CHECK FAILED: " + bad.join("; ") : "CHECK OK " + de.scrollWidth + "<=" + de.clientWidth + " rows " + got.length + " iter " + n + ranged);
  document.title = t;
  if (window.parent !== window) window.parent.postMessage(t, "*");
})();
</script>'


for xz in "$data"/real/*/*.sqlite.xz; do
  name=$(basename "$xz" .sqlite.xz)
  db="$out/$name.sqlite"
  [ -f "$db" ] || xz -dc "$xz" > "$db"
  # cpfold's log beside the export gives the model's sizes: the page then has an efficiency section.
  if [ -f "${xz%.sqlite.xz}.log" ]; then cp "${xz%.sqlite.xz}.log" "$out/$name.log"; fi
  html="$out/$name.sqlite.html"
  if ! "$cpprof" report "$db" --format html -o "$html" --force 2> "$out/$name.report.err"; then
    echo "FAIL $name: cpprof report --format html failed: $(tail -1 "$out/$name.report.err")"; fail=1; continue
  fi
  echo "     $name: $(stat -c %s "$html") bytes"
  page="$(cd "$out" && pwd)/$name.check.html"
  sed 's#</body>#'"$(printf '%s' "$checks" | tr '\n' ' ' | sed 's/[&#\\]/\\&/g')"'</body>#' "$html" > "$page"
  for width in 420 800 1600 2560; do add_case "$name" "$page" "$width" ""; done
  # Every iteration, from 0 (as --window iter:N), at one width.
  iterations=$(python3 -c 'import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
data = re.search(r"<script type=\"application/json\" id=\"cpprof-data\">(.*?)</script>", html, re.S).group(1)
print(len(json.loads(data.replace("<\\/", "</"))["iterations"]))' "$html")
  for ((i = 0; i < iterations; i++)); do add_case "$name" "$page" 1600 "#iter=$i"; done
  # The efficiency section with the model's sizes (tests/golden/efficiency_test.cc's --dims): the
  # readout's and an iteration's numbers, and a range of iterations.
  if [ "$name" = cpfold-ring-1x2 ]; then
    dims="N=256,c_z=64,c_s=128,tri_mul_hidden=64,tri_att_heads=4,tri_att_head_dim=16,single_att_heads=8,transition_n=4"
    dims+=",c_m=32,c_opm=16,msa_heads=4,msa_head_dim=8,msa_depth=32,blocks=8,msa_blocks=1,passes=1,grid=1x2,dtype=bf16"
    if "$cpprof" report "$db" --format html -o "$out/$name.dims.html" --force --dims "$dims" 2> "$out/$name.dims.err"; then
      sed 's#</body>#'"$(printf '%s' "$checks" | tr '\n' ' ' | sed 's/[&#\\]/\\&/g')"'</body>#' "$out/$name.dims.html" > "$out/$name.dims.check.html"
      grep -q '"efficiency":{"computed":true' "$out/$name.dims.html" || { echo "FAIL $name: no efficiency with --dims"; fail=1; }
      for hash in "" "#iter=2"; do add_case "$name.dims" "$out/$name.dims.check.html" 1600 "$hash"; done
      add_case "$name.dims" "$out/$name.dims.check.html" 420 ""
      # Sizes the capture contradicts (N 8x the run's): rows past the peak say "impossible", no
      # rate above 100 % shows, and each such row has its note.
      "$cpprof" report "$db" --format html -o "$out/$name.wrong.html" --force --dims "${dims/N=256/N=2048}" 2> "$out/$name.wrong.err" || {
        echo "FAIL $name: cpprof report with wrong --dims failed: $(tail -1 "$out/$name.wrong.err")"; fail=1; }
      grep -q '"impossible":"impossible: ' "$out/$name.wrong.html" || { echo "FAIL $name: wrong --dims gave no impossible row"; fail=1; }
      sed 's#</body>#'"$(printf '%s' "$checks" | tr '\n' ' ' | sed 's/[&#\\]/\\&/g')"'</body>#' "$out/$name.wrong.html" > "$out/$name.wrong.check.html"
      for hash in "" "#iter=1"; do add_case "$name.wrong" "$out/$name.wrong.check.html" 1600 "$hash"; done
    else
      echo "FAIL $name: cpprof report --dims failed: $(tail -1 "$out/$name.dims.err")"; fail=1
    fi
  fi
  url="file://$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"
  run_browser 120 "$url" --screenshot="$out/$name.png" --window-size=1600,2400 --hide-scrollbars > /dev/null || true
  if [ ! -s "$out/$name.png" ]; then echo "FAIL $name: no screenshot"; fail=1; fi
done
check_all
exit $fail
