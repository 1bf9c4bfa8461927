#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# The notebook example (docs/examples/cpprof_read.ipynb, written by tools/make_notebook.py) runs on
# a real 4-rank export: executed with Jupyter (Debian's python3 with pandas), its outputs equal the
# committed ones (so the notebook in the repository shows what the code prints today), and its
# HTML rendering loads in headless Chromium with every table and no console error.
# Skipped (exit 77) without jupyter-nbconvert, python3-ipykernel, pandas or chromium
# (tools/install-deps.sh installs them).
#
#   tests/cli/notebook_test.sh CPPROF_BINARY TESTS_DATA_DIR OUT_DIR [--update]
#   --update: write the executed notebook back to docs/examples (after a change to the readout)
set -euo pipefail
cpprof=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") data=$2 out=$3 update=${4:-}
repo=$(cd "$(dirname "$0")/../.." && pwd)
nb=$repo/docs/examples/cpprof_read.ipynb
py=/usr/bin/python3
command -v jupyter-nbconvert > /dev/null || { echo "SKIP: no jupyter-nbconvert (apt-get install jupyter-nbconvert)"; exit 77; }
"$py" -c 'import ipykernel, pandas' 2> /dev/null || { echo "SKIP: $py lacks ipykernel or pandas"; exit 77; }
. "$(dirname "$0")/find_browser.sh"
[ -n "$browser" ] || { echo "SKIP: no chromium (apt-get install chromium)"; exit 77; }
rm -rf "$out"; mkdir -p "$out"
export_db=$out/cpfold-trunk-2x2.sqlite
xz -dc "$data/real/cpfold-trunk-2x2/cpfold-trunk-2x2.sqlite.xz" > "$export_db"
cp "$nb" "$out/nb.ipynb"
# The kernel writes its runtime files under JUPYTER_RUNTIME_DIR: kept inside OUT so nothing is left.
export JUPYTER_RUNTIME_DIR=$out/runtime JUPYTER_DATA_DIR=$out/data IPYTHONDIR=$out/ipython
CPPROF=$cpprof CPPROF_EXPORT=$export_db CPPROF_PYTHON=$repo/python timeout 300 \
  jupyter-nbconvert --to notebook --execute --ExecutePreprocessor.timeout=120 --output executed.ipynb \
  "$out/nb.ipynb" > "$out/nbconvert.log" 2>&1 || { cat "$out/nbconvert.log"; echo "FAIL: the notebook did not run"; exit 1; }
# The text each code cell printed or returned, cell by cell (HTML outputs and run metadata aside).
outputs() {
  "$py" - "$1" <<'PY'
import json, sys
nb = json.load(open(sys.argv[1]))
for i, c in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
    print(f"--- cell {i}")
    for o in c.get("outputs", []):
        if o["output_type"] == "stream":
            print("".join(o["text"]), end="")
        elif o["output_type"] in ("execute_result", "display_data"):
            print("".join(o["data"].get("text/plain", "")))
        elif o["output_type"] == "error":
            print("ERROR", o["ename"], o["evalue"])
PY
}
outputs "$out/executed.ipynb" > "$out/executed.txt"
if [ "$update" = --update ]; then
  "$py" - "$out/executed.ipynb" "$nb" <<'PY'
import json, sys
nb = json.load(open(sys.argv[1]))
for c in nb["cells"]:
    c.get("metadata", {}).pop("execution", None)  # run times: not part of the example
json.dump(nb, open(sys.argv[2], "w"), indent=1, ensure_ascii=False)
open(sys.argv[2], "a").write("\n")
PY
  echo "updated $nb"
fi
outputs "$nb" > "$out/committed.txt"
if grep -q '^ERROR' "$out/executed.txt"; then
  cat "$out/executed.txt"; echo "FAIL: a cell raised"; exit 1
fi
if ! diff -u "$out/committed.txt" "$out/executed.txt" > "$out/outputs.diff"; then
  cat "$out/outputs.diff"
  echo "FAIL: the notebook prints something else today: refresh it with $0 $* --update"; exit 1
fi
jupyter-nbconvert --to html --output nb "$out/executed.ipynb" > "$out/html.log" 2>&1 || { cat "$out/html.log"; exit 1; }
profile=$(mktemp -d)
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
  --user-data-dir="$profile" --enable-logging=stderr --v=0 --dump-dom "file://$out/nb.html" \
  > "$out/nb.dom.html" 2> "$out/browser.err" || true
rm -rf "$profile"
tables=$(grep -o '<table' "$out/nb.dom.html" | wc -l)
errors=$(grep -E "Uncaught|:ERROR:CONSOLE" "$out/browser.err" || true)
[ "$tables" -ge 4 ] || { echo "FAIL: the rendered notebook shows $tables tables, not the 4 DataFrames"; exit 1; }
grep -q 'straggler: rank' "$out/nb.dom.html" || { echo "FAIL: the rendered notebook lacks the first cell's output"; exit 1; }
[ -z "$errors" ] || { echo "FAIL: console errors:"; echo "$errors"; exit 1; }
echo "ok: the notebook ran on $(basename "$export_db"): $(grep -c '^--- cell' "$out/executed.txt") code cells, same outputs as committed; its HTML shows $tables tables in $(basename "$browser")"
rm -rf "$out"
