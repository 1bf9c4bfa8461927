# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Shared by the scripts that make real nsys exports on a GPU machine (source it; bash).
#   nsys_setup DEBS_DIR WORK_DIR OUT_DIR   find nsys, apply the libdw fix if its importer needs it
#   capture NAME JSON NPROC nsys-options... -- workload-arguments...
#       profiles `torchrun --standalone --nproc_per_node=NPROC workload...` under nsys, exports
#       SQLite, runs `nsys stats` for $reports (CSV), xz-compresses the sqlite and tars the
#       folder into OUT_DIR/NAME.tar (with JSON, the functions-trace file used, if not "")
reports="cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum nvtx_sum nvtx_gpu_proj_sum nvtx_kern_sum cuda_api_sum osrt_sum"

nsys_setup() {
  debs=$1 work=$2 out=$3
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
  export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
}

# xz-utils may be missing from the image: fall back to Python's lzma
xzs() { if command -v xz >/dev/null; then xz -9 -T0; else
  python3 -c 'import lzma,shutil,sys; f=lzma.LZMAFile(sys.stdout.buffer,"w",preset=9); shutil.copyfileobj(sys.stdin.buffer,f); f.close()'; fi; }
xzf() { xzs <"$1" >"$1.xz" && rm -f "$1"; }

capture() {
  local name=$1 json=$2 nproc=$3; shift 3
  local opts=() ; while [ "$1" != "--" ]; do opts+=("$1"); shift; done; shift
  local launch="torchrun --standalone --nnodes=1 --nproc_per_node=$nproc"
  local d=$work/$name; mkdir -p "$d"
  echo "== $name: nsys profile ${opts[*]} $launch $*" | tee "$d/$name.log"
  local t0=$EPOCHREALTIME
  timeout "${CAPTURE_TIMEOUT:-300}" "$nsys" profile -o "$d/$name" --force-overwrite true --export sqlite "${opts[@]}" \
     $launch "$@" >>"$d/$name.log" 2>&1
  echo "rc=$? wall_s=$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $t0}")" | tee -a "$d/$name.log"
  ls -la "$d" | tee -a "$d/$name.log"
  [ -f "$d/$name.sqlite" ] || { echo "no sqlite for $name"; tail -30 "$d/$name.log"; return; }
  # REEXPORT="--include-json true": export the report again with those options (nsys 2025.3.1
  # leaves NVTX extended payloads, Python backtraces and NCCL's communicator ids, out by default).
  if [ -n "${REEXPORT:-}" ]; then
    # KEEP_DEFAULT_EXPORT=1: keep the profile's own export beside it, as <name>.default.sqlite.xz.
    [ -n "${KEEP_DEFAULT_EXPORT:-}" ] && cp "$d/$name.sqlite" "$d/$name.default.sqlite" && xzf "$d/$name.default.sqlite"
    echo "== nsys export --type sqlite $REEXPORT" >>"$d/$name.log"
    # shellcheck disable=SC2086
    timeout "${STATS_TIMEOUT:-300}" "$nsys" export --type sqlite $REEXPORT --force-overwrite true -o "$d/$name.sqlite" \
      "$d/$name.nsys-rep" >>"$d/$name.log" 2>&1
    echo "export rc=$?" >>"$d/$name.log"
  fi
  for r in $reports; do
    timeout "${STATS_TIMEOUT:-300}" "$nsys" stats --report "$r" --format csv --output "$d/$name" "$d/$name.sqlite" >>"$d/$name.log" 2>&1
  done
  [ -n "$json" ] && cp "$json" "$d/"
  rm -f "$d/$name.nsys-rep"
  xzf "$d/$name.sqlite"
  # Big CSVs (autograd ranges make nvtx_sum tens of MB) are kept xz-compressed; the tests read
  # <name>_<report>.csv.xz when there is no .csv.
  for f in "$d"/*.csv; do [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 1000000 ] && xzf "$f"; done
  tail -5 "$d/$name.log"
  tar -C "$work" -cf "$out/$name.tar" "$name"
}
