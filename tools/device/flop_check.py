#!/usr/bin/env python3
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Check cpprof's FLOP model against PyTorch's own count, module by module (docs/cost-model.md).

For each size N, builds each cpfold module the cost model knows (TriangleMultiplicationOutgoing,
..., MSAPairWeightedAveraging, the diffusion transformer's attention and transition and the whole
DiffusionTransformer on --samples samples, the ConfidenceModule with one atom per token, the
DistogramHead) at the preset's sizes, runs its forward once under torch.no_grad() on one rank (grid
1x1), and counts the matmul-class FLOPs with
torch.utils.flop_counter.FlopCounterMode (torch >= 2.1: mm, addmm, bmm, baddbmm, SDPA). The model's
numbers come from `cpprof report --print-cost-model --dims ...` (`matmul_flops`). A module agrees
when the two are within --tolerance (5 %); the exit status is 1 when one does not.

Without torch >= 2.1 (Debian's torch 1.13) it counts with torch.profiler's with_flops, which counts
aten::mm, addmm and bmm: on the CPU (one rank, attention as plain math) those are every matmul
cpfold runs, so the check holds there too; on CUDA (fused attention kernels) 1.13's numbers are
printed for reading only.

With --grid RxC on R*C ranks (torchrun) each rank runs each module on its block of the pair
tensor under cpfold's CP layout and checks its own count against the model's share of one rank
(`matmul_flops_per_rank`); rank 0 prints the rank furthest from the model.

    python3 tools/device/flop_check.py --cpprof build/cpprof --n 256,512,1024 --preset af3
    python3 tools/device/flop_check.py --cpprof build/cpprof --n 32 --preset tiny --device cpu
    torchrun --nproc_per_node=4 tools/device/flop_check.py --cpprof build/cpprof --n 512 --grid 2x2
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

# cost key -> cpfold's dims used by the model (the --dims names of docs/cost-model.md)
DIM_NAMES = {"c_z": "c_z", "c_s": "c_s", "tri_mul_hidden": "tri_mul_hidden", "tri_att_heads": "tri_att_heads",
             "tri_att_head_dim": "tri_att_head_dim", "single_att_heads": "single_att_heads",
             "transition_n": "transition_n", "c_m": "c_m", "c_opm": "c_opm", "msa_heads": "msa_heads",
             "msa_head_dim": "msa_head_dim", "c_token_diffusion": "c_token_diffusion",
             "diffusion_blocks": "diffusion_blocks", "diffusion_heads": "diffusion_heads",
             "confidence_blocks": "confidence_blocks",
             "plddt_bins": "plddt_bins", "pae_bins": "pae_bins", "pde_bins": "pde_bins",
             "distogram_bins": "distogram_bins"}


def model_numbers(cpprof, n, cfg, msa_depth, samples, dtype, grid="1x1"):
    dims = [f"N={n}", f"msa_depth={msa_depth}", f"samples={samples}", f"grid={grid}", f"dtype={dtype}"]
    dims += [f"{d}={getattr(cfg, f)}" for f, d in DIM_NAMES.items()]
    out = subprocess.run([cpprof, "report", "--print-cost-model", "--dims", ",".join(dims)], check=True,
                         capture_output=True, text=True).stdout
    return {m["key"]: m for m in json.loads(out)["modules"]}


def build(key, cfg, n, msa_depth, samples, device, dtype, layout=None):
    """The module and its forward's arguments (batch 1, all tokens valid; the diffusion modules on
    `samples` samples, the confidence head on one atom per token). With a CP `layout` (cpfold's
    PairLayout of this rank) the pair tensor is this rank's block, as under cpfold's wrapper."""
    import torch
    from cpfold.model import confidence, diffusion, msa, pairformer
    from cpfold.model.common import AttentionPairBias, ConditionedTransitionBlock
    ce = cfg.chunk_elems
    z_full = torch.randn(1, n, n, cfg.c_z)
    z = z_full if layout is None else z_full[:, layout.rows(n), layout.cols(n)].contiguous()
    s = torch.randn(1, n, cfg.c_s)
    m = torch.randn(1, msa_depth, n, cfg.c_m)
    tok = torch.ones(1, n)
    msa_mask = torch.ones(1, msa_depth, n)
    a_tok = torch.randn(samples, n, cfg.c_token_diffusion)
    s_cond = torch.randn(samples, n, cfg.c_s)
    bias = torch.randn(1, n, n, cfg.diffusion_heads)
    if key.startswith("TriangleMultiplication"):
        mod = getattr(pairformer, key)(cfg.c_z, cfg.tri_mul_hidden, ce)
        args = (z, tok)
    elif key.startswith("TriangleAttention"):
        mod = getattr(pairformer, key)(cfg.c_z, cfg.tri_att_heads, cfg.tri_att_head_dim, ce)
        args = (z, tok)
    elif key == "PairTransition":
        mod, args = pairformer.PairTransition(cfg.c_z, cfg.transition_n, ce), (z,)
    elif key == "SingleTransition":
        mod, args = pairformer.SingleTransition(cfg.c_s, cfg.transition_n), (s,)
    elif key == "AttentionPairBias":
        mod, args = AttentionPairBias(cfg.c_s, cfg.c_z, cfg.single_att_heads), (s, z, tok)
    elif key == "OuterProductMean":
        mod, args = msa.OuterProductMean(cfg.c_m, cfg.c_z, cfg.c_opm, ce), (m, msa_mask)
    elif key == "MSAPairWeightedAveraging":
        mod = msa.MSAPairWeightedAveraging(cfg.c_m, cfg.c_z, cfg.msa_heads, cfg.msa_head_dim)
        args = (m, z, tok)
    elif key == "DiffusionAttentionPairBias":
        mod = AttentionPairBias(cfg.c_token_diffusion, cfg.c_z, cfg.diffusion_heads, c_cond=cfg.c_s,
                                pair_sharded=False)
        kwargs = dict(cond=s_cond, bias=bias)
        return _place(mod, (a_tok, None, tok), kwargs, device, dtype)
    elif key == "DiffusionTransition":
        mod, args = ConditionedTransitionBlock(cfg.c_token_diffusion, cfg.c_s), (a_tok, s_cond)
    elif key == "DiffusionTransformer":
        mod = diffusion.DiffusionTransformer(cfg)
        biases = [torch.randn(1, n, n, cfg.diffusion_heads) for _ in range(cfg.diffusion_blocks)]
        return _place(mod, (a_tok, s_cond, biases, tok), {}, device, dtype)
    elif key == "ConfidenceModule":
        mod = confidence.ConfidenceModule(cfg)
        idx = torch.arange(n)[None]
        f = {"token_pad_mask": tok, "token_rep_atom": idx, "atom_to_token": idx}
        mod, (args, _) = _place(mod, (f, torch.randn(1, n, cfg.c_s_inputs), s, z), {}, device, dtype)
        coords = 10 * torch.randn(samples, n, 3, device=device)    # one atom per token, fp32 as the sampler's
        return mod, (args + (coords,), {})
    elif key == "DistogramHead":
        mod, args = confidence.DistogramHead(cfg), (z_full,)      # on the gathered z
    else:
        return None, None
    return _place(mod, args, {}, device, dtype)


def _place(mod, args, kwargs, device, dtype):
    """The module and its arguments on the device, floating tensors in the dtype; (module, (args, kwargs))."""
    import torch

    def put(a):
        if isinstance(a, torch.Tensor):
            return a.to(device=device, dtype=dtype if a.is_floating_point() else a.dtype)
        if isinstance(a, (list, tuple)):
            return type(a)(put(x) for x in a)
        if isinstance(a, dict):
            return {k: put(v) for k, v in a.items()}
        return a
    return mod.to(device=device, dtype=dtype), (put(args), put(kwargs))


def grid_context(grid, device):
    """(CPContext, rank, world) of a CP grid "RxC" on R*C ranks started as torchrun starts them
    (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT); (None, 0, 1) for 1x1."""
    rows, cols = (int(x) for x in grid.lower().split("x"))
    if rows * cols == 1:
        return None, 0, 1
    import torch.distributed as dist
    from cpfold.cp.layout import CPGrid
    from cpfold.local_ranks import init_from_env
    from cpfold.wrapper import CPContext
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world != rows * cols:
        sys.exit(f"flop_check: --grid {grid} needs {rows * cols} ranks (WORLD_SIZE is {world}): start it with "
                 f"torchrun --nproc_per_node={rows * cols} tools/device/flop_check.py --grid {grid} ...")
    init_from_env("nccl" if device == "cuda" else "gloo")
    return CPContext(CPGrid(rows, cols)), dist.get_rank(), world


def count_flops(mod, call):
    """(FLOPs, how counted); `call` = (args, kwargs)."""
    args, kwargs = call
    import torch
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        FlopCounterMode = None
    with torch.no_grad():
        if FlopCounterMode is not None:
            counter = FlopCounterMode(display=False)
            with counter:
                mod(*args, **kwargs)
            return counter.get_total_flops(), "FlopCounterMode"
        from torch.profiler import profile
        with profile(with_flops=True) as prof:
            mod(*args, **kwargs)
        mm = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"}
        return sum(e.flops for e in prof.key_averages() if e.key in mm and e.flops), "profiler(with_flops)"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cpprof", default=os.path.join(HERE, "..", "..", "build", "cpprof"))
    p.add_argument("--n", default="128,256", help="token counts, comma-separated")
    p.add_argument("--preset", default="small", help="cpfold preset for the channel sizes (tiny, small, af3)")
    p.add_argument("--msa-depth", type=int, default=None, help="MSA rows (default: the preset's)")
    p.add_argument("--samples", type=int, default=None,
                   help="diffusion samples: the diffusion modules' batch, the confidence head's loop (default: the "
                        "preset's)")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--dtype", default=None, choices=("bf16", "fp32"), help="default: bf16 on CUDA, fp32 on CPU")
    p.add_argument("--tolerance", type=float, default=5.0, help="percent")
    p.add_argument("--modules", default="", help="cost keys to check (default: all)")
    p.add_argument("--grid", default="1x1",
                   help="CP grid RxC: on R*C ranks (torchrun), each rank counts its own FLOPs against the model's "
                        "share of one rank (matmul_flops_per_rank); the pair tensor is each rank's block")
    a = p.parse_args(argv)
    import torch
    from cpfold.config import get_preset
    device = a.device if a.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    dtype_name = a.dtype or ("bf16" if device == "cuda" else "fp32")
    dtype = torch.bfloat16 if dtype_name == "bf16" else torch.float32
    preset = get_preset(a.preset)
    cfg = preset.model
    msa_depth = a.msa_depth or preset.runtime.msa_depth
    samples = a.samples or preset.runtime.samples
    ctx, rank, world = grid_context(a.grid, device)
    say = print if rank == 0 else (lambda *x, **k: None)
    say(f"torch {torch.__version__} on {device}, {dtype_name}, preset {a.preset}, msa_depth {msa_depth}, "
        f"samples {samples}, grid {a.grid}" + (f" ({world} ranks; per rank: the largest difference over ranks)"
                                               if world > 1 else ""))
    failed, checked = [], 0
    for n in [int(x) for x in a.n.split(",") if x]:
        ours = model_numbers(a.cpprof, n, cfg, msa_depth, samples, "bf16" if dtype_name == "bf16" else "fp32",
                             a.grid)
        keys = [k for k in ours if not a.modules or k in a.modules.split(",")]
        what = "matmul GFLOP" if world == 1 else "GFLOP per rank"
        say(f"\nN = {n}:  {'module':32} {'cpprof ' + what:>21} {'PyTorch ' + what:>22} {'diff %':>8}  counted by")
        for key in keys:
            torch.manual_seed(0)
            mod, call = build(key, cfg, n, msa_depth, samples, device, dtype, ctx.layout if ctx else None)
            if mod is None:
                continue
            if ctx is not None:
                from cpfold.model.common import set_context_parallel
                set_context_parallel(mod, ctx)
            theirs, how = count_flops(mod, call)
            mine = ours[key]["matmul_flops" if world == 1 else "matmul_flops_per_rank"]
            if world > 1:                           # the rank furthest from the model speaks for all
                import torch.distributed as dist
                counts = [None] * world
                dist.all_gather_object(counts, theirs)
                theirs = max(counts, key=lambda c: abs(mine - c))
            diff = 100.0 * (mine - theirs) / theirs if theirs else float("nan")
            # torch 1.13's profiler counts mm, addmm and bmm: on the CPU, one rank, those are every
            # matmul cpfold runs (attention is plain math there); on CUDA its SDPA is not counted.
            exact = how == "FlopCounterMode" or device == "cpu"
            bad = exact and not abs(diff) <= a.tolerance
            checked += exact
            if bad:
                failed.append((n, key, diff))
            say(f"          {key:32} {mine / 1e9:21.4f} {theirs / 1e9:22.4f} {diff:8.2f}  {how}"
                f"{'  <-- off by more than %.0f %%' % a.tolerance if bad else ''}")
    if not checked:
        say("\nOn CUDA PyTorch's count needs torch >= 2.1 (torch.utils.flop_counter.FlopCounterMode); "
              "the numbers above are for reading only (torch 1.13's profiler misses fused attention).")
        return 0
    say(f"\n{checked - len(failed)} of {checked} module counts within {a.tolerance} %")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
