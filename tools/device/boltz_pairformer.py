# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""boltz-cp's serial Pairformer (NVIDIA-Digital-Bio/boltz-cp, `boltz.model.layers.pairformer`),
fp32 on one GPU, as a user's own model under `cpprof profile` (issue 35, item 6): no NVTX of its
own, its classes named by the functions-trace JSON or, without it, by the launches' Python
backtraces. Iterations are marked with cpprof_workload (`cpprof:iter<i>`, `cpprof-iter:` lines).

    PYTHONPATH=python:<boltz-cp>/src python3 tools/device/boltz_pairformer.py --n-token 256

boltz-cp is not part of cpprof: tools/device/profile_check.sh's `boltz` step brings its source
(a snapshot of the public repository, carried to the GPU machine) and runs this file.
"""
import argparse
import importlib.util
import sys
import types

import torch

import cpprof_workload as cw


def _optional_kernels_absent():
    """boltz-cp asks `importlib.util.find_spec("cuequivariance_torch.primitives.triangle")`, which
    raises (rather than answering None) when cuequivariance is not installed; empty packages in its
    place make it answer None: boltz then runs its own PyTorch code, as with use_kernels=False."""
    if importlib.util.find_spec("cuequivariance_torch") is None:
        for name in ("cuequivariance_torch", "cuequivariance_torch.primitives"):
            module = types.ModuleType(name)
            module.__path__ = []
            sys.modules[name] = module


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-token", type=int, default=256)
    ap.add_argument("--token-s", type=int, default=384, help="single representation channels (Boltz: 384)")
    ap.add_argument("--token-z", type=int, default=128, help="pair representation channels (Boltz: 128)")
    ap.add_argument("--blocks", type=int, default=2)
    ap.add_argument("--iters", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args()
    _optional_kernels_absent()
    from boltz.model.layers.pairformer import PairformerModule  # the public code, unchanged

    cw.seed_all(0)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    # v2: the layer passes k_in to its attention, which only the Boltz-2 AttentionPairBias takes.
    model = PairformerModule(args.token_s, args.token_z, args.blocks, dropout=0.0, v2=True).to(dev).eval()
    n = args.n_token
    s = torch.randn(1, n, args.token_s, device=dev)
    z = torch.randn(1, n, n, args.token_z, device=dev)
    mask = torch.ones(1, n, device=dev)
    pair_mask = torch.ones(1, n, n, device=dev)
    print(f"boltz-pairformer: n_token={n} token_s={args.token_s} token_z={args.token_z} blocks={args.blocks} "
          f"dtype=fp32 torch={torch.__version__}", flush=True)
    for i, warm in cw.schedule(args.iters, args.warmup):
        with cw.iteration(i, warmup=warm), torch.no_grad():
            s_out, z_out = model(s, z, mask, pair_mask)
    print(f"boltz-pairformer: done, |z| = {float(z_out.float().norm()):.4g}", flush=True)


if __name__ == "__main__":
    main()
