# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Parity check: context-parallel run vs single-process reference.

    python -m cpfold.parity --cp0 2 --cp1 2 --n-token 64 [--mode trunk|e2e|trimul|train|all]

Launches cp0*cp1 ranks itself (gloo on CPU; ``--device cuda`` uses NCCL, one
GPU per rank), runs the CP computation, recomputes the same thing without CP
on rank 0, and prints one line per mode plus ``max_rel_err=<value>``.
The error of a tensor is max|cp - ref| / max|ref|; the reported value is the
maximum over all compared tensors (outputs, input gradients, every parameter
gradient for ``train``).  In bf16 the parameter gradients are judged together
by one normwise L2 error (``grad.global_l2``).  Exit status: 0 within ``--tol``, 1 above it,
2 if a rank failed, 124 on timeout (a hang is killed, never waited for).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

MODES = ("trimul", "trunk", "e2e", "train")


def build_parser():
    p = argparse.ArgumentParser(prog="python -m cpfold.parity", allow_abbrev=False,
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--cp0", type=int, default=2)
    p.add_argument("--cp1", type=int, default=2)
    p.add_argument("--n-token", type=int, default=64)
    p.add_argument("--n-valid", type=int, default=None,
                   help="valid tokens (default all); fewer exercises token padding")
    p.add_argument("--mode", default="trunk", choices=MODES + ("all",))
    p.add_argument("--preset", default="tiny")
    p.add_argument("--dtype", default="fp32", choices=("fp32", "bf16"))
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--tol", type=float, default=None, help="default 1e-5 (fp32) / 1e-1 (bf16: rounding noise is ~1e-2, a real bug is O(1))")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds before the job is killed")
    p.add_argument("--recycles", type=int, default=1)
    p.add_argument("--diffusion-steps", type=int, default=3)
    p.add_argument("--samples", type=int, default=2)
    p.add_argument("--msa-depth", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--chunk-elems", type=int, default=None,
                   help="override ModelConfig.chunk_elems (small values exercise the chunked paths)")
    p.add_argument("--json", action="store_true", help="also print 'parity: {json}'")
    p.add_argument("--diverge", action="store_true",
                   help="test only: ranks != 0 ask for one more diffusion sample (e2e) or recycle (trunk)")
    p.add_argument("--skip-bcast", action="store_true",
                   help="test only: do not broadcast control-flow counts (with --diverge: hangs)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--result-file", default=None, help=argparse.SUPPRESS)
    return p


# ---------------------------------------------------------------------------
# worker side
# ---------------------------------------------------------------------------
def _rel(a, b) -> float:
    a, b = a.detach().float().cpu(), b.detach().float().cpu()
    if a.shape != b.shape:
        return float("inf")
    den = float(b.abs().max()) if b.numel() else 0.0
    num = float((a - b).abs().max()) if b.numel() else 0.0
    if den == 0.0:
        return 0.0 if num == 0.0 else float("inf")
    return num / den


# LayerNorm biases that only feed a softmax bias (the same shift for every key)
# have an exactly zero gradient; their computed values are rounding noise, so
# they are compared against the largest gradient of the model instead.
ZERO_GRAD_SUFFIXES = ("pair_bias.norm.bias", "pair_norm.bias")


