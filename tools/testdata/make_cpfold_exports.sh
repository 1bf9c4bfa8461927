#!/usr/bin/env bash
# Real nsys exports of the reference workload cpfold (python/cpfold) on a GPU machine, with a
# functions-trace JSON naming cpfold's classes: an e2e run on a 1 x 2 grid and, with 4 GPUs, a
# trunk run on a 2 x 2 grid (Cannon). Test data for the CP readout.
#
#   tools/testdata/make_cpfold_exports.sh DEBS_DIR OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
nsys_setup "$1" /tmp/cpprof-cpfold-exports "$2"
export PYTHONPATH=$here/../../python${PYTHONPATH:+:$PYTHONPATH}
python3 -m cpfold.trace_spec --nsys "$work/cpfold-trace.json" || exit 1
gpus=$(nvidia-smi -L | wc -l)
small=(--preset small --n-token 256 --recycles 1 --diffusion-steps 4 --samples 2 --iters 2 --warmup 1 --dtype bf16)
capture cpfold-e2e-1x2 "$work/cpfold-trace.json" 2 --trace cuda,nvtx --cuda-memory-usage true \
  --python-functions-trace="$work/cpfold-trace.json" -- -m cpfold.run --mode e2e --cp0 1 --cp1 2 "${small[@]}"
if [ "$gpus" -ge 4 ]; then
  capture cpfold-trunk-2x2 "$work/cpfold-trace.json" 4 --trace cuda,nvtx --cuda-memory-usage true \
    --python-functions-trace="$work/cpfold-trace.json" -- -m cpfold.run --mode trunk --cp0 2 --cp1 2 "${small[@]}"
fi
ls -la "$out"
