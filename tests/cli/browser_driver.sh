# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Sourced by the browser tests (html_browser_test.sh, sweep_browser_test.sh): one headless Chromium
# start checks every case. A case is a page whose appended checks post their verdict ("CHECK OK
# ..." or "CHECK FAILED: ...") to the parent window; the driver page loads each case in an iframe of
# the case's width and lists the verdicts. Needs $browser (find_browser.sh), $out (a folder) and
# $fail (set to 1 on a failure).
cases=()
run_browser() {  # SECONDS URL, extra flags...: stdout = what the browser printed, stderr in $out/browser.err
  local limit=$1 url=$2; shift 2
  local profile
  profile=$(mktemp -d)
  timeout "$limit" "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --no-first-run --user-data-dir="$profile" --enable-logging=stderr --v=0 "$@" "$url" 2> "$out/browser.err"
  rm -rf "$profile"
}
console_errors() { grep -E "Uncaught|CONSOLE.*(Error|error)|:ERROR:CONSOLE" "$out/browser.err" || true; }

# Every case, checked by one browser: the driver loads each page (a query string per case, so
# that a page differing only in its #iter hash loads afresh) in an iframe of the case's width (a
# headless window is never narrower than about 500 px), waits for the verdict the checks post, and
# lists "NAME WIDTH HASH<TAB>VERDICT" lines; its title says when all are done.
add_case() { cases+=("{\"name\":\"$1\",\"page\":\"$(basename "$2")\",\"w\":$3,\"hash\":\"$4\"}"); }
check_all() {
  local list dom="$out/driver.dom.html"
  list=$(IFS=,; echo "${cases[*]}")
  cat > "$out/driver.html" << EOF
<!doctype html><html><head><title>running</title></head><body style="margin:0">
<iframe id="f" style="border:0;height:1000px"></iframe><pre id="verdicts"></pre>
<script>
var cases = [$list], i = -1, f = document.getElementById('f'), out = document.getElementById('verdicts'), timer;
function next(verdict) {
  if (i >= 0) out.textContent += cases[i].name + ' ' + cases[i].w + ' px ' + cases[i].hash + '\t' + verdict + '\n';
  clearTimeout(timer);
  if (++i >= cases.length) { document.title = 'DONE ' + cases.length; return; }
  f.style.width = cases[i].w + 'px';
  timer = setTimeout(function () { next('no verdict (the page did not load or its checks did not run)'); }, 20000);
  f.src = cases[i].page + '?case=' + i + cases[i].hash;
}
window.addEventListener('message', function (e) { next(String(e.data)); });
next();
</script></body></html>
EOF
  run_browser 900 "file://$(cd "$out" && pwd)/driver.html" --window-size=2600,1100 \
    --virtual-time-budget=$((${#cases[@]} * 20000 + 10000)) --dump-dom > "$dom" || true
  grep -q '<title>DONE' "$dom" || { echo "FAIL: the browser did not finish the ${#cases[@]} checks"; fail=1; }
  local verdicts what verdict errors
  verdicts=$(sed -n '/<pre id="verdicts">/,/<\/pre>/p' "$dom" |
    sed 's/.*<pre id="verdicts">//; s#</pre>.*##; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g')
  while IFS=$'\t' read -r what verdict; do
    [ -n "$what" ] || continue
    if [[ $verdict == "CHECK OK"* ]]; then echo "ok   $what: $verdict"; else echo "FAIL $what: $verdict"; fail=1; fi
  done <<< "$verdicts"
  local n
  n=$(grep -c $'\t' <<< "$verdicts" || true)
  [ "$n" = "${#cases[@]}" ] || { echo "FAIL: verdicts for $n of ${#cases[@]} cases"; fail=1; }
  errors=$(console_errors)
  if [ -n "$errors" ]; then echo "FAIL: console errors:"; echo "$errors"; fail=1; fi
}