def _compare(pairs, low_precision: bool = False):
    if low_precision:
        # bf16 parameter gradients are sums over ~N^2 terms rounded to 8 bits:
        # per-tensor comparisons are dominated by cancellation noise, so they
        # are judged together (normwise L2 over all gradients).
        grads = {n: p for n, p in pairs.items() if n.startswith("grad.")}
        if grads:
            num = sum(float(((a.float() - b.float()) ** 2).sum()) for a, b in grads.values())
            den = sum(float((b.float() ** 2).sum()) for a, b in grads.values())
            pairs = {n: p for n, p in pairs.items() if n not in grads}
            errs = {n: _rel(a, b) for n, (a, b) in pairs.items()}
            errs["grad.global_l2"] = (num / den) ** 0.5 if den > 0 else 0.0
            worst = max(errs, key=errs.get)
            return {"max_rel_err": errs[worst], "worst": worst, "errors": errs}
    errs = {name: _rel(a, b) for name, (a, b) in pairs.items()}
    grads = [b for n, (a, b) in pairs.items() if n.startswith("grad.")]
    scale = max((float(b.detach().abs().max()) for b in grads), default=0.0)
    for name, (a, b) in pairs.items():
        if name.startswith("grad.") and name.endswith(ZERO_GRAD_SUFFIXES) and scale > 0:
            errs[name] = float((a.detach().float().cpu() - b.detach().float().cpu()).abs().max()) / scale
    worst = max(errs, key=errs.get) if errs else ""
    return {"max_rel_err": errs.get(worst, 0.0), "worst": worst, "errors": errs}


def _mode_trimul(args, grid, device, dtype):
    import torch
    import cpprof_workload as cw
    from .cp import cannon
    from .model.common import glorot_init_, set_context_parallel
    from .model.pairformer import TriangleMultiplicationIncoming, TriangleMultiplicationOutgoing
    from .wrapper import CPContext

    cfg = _config(args)
    lay = grid.layout
    N = grid.padded_tokens(args.n_token)
    R, C = lay.rows(N), lay.cols(N)
    g = torch.Generator().manual_seed(args.seed)
    pairs = {}
    # 1) the raw distributed product, all three operand kinds, with gradients
    for tx, ty in ((False, False), (False, True), (True, False)):
        X = torch.randn(1, 3, N, N, generator=g).to(device, dtype)
        Y = torch.randn(1, 3, N, N, generator=g).to(device, dtype)
        W = torch.randn(1, 3, N, N, generator=g).to(device, dtype)
        xb = X[..., R, C].clone().requires_grad_()
        yb = Y[..., R, C].clone().requires_grad_()
        cb = cannon.dist_matmul(xb, yb, tx, ty, lay, "parity")
        (cb * W[..., R, C]).sum().backward()
        full = lambda t: lay.gather_full(t.detach(), "parity", row_dim=2, col_dim=3)
        got = (full(cb), full(xb.grad), full(yb.grad))
        Xr, Yr = X.clone().requires_grad_(), Y.clone().requires_grad_()
        ref = cannon.local_matmul(Xr, Yr, tx, ty)
        (ref * W).sum().backward()
        k = f"matmul_{'T' if tx else 'N'}{'T' if ty else 'N'}"
        pairs[k] = (got[0], ref)
        pairs[k + ".dX"] = (got[1], Xr.grad)
        pairs[k + ".dY"] = (got[2], Yr.grad)
    # 2) the TriangleMultiplication modules (forward, dz and parameter grads)
    mask = torch.ones(1, N)
    mask[0, max(1, N - 3):] = 0.0          # a few masked tokens
    mask = mask.to(device, dtype)
    ctx = CPContext(grid)
    for cls in (TriangleMultiplicationOutgoing, TriangleMultiplicationIncoming):
        cw.seed_all(args.seed)
        mod = cls(cfg.c_z, cfg.tri_mul_hidden, cfg.chunk_elems)
        glorot_init_(mod, 1.0)
        mod = mod.to(device, dtype)
        z = torch.randn(1, N, N, cfg.c_z, generator=g).to(device, dtype)
        W = torch.randn(1, N, N, cfg.c_z, generator=g).to(device, dtype)
        set_context_parallel(mod, ctx)
        zb = z[:, R, C].clone().requires_grad_()
        ob = mod(zb, mask)
        (ob * W[:, R, C]).sum().backward()
        from .cp import comm
        pgrads = []
        for p in mod.parameters():
            comm.all_reduce_sum(p.grad, "parity")
            pgrads.append(p.grad.clone())
            p.grad = None
        out_full = lay.gather_full(ob.detach(), "parity")
        dz_full = lay.gather_full(zb.grad, "parity")
        set_context_parallel(mod, None)
        zr = z.clone().requires_grad_()
        orf = mod(zr, mask)
        (orf * W).sum().backward()
        name = cls.__name__
        pairs[name] = (out_full, orf)
        pairs[name + ".dz"] = (dz_full, zr.grad)
        for (pn, p), pg in zip(mod.named_parameters(), pgrads):
            pairs[f"grad.{name}.{pn}"] = (pg, p.grad)
    return pairs


