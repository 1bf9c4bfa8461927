#!/usr/bin/env bash
# Makes cpprof's real test exports on a GPU machine (2 GPUs, NCCL, torchrun) with nsys.
#
#   tools/testdata/make_exports.sh DEBS_DIR OUT_DIR
#
# DEBS_DIR holds Debian's libdw1/libelf1 .deb files (see ../shared/notes/device-nsys.md): used only
# when nsys's QdstrmImporter cannot load libdw.so.1. For each configuration below it writes
# OUT_DIR/<name>.tar with <name>.sqlite.xz, the CSVs that nsys's own `nsys stats` printed for it
# (the golden tests' expected output), the functions-trace JSON used, and the run's log.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
debs=$1
out=$2
work=/tmp/cpprof-exports
rm -rf "$work"; mkdir -p "$work" "$out"
nsys=${NSYS:-$(command -v nsys || ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | sort -V | tail -1)}
target=$(dirname "$nsys")
hostdir=$(ls -d "$(dirname "$target")"/linux-desktop-*-x64 2>/dev/null | head -1)
echo "nsys: $nsys ($("$nsys" --version))"
echo "importer dir: $hostdir"
if ldd "$hostdir/QdstrmImporter" | grep -q 'not found'; then
  mkdir -p /tmp/dl
  for f in "$debs"/*.deb; do dpkg -x "$f" /tmp/dl; done
  export LD_LIBRARY_PATH=/tmp/dl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "importer needed the libdw fix; LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
fi
if ldd "$hostdir/QdstrmImporter" | grep -q 'not found'; then  # the combination seen working
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$hostdir
  echo "added the importer's own dir; LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
fi
ldd "$hostdir/QdstrmImporter" | grep 'not found' && echo "importer still broken"
# xz-utils and bc may be missing from the image: fall back to Python's lzma and awk
xzs() { if command -v xz >/dev/null; then xz -9 -T0; else
  python3 -c 'import lzma,shutil,sys; f=lzma.LZMAFile(sys.stdout.buffer,"w",preset=9); shutil.copyfileobj(sys.stdin.buffer,f); f.close()'; fi; }
xzf() { xzs <"$1" >"$1.xz" && rm -f "$1"; }
export PYTHONPATH=$here${PYTHONPATH:+:$PYTHONPATH}
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}

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

reports="cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum nvtx_sum nvtx_gpu_proj_sum nvtx_kern_sum cuda_api_sum osrt_sum"
launch="torchrun --standalone --nnodes=1 --nproc_per_node=2"

capture() {  # name json nsys-options... -- workload...
  local name=$1 json=$2; shift 2
  local opts=() ; while [ "$1" != "--" ]; do opts+=("$1"); shift; done; shift
  local d=$work/$name; mkdir -p "$d"
  echo "== $name: nsys profile ${opts[*]} $launch $*" | tee "$d/$name.log"
  local t0=$EPOCHREALTIME
  timeout 300 "$nsys" profile -o "$d/$name" --force-overwrite true --export sqlite "${opts[@]}" \
     $launch "$@" >>"$d/$name.log" 2>&1
  echo "rc=$? wall_s=$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $t0}")" | tee -a "$d/$name.log"
  ls -la "$d" | tee -a "$d/$name.log"
  [ -f "$d/$name.sqlite" ] || { echo "no sqlite for $name"; tail -30 "$d/$name.log"; return; }
  for r in $reports; do
    "$nsys" stats --report "$r" --format csv --output "$d/$name" "$d/$name.sqlite" >>"$d/$name.log" 2>&1
  done
  [ -n "$json" ] && cp "$json" "$d/"
  rm -f "$d/$name.nsys-rep"
  xzf "$d/$name.sqlite"
  tail -5 "$d/$name.log"
  tar -C "$work" -cf "$out/$name.tar" "$name"
}

full=(--trace cuda,nvtx,osrt --cuda-memory-usage true --pytorch=autograd-shapes-nvtx
      --python-functions-trace="$work/cpwork-trace.json" --cudabacktrace=all --python-backtrace=cuda)
capture cpwork-trace "" --trace cuda,nvtx -- -m cpwork.run --iters 3
capture cpwork-full "$work/cpwork-trace.json" "${full[@]}" -- -m cpwork.run --iters 3
capture cpwork-train "$work/cpwork-trace.json" --trace cuda,nvtx --cuda-memory-usage true \
  --pytorch=autograd-shapes-nvtx --python-functions-trace="$work/cpwork-trace.json" -- \
  -m cpwork.run --mode train --iters 3
capture inline-main "$work/inline-trace.json" --trace cuda,nvtx \
  --python-functions-trace="$work/inline-trace.json" -- -m cpwork.inline_main

# nsys's own stats scripts and formatters: the reference for cpprof stats
(cd "$target" && find . -name '*.py' -size -2M | tar -cf - -T - PythonFunctionsTrace/pytorch.json) | xzs > "$out/nsys-python.tar.xz"
{ "$nsys" --version; "$nsys" stats --help-reports ALL; ldd "$hostdir/QdstrmImporter"; ldd "$nsys";
  ls -la "$target" "$hostdir"; nvidia-smi; nvidia-smi topo -m; } > "$out/meta.txt" 2>&1
ls -la "$out"
