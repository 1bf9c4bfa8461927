#!/usr/bin/env bash
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
# Real nsys exports of the reference workload cpfold (python/cpfold) on a GPU machine, with a
# functions-trace JSON naming cpfold's classes: an e2e run on a 1 x 2 grid, with 4 GPUs a trunk
# run on a 2 x 2 grid (Cannon), and a training run on 1 x 2 with autograd's NVTX ranges
# (--pytorch=autograd-nvtx: backward work per module). Test data for the CP readout.
#   inject: the small trunk on a 1 x 2 ring three times, with known faults (issue 12):
#     cpfold-ring-1x2        no injection (baseline)
#     cpfold-ring-1x2-delay  --inject-delay 1:2  rank 1 syncs and sleeps 2 ms before every p2p
#                            batch: rank 0 waits ~2 ms in its SendRecv per batch (truth in the
#                            .log: rank 1's cpfold-inject line, delays_total / delays_timed)
#     cpfold-ring-1x2-slow   --inject-slow 1:3   rank 1 runs each TriMul GEMM 3 times
#   options: one small trunk workload captured with the "fast" and the "full" nsys option sets
#     (cpfold-opts-fast-1x2, cpfold-opts-full-1x2): same GPU work, different options.
#
#   pairs: one GPU, the what-if replay's proof pairs (issue 37; no nsys stats: they live in
#     tests/data/real-pairs/, outside the stats goldens; --cuda-graph-trace node in all four):
#     cpfold-trunk-1x1       the trunk at N = 1024 (GPU-bound), 2 Pairformer blocks
#     cpfold-trunk-1x1-slow  the same with --inject-slow 0:6 (each TriMul GEMM run 6 times)
#     cpfold-launch-1x1      the trunk at N = 64 (launch-bound)
#     cpfold-launch-1x1-graph  the same, each timed forward replayed from a CUDA graph (--cuda-graph)
#   graph: the last two alone (one session, one machine: the pair 'launch-gaps:0' is checked on)
#
#   backtrace: one GPU, attribution without NVTX module ranges (issue 35 item 5): the trunk captured
#     with --python-backtrace=cuda and autograd shapes, re-exported with --include-json true (the
#     backtraces' payloads), with and without the functions-trace JSON (tests/data/real-bt/):
#     cpfold-bt-json-1x1     with the JSON: module ranges and backtraces (the reference tree)
#     cpfold-bt-1x1          without it: the module tree must come from the backtraces
#
#   tools/testdata/make_cpfold_exports.sh DEBS_DIR OUT_DIR [e2e] [trunk] [train] [inject] [options] [pairs] [graph]
#   (default: e2e trunk train inject options). CAPTURE_TIMEOUT / STATS_TIMEOUT (s) bound each nsys profile / nsys stats.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
nsys_setup "$1" /tmp/cpprof-cpfold-exports "$2"
export PYTHONPATH=$here/../../python${PYTHONPATH:+:$PYTHONPATH}
python3 -m cpfold.trace_spec --nsys "$work/cpfold-trace.json" || exit 1
gpus=$(nvidia-smi -L | wc -l)
steps=" ${*:3} "; [ "$steps" = "  " ] && steps=" e2e trunk train inject options "
small=(--preset small --n-token 256 --recycles 1 --diffusion-steps 4 --samples 2 --iters 2 --warmup 1 --dtype bf16)
if [[ $steps == *" e2e "* ]]; then
  capture cpfold-e2e-1x2 "$work/cpfold-trace.json" 2 --trace cuda,nvtx --cuda-memory-usage true \
    --python-functions-trace="$work/cpfold-trace.json" -- -m cpfold.run --mode e2e --cp0 1 --cp1 2 "${small[@]}"
fi
if [[ $steps == *" train "* ]]; then
  # Small on purpose: autograd's ranges make training exports big (no CPU sampling either), and
  # only the reports the tests compare with.
  all_reports=$reports; reports="cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum nvtx_sum nvtx_gpu_proj_sum"
  capture cpfold-train-1x2 "$work/cpfold-trace.json" 2 --trace cuda,nvtx --cuda-memory-usage true \
    --sample none --cpuctxsw none --pytorch=autograd-nvtx --python-functions-trace="$work/cpfold-trace.json" -- \
    -m cpfold.run --mode train --cp0 1 --cp1 2 --preset small --n-token 128 --recycles 0 --diffusion-steps 2 \
    --samples 1 --iters 1 --warmup 1 --dtype bf16
  reports=$all_reports
fi
if [[ $steps == *" trunk "* ]] && [ "$gpus" -ge 4 ]; then
  capture cpfold-trunk-2x2 "$work/cpfold-trace.json" 4 --trace cuda,nvtx --cuda-memory-usage true \
    --python-functions-trace="$work/cpfold-trace.json" -- -m cpfold.run --mode trunk --cp0 2 --cp1 2 "${small[@]}"
fi
# The truth of an export, printed: files, nsys rc, cpfold's per-iteration walls, the injection.
show() {
  local d=$work/$1
  echo "== $1 summary"; ls -la "$d"
  grep -E '^rc=' "$d/$1.log"
  grep -oE '(cpfold-inject|cpfold-graph|cpprof-iter): .*' "$d/$1.log"
}
fast=(--trace cuda,nvtx --cuda-memory-usage true --sample none --cpuctxsw none
      --python-functions-trace="$work/cpfold-trace.json")
full=(--trace cuda,nvtx,osrt --cuda-memory-usage true --pytorch=autograd-shapes-nvtx
      --python-functions-trace="$work/cpfold-trace.json" --cudabacktrace=all --python-backtrace=cuda)