def _config(args):
    from .config import get_preset
    cfg = get_preset(args.preset).model
    if args.chunk_elems:
        cfg.chunk_elems = args.chunk_elems
    return cfg


def _make_model_and_inputs(args, device, dtype):
    import cpprof_workload as cw
    from .features import cast_features, make_inputs, validate_inputs
    from .model import CPFoldModel
    cw.seed_all(args.seed)                            # identical weights on every rank
    model = CPFoldModel(_config(args)).to(device=device, dtype=dtype)
    feats = make_inputs(args.n_token, n_valid=args.n_valid, msa_depth=args.msa_depth, seed=args.seed)
    validate_inputs(feats)
    return model, cast_features(feats, device=device)


def _gen(args, device):
    import torch
    return torch.Generator(device=device).manual_seed(args.seed + 1)


def _mode_forward(args, grid, device, dtype, mode, counts_out):
    import torch
    import torch.distributed as dist
    from .cp import comm
    from .wrapper import ContextParallel
    from .model.common import set_context_parallel
    model, feats = _make_model_and_inputs(args, device, dtype)
    cp = ContextParallel(model, grid, broadcast_control=not args.skip_bcast)
    # --diverge: ranks != 0 ask for one more sample (e2e) / recycle (trunk).  The
    # wrapper's broadcast overrides it; with --skip-bcast the schedules differ.
    extra = 1 if args.diverge and dist.get_rank() != 0 else 0
    comm.reset_counts()
    with torch.no_grad():
        out = cp(feats, mode=mode, recycles=args.recycles + (extra if mode == "trunk" else 0),
                 diffusion_steps=args.diffusion_steps,
                 samples=args.samples + (extra if mode == "e2e" else 0), generator=_gen(args, device))
    counts_out[mode] = comm.counts_by_tag()
    pairs = {}
    dist.barrier()
    if dist.get_rank() == 0:
        set_context_parallel(model, None)
        with torch.no_grad():
            ref = model(feats, mode=mode, recycles=args.recycles, diffusion_steps=args.diffusion_steps,
                        samples=args.samples, generator=_gen(args, device))
        n = args.n_valid or args.n_token
        for k in ref:
            a, b = out[k], ref[k]
            if k in ("z_trunk", "pae_logits", "pde_logits"):
                a, b = a[:, :n, :n], b[:, :n, :n]
            elif k == "s_trunk":
                a, b = a[:, :n], b[:, :n]
            pairs[k] = (a, b)
    dist.barrier()
    return pairs


def _mode_train(args, grid, device, dtype):
    import torch
    import torch.distributed as dist
    from .wrapper import ContextParallel
    from .model.common import set_context_parallel
    model, feats = _make_model_and_inputs(args, device, dtype)
    cp = ContextParallel(model, grid, broadcast_control=not args.skip_bcast)
    loss, _ = cp.training_loss(feats, recycles=args.recycles, samples=args.samples,
                               generator=_gen(args, device))
    loss.backward()
    cp.sync_grads()
    grads = {n: (p.grad.clone() if p.grad is not None else None) for n, p in model.named_parameters()}
    pairs = {}
    dist.barrier()
    if dist.get_rank() == 0:
        model.zero_grad(set_to_none=True)
        set_context_parallel(model, None)
        ref_loss, _ = model.training_loss(feats, recycles=args.recycles, samples=args.samples,
                                          generator=_gen(args, device))
        ref_loss.backward()
        pairs["loss"] = (loss.detach().reshape(1), ref_loss.detach().reshape(1))
        for n, p in model.named_parameters():
            g_cp = grads[n]
            if (g_cp is None) != (p.grad is None):
                pairs[f"grad.{n}"] = (torch.zeros(1), torch.full((1,), float("nan")))   # -> inf error
                continue
            if g_cp is not None:
                pairs[f"grad.{n}"] = (g_cp, p.grad)
    dist.barrier()
    return pairs


