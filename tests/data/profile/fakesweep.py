# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""A fake workload for cpprof sweep's tests, run through --arg-template: answers like cpfold does
(a `cpfold-config:` line with the model's sizes on rank 0, one `cpprof-iter: {...}` line per rank
and iteration, warm-up marked) with made-up, deterministic numbers that scale with the size and
the grid (nothing sleeps), and runs out of memory like PyTorch above `--oom-above N` (N x sqrt(ranks) on a grid: a traceback
ending in torch.OutOfMemoryError on stderr, exit 1). `--crash-at N` fails otherwise at that size (while `--crash-flag FILE` exists, when given);
`--hang-at N` sleeps an hour at that size; `--touch FILE` creates FILE at the end; `--oom-when-iters K` runs out of memory in the run of K timed iterations only (the capture's)."""
import argparse
import json
import os
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--n", type=int, required=True)
p.add_argument("--cp0", type=int, default=1)
p.add_argument("--cp1", type=int, default=1)
p.add_argument("--iters", type=int, default=3)
p.add_argument("--warmup", type=int, default=1)
p.add_argument("--oom-above", type=int, default=0,
               help="run out of memory when N is larger on one rank (R ranks: N x sqrt(R)); 0: never")
p.add_argument("--crash-at", type=int, default=0, help="fail (not out of memory) at this N")
p.add_argument("--crash-flag", help="with --crash-at: fail only while this file exists")
p.add_argument("--oom-when-iters", type=int, default=0,
               help="run out of memory in the run with this many timed iterations (the capture's, say)")
p.add_argument("--hang-at", type=int, default=0, help="sleep an hour at this N (for --timeout)")
p.add_argument("--touch", help="rank 0 creates this file at the end (a fake nvidia-smi then says GPU 0 is busy)")
p.add_argument("--log", help="append one line per run (N, grid, iterations) to this file")
a = p.parse_args()
rank = int(os.environ.get("RANK", "0"))


def say(line):  # one write per line: the ranks share the pipe (print writes the text and its newline apart)
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


ranks = a.cp0 * a.cp1
if a.log and rank == 0:
    with open(a.log, "a") as f:
        f.write(f"n={a.n} grid={a.cp0}x{a.cp1} iters={a.iters} warmup={a.warmup}\n")
if rank == 0:
    model = {"c_z": 64, "c_s": 128, "tri_mul_hidden": 64, "tri_att_heads": 4, "tri_att_head_dim": 16,
             "pairformer_blocks": 2}
    say("cpfold-config: " + json.dumps({"mode": "trunk", "n_token": a.n, "grid": [a.cp0, a.cp1],
                                        "dtype": "bf16", "recycles": 0, "model": model}))
if a.hang_at and a.n == a.hang_at:
    time.sleep(3600)
if a.crash_at and a.n == a.crash_at and (not a.crash_flag or os.path.exists(a.crash_flag)):
    sys.stderr.write(f"fakesweep rank {rank}: RuntimeError: NCCL error: unhandled system error\n")
    sys.exit(1)
if (a.oom_above and a.n * a.n / ranks > a.oom_above * a.oom_above) or a.oom_when_iters == a.iters:
    sys.stderr.write("Traceback (most recent call last):\n  File \"cpfold/run.py\", line 250, in main\n"
                     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total "
                     "capacity of 139.81 GiB of which 2.10 GiB is free.\n")
    sys.exit(1)
for it in range(a.warmup + a.iters):
    wall = 0.001 * (a.n / 256) ** 2 / ranks * (3 if it < a.warmup else 1) * (1 + 0.01 * (it % 3))
    peak = a.n * a.n * 4096 // ranks + rank
    say("cpprof-iter: " + json.dumps({"rank": rank, "iter": it, "warmup": it < a.warmup, "wall_s": round(wall, 6),
                                      "wall_ms": round(wall * 1e3, 3), "peak_mem_bytes": peak,
                                      "peak_mem_kind": "cuda_max_allocated", "planned": a.warmup + a.iters}))
if a.touch and rank == 0:
    open(a.touch, "w").close()
