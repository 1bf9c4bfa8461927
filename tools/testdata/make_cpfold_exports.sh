#!/usr/bin/env bash
# Real nsys exports of the reference workload cpfold (python/cpfold) on a GPU machine, with a
# functions-trace JSON naming cpfold's classes: an e2e run on a 1 x 2 grid, with 4 GPUs a trunk
# run on a 2 x 2 grid (Cannon), and a training run on 1 x 2 with autograd's NVTX ranges
# (--pytorch=autograd-nvtx: backward work per module). Test data for the CP readout.
#
#   tools/testdata/make_cpfold_exports.sh DEBS_DIR OUT_DIR [e2e] [trunk] [train]   (default: all)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
nsys_setup "$1" /tmp/cpprof-cpfold-exports "$2"
export PYTHONPATH=$here/../../python${PYTHONPATH:+:$PYTHONPATH}
python3 -m cpfold.trace_spec --nsys "$work/cpfold-trace.json" || exit 1
gpus=$(nvidia-smi -L | wc -l)
steps=" ${*:3} "; [ "$steps" = "  " ] && steps=" e2e trunk train "
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
ls -la "$out"