def worker(args) -> int:
    import torch
    import torch.distributed as dist
    from .cp.layout import CPGrid
    from .local_ranks import init_from_env
    cuda = args.device == "cuda"
    rank, world, local = init_from_env("nccl" if cuda else "gloo", timeout_s=3600.0)
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    torch.set_num_threads(1)
    dist.barrier()
    grid = CPGrid(args.cp0, args.cp1)
    modes = MODES if args.mode == "all" else (args.mode,)
    results, counts = {}, {}
    for mode in modes:
        t0 = time.time()
        if mode == "trimul":
            pairs = _mode_trimul(args, grid, device, dtype)
        elif mode == "train":
            pairs = _mode_train(args, grid, device, dtype)
        else:
            pairs = _mode_forward(args, grid, device, dtype, mode, counts)
        if rank == 0:
            results[mode] = _compare(pairs, low_precision=args.dtype == "bf16")
            results[mode]["seconds"] = round(time.time() - t0, 3)
    all_counts = [None] * world
    dist.all_gather_object(all_counts, counts)
    if rank == 0 and args.result_file:
        with open(args.result_file, "w") as fh:
            json.dump({"modes": results, "comm_counts": all_counts,
                       "torch": torch.__version__, "world": world}, fh)
    dist.barrier()
    dist.destroy_process_group()
    return 0


# ---------------------------------------------------------------------------
# launcher side
# ---------------------------------------------------------------------------
def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if args.worker:
        return worker(args)
    from .cp.layout import check_grid_shape
    from .local_ranks import launch
    try:
        check_grid_shape(args.cp0, args.cp1)
    except ValueError as e:
        print(f"cpfold.parity: {e}", file=sys.stderr)
        return 2
    tol = args.tol if args.tol is not None else (1e-5 if args.dtype == "fp32" else 1e-1)
    world = args.cp0 * args.cp1
    fd, result_file = tempfile.mkstemp(prefix="cpfold_parity_", suffix=".json")
    os.close(fd)
    res = launch("cpfold.parity", argv + ["--worker", "--result-file", result_file], world,
                 timeout=args.timeout)
    tail = lambda s: "\n".join(s.strip().splitlines()[-25:])
    if res.timed_out:
        print(f"cpfold.parity: TIMEOUT after {args.timeout:.0f}s: the {world} ranks did not finish "
              f"(a hang, e.g. divergent control flow); all ranks killed")
        for r, log in enumerate(res.logs):
            if log.strip():
                print(f"--- rank {r} log tail ---\n{tail(log)}")
        return 124
    if not res.ok:
        r = res.failed_rank if res.failed_rank is not None else 0
        print(f"cpfold.parity: rank {r} failed with exit code {res.returncodes[r]}")
        print(f"--- rank {r} log tail ---\n{tail(res.logs[r])}")
        return 2
    with open(result_file) as fh:
        data = json.load(fh)
    os.unlink(result_file)
    overall = 0.0
    for mode, r in data["modes"].items():
        overall = max(overall, r["max_rel_err"])
        print(f"mode={mode} grid={args.cp0}x{args.cp1} n_token={args.n_token} dtype={args.dtype} "
              f"max_rel_err={r['max_rel_err']:.3e} worst={r['worst']} ({r['seconds']}s)")
    data.update(grid=[args.cp0, args.cp1], n_token=args.n_token, dtype=args.dtype, tol=tol,
                max_rel_err=overall, elapsed=round(res.elapsed, 2))
    if args.json:
        print("parity: " + json.dumps(data))
    print(f"max_rel_err={overall:.3e}")
    if overall > tol:
        print(f"cpfold.parity: FAILED: max_rel_err {overall:.3e} > tol {tol:.1e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
