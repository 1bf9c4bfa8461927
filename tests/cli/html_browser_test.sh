#!/usr/bin/env bash
# A real browser loads `cpprof report --format html` pages of the committed real exports from
# file URLs and checks them as a user would read them:
#   - no script error (window.onerror writes errors into the title), the script finished drawing
#     (data-rendered="1"), no console errors;
#   - at 420, 800, 1600 and 2560 px no horizontal overflow (scrollWidth <= clientWidth);
#   - every module row down to --depth is in the module table;
#   - the per-rank table shows the readout's numbers, and with #iter=N (from 1, every N) iteration
#     N's numbers (from the page's own data, which html_report_test checks against the CLI);
#   - the budget of the timeline's view has a row per rank that adds up to its span;
#   - one 1600 px screenshot per export in OUT_DIR (docs/images holds two of them).
# The checks run in the page (a copy with a check script appended) and write their verdict into
# the title, which --dump-dom prints. Skipped (exit 77) when chromium is not installed
# (tools/install-deps.sh installs it).
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
console_errors() { grep -E "Uncaught|CONSOLE.*(Error|error)|:ERROR:CONSOLE" "$out/browser.err" || true; }

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
  var D = JSON.parse(document.getElementById("cpprof-data").textContent), R = D.report;
  var want = (R.modules.rows || []).filter(function (m) { return m.depth <= D.depth; }).map(function (m) { return m.name; });
  var got = [].map.call(document.querySelectorAll("#module-table tr[data-row]"), function (tr) { return tr.children[0].textContent.replace(/^[\u25be\u25b8]/, ""); });
  if (got.join("|") !== want.join("|")) bad.push("module rows: " + got.length + " shown, " + want.length + " to depth " + D.depth);
  var m = /iter=(\d+)/.exec(location.hash), n = m ? +m[1] : 0;
  var per = n ? D.iterations[n - 1].per_rank : R.per_rank;
  if (n && de.getAttribute("data-iter") !== String(n)) bad.push("data-iter " + de.getAttribute("data-iter") + " for #iter=" + n);
  var trs = document.querySelectorAll("#rank-budget tr[data-rank]");
  if (trs.length !== per.length) bad.push("rank rows " + trs.length + " of " + per.length);
  per.forEach(function (r, k) {
    if (!trs[k]) return;
    var span = trs[k].children[2].textContent, wait = trs[k].children[5].textContent;
    if (span !== (r.span_ns / 1e6).toFixed(3)) bad.push("rank " + k + " window " + span + " != " + (r.span_ns / 1e6).toFixed(3));
    if (wait.split(" ")[0] !== (r.exposed_wait_ns / 1e6).toFixed(3)) bad.push("rank " + k + " waiting " + wait);
  });
  var vb = document.querySelectorAll("#view-budget-table tr");
  if (D.timeline.ranks.length && vb.length < 2) bad.push("no budget of the timeline view");
  [].forEach.call(vb, function (tr, i) {
    if (!i) return;
    var c = [].map.call(tr.children, function (td) { return parseFloat(td.textContent); });
    if (Math.abs(c[1] + c[2] + c[3] + c[4] - c[5]) > 0.0045) bad.push("view budget of rank " + c[0] + " does not add up");
  });
  var t = (bad.length ? "CHECK FAILED: " + bad.join("; ") : "CHECK OK " + de.scrollWidth + "<=" + de.clientWidth + " rows " + got.length + " iter " + n);
  document.title = t;
  if (window.parent !== window) window.parent.postMessage(t, "*");
})();
</script>'

# The page at an exact width: inside an iframe that wide (a headless window is never narrower than
# about 500 px); the checks post their verdict to the wrapper, whose title --dump-dom prints.
wrapper="$(cd "$out" && pwd)/width.html"
cat > "$wrapper" << 'EOF'
<!doctype html><html><head><title>no verdict from the page</title></head><body style="margin:0">
<iframe id="f" style="border:0;height:1000px"></iframe>
<script>
var q = /w=(\d+)&p=([^&#]+)/.exec(location.search), f = document.getElementById('f');
window.addEventListener('message', function (e) { document.title = String(e.data); });
f.style.width = q[1] + 'px'; f.src = q[2] + location.hash;
</script></body></html>
EOF

check_page() {  # NAME PAGE_WITH_CHECKS WIDTH HASH
  local name=$1 page=$2 width=$3 hash=$4
  local url="file://$wrapper?w=$width&p=$(basename "$page")$hash" dom="$out/$name.$width${hash//[#=]/_}.dom.html"
  run_browser "$url" --window-size="$((width + 40)),1100" --virtual-time-budget=5000 --dump-dom > "$dom" || true
  local title errors
  title=$(grep -o -m1 '<title>[^<]*</title>' "$dom" | sed 's/<[^>]*>//g; s/&lt;/</g' || true)
  errors=$(console_errors)
  if [[ $title == *"cpprof: error"* ]]; then
    echo "FAIL $name $width px $hash: script error: $title"; fail=1
  elif [[ $title != "CHECK OK"* ]]; then
    echo "FAIL $name $width px $hash: ${title:-no title (the page did not load)}"; fail=1
  elif [ -n "$errors" ]; then
    echo "FAIL $name $width px $hash: console errors:"; echo "$errors"; fail=1
  else
    echo "ok   $name $width px $hash: $title"
  fi
}

for xz in "$data"/real/*/*.sqlite.xz; do
  name=$(basename "$xz" .sqlite.xz)
  db="$out/$name.sqlite"
  [ -f "$db" ] || xz -dc "$xz" > "$db"
  html="$out/$name.sqlite.html"
  if ! "$cpprof" report "$db" --format html -o "$html" --force 2> "$out/$name.report.err"; then
    echo "FAIL $name: cpprof report --format html failed: $(tail -1 "$out/$name.report.err")"; fail=1; continue
  fi
  echo "     $name: $(stat -c %s "$html") bytes"
  page="$(cd "$out" && pwd)/$name.check.html"
  sed 's#</body>#'"$(printf '%s' "$checks" | tr '\n' ' ' | sed 's/[&#\\]/\\&/g')"'</body>#' "$html" > "$page"
  for width in 420 800 1600 2560; do check_page "$name" "$page" "$width" ""; done
  # Every iteration, from 1, at one width.
  iterations=$(python3 -c 'import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
data = re.search(r"<script type=\"application/json\" id=\"cpprof-data\">(.*?)</script>", html, re.S).group(1)
print(len(json.loads(data.replace("<\\/", "</"))["iterations"]))' "$html")
  for ((i = 1; i <= iterations; i++)); do check_page "$name" "$page" 1600 "#iter=$i"; done
  url="file://$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"
  run_browser "$url" --screenshot="$out/$name.png" --window-size=1600,2400 --hide-scrollbars > /dev/null || true
  if [ ! -s "$out/$name.png" ]; then echo "FAIL $name: no screenshot"; fail=1; fi
done
exit $fail