ring=(-m cpfold.run --mode trunk --cp0 1 --cp1 2 --preset small --n-token 256 --recycles 0
      --iters 3 --warmup 1 --dtype bf16)
if [[ $steps == *" inject "* ]] && [ "$gpus" -ge 2 ]; then
  capture cpfold-ring-1x2 "$work/cpfold-trace.json" 2 "${fast[@]}" -- "${ring[@]}"
  show cpfold-ring-1x2
  capture cpfold-ring-1x2-delay "$work/cpfold-trace.json" 2 "${fast[@]}" -- "${ring[@]}" --inject-delay 1:2
  show cpfold-ring-1x2-delay
  capture cpfold-ring-1x2-slow "$work/cpfold-trace.json" 2 "${fast[@]}" -- "${ring[@]}" --inject-slow 1:3
  show cpfold-ring-1x2-slow
fi
if [[ $steps == *" options "* ]] && [ "$gpus" -ge 2 ]; then
  # One Pairformer block, one iteration, no warm-up: the full set (a CUDA backtrace per API call,
  # CPU sampling, autograd ranges) made 7 MB of .sqlite.xz from 8 blocks and 2 iterations.
  opts_run=(-m cpfold.run --mode trunk --cp0 1 --cp1 2 --preset small --n-token 256 --recycles 0
            --blocks 1 --iters 1 --warmup 0 --dtype bf16)
  capture cpfold-opts-fast-1x2 "$work/cpfold-trace.json" 2 "${fast[@]}" -- "${opts_run[@]}"
  show cpfold-opts-fast-1x2
  capture cpfold-opts-full-1x2 "$work/cpfold-trace.json" 2 "${full[@]}" -- "${opts_run[@]}"
  show cpfold-opts-full-1x2
fi
# One GPU, no nsys stats (the pairs live outside the stats goldens): the options and the
# launch-bound trunk (N = 64) of the pairs, and that pair captured eager and from a CUDA graph.
one=(--trace cuda,nvtx --cuda-memory-usage true --sample none --cpuctxsw none --cuda-graph-trace node
     --python-functions-trace="$work/cpfold-trace.json")
# --prepare-once in both halves: the graph cannot hold the features' host syncs, so neither run
# prepares them per iteration, and the pair differs only in how the forward is launched.
launch_small=(-m cpfold.run --mode trunk --preset small --n-token 64 --recycles 0 --blocks 2 --iters 5 --warmup 1
              --dtype bf16 --prepare-once)
launch_pair() {
  capture cpfold-launch-1x1 "$work/cpfold-trace.json" 1 "${one[@]}" -- "${launch_small[@]}"
  show cpfold-launch-1x1
  capture cpfold-launch-1x1-graph "$work/cpfold-trace.json" 1 "${one[@]}" -- "${launch_small[@]}" --cuda-graph
  show cpfold-launch-1x1-graph
}
if [[ $steps == *" pairs "* ]]; then
  all_reports=$reports; reports=""
  big=(-m cpfold.run --mode trunk --preset small --n-token 1024 --recycles 0 --blocks 2 --iters 3 --warmup 1
       --dtype bf16)
  capture cpfold-trunk-1x1 "$work/cpfold-trace.json" 1 "${one[@]}" -- "${big[@]}"
  show cpfold-trunk-1x1
  capture cpfold-trunk-1x1-slow "$work/cpfold-trace.json" 1 "${one[@]}" -- "${big[@]}" --inject-slow 0:6
  show cpfold-trunk-1x1-slow
  launch_pair
  reports=$all_reports
elif [[ $steps == *" graph "* ]]; then
  # The launch-bound pair alone, both halves in one session on one machine: eager, and each timed
  # forward replayed from a CUDA graph (what 'launch-gaps:0' predicts from the eager one).
  all_reports=$reports; reports=""
  launch_pair
  reports=$all_reports
fi
if [[ $steps == *" backtrace "* ]]; then
  all_reports=$reports; reports=""
  # CPU sampling stays on: without it nsys collects no CUDA backtraces ("CUDA backtraces will not be
  # collected because CPU sampling is disabled"), and no Python ones.
  bt=(--trace cuda,nvtx --cpuctxsw none --pytorch=autograd-shapes-nvtx --python-backtrace=cuda
      --cudabacktrace=kernel)
  bt_run=(-m cpfold.run --mode trunk --preset small --n-token 256 --recycles 0 --blocks 2 --iters 2 --warmup 1
          --dtype bf16)
  REEXPORT="--include-json true" capture cpfold-bt-json-1x1 "$work/cpfold-trace.json" 1 "${bt[@]}" \
    --python-functions-trace="$work/cpfold-trace.json" -- "${bt_run[@]}"
  show cpfold-bt-json-1x1
  REEXPORT="--include-json true" capture cpfold-bt-1x1 "" 1 "${bt[@]}" -- "${bt_run[@]}"
  show cpfold-bt-1x1
  # The model's source as captured: the backtraces name its files and lines, and the readout
  # names their methods from it (extracted, it is what cpprof report --source-root DIR reads).
  tar -C "$here/../../python" --exclude=__pycache__ -cJf "$out/source.tar.xz" cpfold
  # NCCL's NVTX payloads (communicator id, ranks, message size: issue 37 item 5), on as many
  # ranks as there are GPUs.
  KEEP_DEFAULT_EXPORT=1 REEXPORT="--include-json true" capture nccl-payloads "" "$gpus" --trace cuda,nvtx --sample none --cpuctxsw none \
    -- "$here/nccl_payloads.py"
  reports=$all_reports
fi
ls -la "$out"
