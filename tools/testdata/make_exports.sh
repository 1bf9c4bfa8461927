#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Makes cpprof's real test exports of the tiny cpwork job on a GPU machine (2 GPUs, NCCL,
# torchrun) with nsys.
#
#   tools/testdata/make_exports.sh DEBS_DIR OUT_DIR
#
# DEBS_DIR holds Debian's libdw1/libelf1 .deb files (see ../shared/notes/device-nsys.md): used only
# when nsys's QdstrmImporter cannot load libdw.so.1. For each configuration below it writes
# OUT_DIR/<name>.tar with <name>.sqlite.xz, the CSVs that nsys's own `nsys stats` printed for it
# (the golden tests' expected output), the functions-trace JSON used, and the run's log.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
nsys_setup "$1" /tmp/cpprof-exports "$2"
export PYTHONPATH=$here${PYTHONPATH:+:$PYTHONPATH}

# functions-trace JSONs: the shipped pytorch.json plus the job's own classes
python3 - "$target/PythonFunctionsTrace/pytorch.json" "$work" <<'PY'
import json, sys
base = json.load(open(sys.argv[1]))
own = {"domain": "cpwork", "module": "cpwork.layers",
       "functions": ["TinyFold.forward", "Trunk.forward", "PairformerBlock.forward",
                     "TriMulRing.forward", "PairTransition.forward", "ConfidenceHead.forward"]}
json.dump(base + [own], open(sys.argv[2] + "/cpwork-trace.json", "w"), indent=1)
json.dump([{"domain": "inline", "module": "cpwork.inline_main", "functions": ["InlineBlock.forward"]}],
          open(sys.argv[2] + "/inline-trace.json", "w"), indent=1)
PY

full=(--trace cuda,nvtx,osrt --cuda-memory-usage true --pytorch=autograd-shapes-nvtx
      --python-functions-trace="$work/cpwork-trace.json" --cudabacktrace=all --python-backtrace=cuda)
capture cpwork-trace "" 2 --trace cuda,nvtx -- -m cpwork.run --iters 3
capture cpwork-full "$work/cpwork-trace.json" 2 "${full[@]}" -- -m cpwork.run --iters 3
capture cpwork-train "$work/cpwork-trace.json" 2 --trace cuda,nvtx --cuda-memory-usage true \
  --pytorch=autograd-shapes-nvtx --python-functions-trace="$work/cpwork-trace.json" -- \
  -m cpwork.run --mode train --iters 3
capture inline-main "$work/inline-trace.json" 2 --trace cuda,nvtx \
  --python-functions-trace="$work/inline-trace.json" -- -m cpwork.inline_main

# nsys's own stats scripts and formatters: the reference for cpprof stats
(cd "$target" && find . -name '*.py' -size -2M | tar -cf - -T - PythonFunctionsTrace/pytorch.json) | xzs > "$out/nsys-python.tar.xz"
{ "$nsys" --version; "$nsys" stats --help-reports ALL; ldd "$hostdir/QdstrmImporter"; ldd "$nsys";
  ls -la "$target" "$hostdir"; nvidia-smi; nvidia-smi topo -m; } > "$out/meta.txt" 2>&1
ls -la "$out"
