# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Entry point for one CP workload run (one process per rank, e.g. under torchrun).

    torchrun --standalone --nproc_per_node=4 -m cpfold.run --mode trunk --n-token 1024 --cp0 2 --cp1 2
    python -m cpfold.run --mode e2e --n-token 64 --preset tiny        # single process

Modes: ``trunk`` (embedder + MSA + recycled Pairformer, all-gathered output),
``e2e`` (+ diffusion sampling + confidence), ``train`` (trunk + diffusion
training step: forward, synthetic loss, backward, grad sync, Adam step).
Backend: NCCL on CUDA, gloo on CPU.  Built on the workload kit (``cpprof_workload``: seeding,
control counts from rank 0, iteration schedule and marks): each rank prints the kit's
``cpprof-iter: {json}`` line per iteration (docs/workload-kit.md, "The iteration line") inside an
NVTX range ``cpfold:warmupK`` / ``cpfold:iterK`` on CUDA; rank 0 ends with one line
``cpfold: {json}`` holding per-iteration wall times and peak memory per rank.

Fault injection (proof data for the readout's waiting/straggler split):
``--inject-delay RANK:MS[:MATCH]`` makes rank RANK synchronize its device and
sleep MS ms before every p2p batch (ring shift, Cannon skew/shift, exchange,
reshard) whose tag contains MATCH (all batches without MATCH), in warm-up and
timed iterations alike; ``--inject-slow RANK:FACTOR`` runs every local GEMM of
rank RANK's distributed TriMul product FACTOR times (extra results dropped; on
one GPU, the single GEMM of the unsharded product).
Each rank prints one ``cpfold-inject: {json}`` line (what was injected, how
many delays were applied in total / in the timed iterations / per iteration).
``--cuda-graph`` (trunk, one GPU): the timed forwards are replays of one CUDA
graph captured after the warm-up; a ``cpfold-graph: {json}`` line says whether
the capture worked and, if not, why and where (the forward then runs eagerly).
``--prepare-once`` prepares the input features (atom indices and masks: two
host syncs) in the first forward only: what a CUDA graph needs (``--cuda-graph``
implies it), and what the eager run it is compared with should do alike.

Flag names never prefix a torchrun option (torchrun's argparse would take
e.g. ``--n`` as an ambiguous abbreviation of --nnodes/--nproc-per-node/...):
hence ``--n-token``; ``tests/test_cli.py`` checks this.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys

from .config import DEFAULT_PRESET, PRESETS

# The NVTX iteration ranges' prefix: cpfold:warmupK / cpfold:iterK (the kit's default is cpprof).
RANGE_PREFIX = "cpfold"

RUN_FLAGS = ("--mode", "--n-token", "--cp0", "--cp1", "--recycles", "--diffusion-steps",
             "--samples", "--dtype", "--iters", "--warmup", "--preset", "--blocks",
             "--msa-depth", "--atoms-per-token", "--seed", "--checkpoint", "--device",
             "--backend", "--pg-timeout", "--nvtx-modules", "--json-out", "--lr",
             "--inject-delay", "--inject-slow", "--cuda-graph", "--prepare-once")

# Useful MATCH values for --inject-delay (p2p tags are module class names, ".bwd" in backward):
# TriangleMultiplication (both TriMul rings / Cannon products), TriangleMultiplicationOutgoing,
# TriangleMultiplicationIncoming, TriangleAttention (bias exchange / all-to-all reshards),
# TriangleAttentionStartingNode, TriangleAttentionEndingNode, .bwd (backward batches only).
P2P_TAGS = ("TriangleMultiplicationOutgoing", "TriangleMultiplicationIncoming",
            "TriangleAttentionStartingNode", "TriangleAttentionEndingNode")


def _parse_rank(text: str) -> int:
    try:
        r = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"RANK must be an integer, got {text!r}")
    if r < 0:
        raise argparse.ArgumentTypeError(f"RANK must be >= 0, got {r}")
    return r


def parse_inject_delay(text: str) -> dict:
    """``RANK:MS[:MATCH]`` -> {rank, ms, match}."""
    parts = text.split(":", 2)
    if len(parts) < 2 or not parts[1]:
        raise argparse.ArgumentTypeError(f"expected RANK:MS[:MATCH], got {text!r}")
    rank = _parse_rank(parts[0])
    try:
        ms = float(parts[1])
    except ValueError:
        raise argparse.ArgumentTypeError(f"MS must be a number, got {parts[1]!r}")
    if not ms >= 0 or ms == float("inf"):
        raise argparse.ArgumentTypeError(f"MS must be a finite number >= 0, got {parts[1]}")
    match = parts[2] if len(parts) == 3 else None
    if match == "":
        raise argparse.ArgumentTypeError("MATCH is empty (leave out ':MATCH' to delay every batch)")
    return dict(rank=rank, ms=ms, match=match)


def parse_inject_slow(text: str) -> dict:
    """``RANK:FACTOR`` -> {rank, factor} (FACTOR an integer >= 1)."""
    parts = text.split(":")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected RANK:FACTOR, got {text!r}")
    rank = _parse_rank(parts[0])
    try:
        factor = int(parts[1])
    except ValueError:
        raise argparse.ArgumentTypeError(f"FACTOR must be an integer >= 1, got {parts[1]!r}")
    if factor < 1:
        raise argparse.ArgumentTypeError(f"FACTOR must be an integer >= 1, got {factor}")
    return dict(rank=rank, factor=factor)


def build_parser():
    p = argparse.ArgumentParser(prog="python -m cpfold.run", allow_abbrev=False,
                                description="cpfold CP workload (see module docstring)")
    p.add_argument("--mode", default="trunk", choices=("trunk", "e2e", "train"))
    p.add_argument("--n-token", type=int, default=256, help="tokens (padded to the grid if needed)")
    p.add_argument("--cp0", type=int, default=1, help="CP grid rows")
    p.add_argument("--cp1", type=int, default=1, help="CP grid columns")
    p.add_argument("--recycles", type=int, default=None, help="extra trunk passes (preset default)")
    p.add_argument("--diffusion-steps", type=int, default=None)
    p.add_argument("--samples", type=int, default=None, help="diffusion samples")
    p.add_argument("--dtype", default=None, choices=("bf16", "fp32"),
                   help="default: bf16 on CUDA, fp32 on CPU")
    p.add_argument("--iters", type=int, default=3, help="timed iterations")
    p.add_argument("--warmup", type=int, default=1, help="untimed iterations first")
    p.add_argument("--preset", default=DEFAULT_PRESET, choices=tuple(PRESETS))
    p.add_argument("--blocks", type=int, default=None, help="override Pairformer depth")
    p.add_argument("--msa-depth", type=int, default=None)
    p.add_argument("--atoms-per-token", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint", default=None, metavar="DIR",
                   help="load weights from DIR (cpfold checkpoint); if DIR has none, save the fresh ones there")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--backend", default="auto", choices=("auto", "nccl", "gloo"))
    p.add_argument("--pg-timeout", type=float, default=600.0, help="process-group timeout (s)")
    p.add_argument("--nvtx-modules", action="store_true",
                   help="CUDA: NVTX range per cpfold module forward (alternative to nsys functions-trace)")
    p.add_argument("--json-out", default=None, help="rank 0 also writes the final JSON here")
    p.add_argument("--lr", type=float, default=1e-4, help="Adam learning rate (train)")
    p.add_argument("--inject-delay", type=parse_inject_delay, default=None, metavar="RANK:MS[:MATCH]",
                   help="fault injection: on rank RANK only, before every p2p batch (ring shift, Cannon "
                        "skew/shift, exchange, reshard; with MATCH only batches whose tag contains MATCH, "
                        "e.g. TriangleMultiplication, TriangleAttention, .bwd) synchronize the device and "
                        "sleep MS ms, in warm-up and timed iterations alike: the other ranks wait MS in "
                        "their SendRecv kernels per delayed batch")
    p.add_argument("--inject-slow", type=parse_inject_slow, default=None, metavar="RANK:FACTOR",
                   help="fault injection: on rank RANK only, every local GEMM of the distributed TriMul "
                        "product (cp/cannon.py) runs FACTOR times (integer >= 1), extra results discarded")
    p.add_argument("--cuda-graph", action="store_true",
                   help="CUDA, trunk on one GPU: capture one forward in a CUDA graph after the "
                        "warm-up and replay it in each timed iteration (no launch gaps between its "
                        "kernels); prints one cpfold-graph: line (captured, or why not); implies "
                        "--prepare-once")
    p.add_argument("--prepare-once", action="store_true",
                   help="prepare the input features (atom indices, masks: host syncs) in the first "
                        "forward only, then reuse them (the inputs never change between iterations)")
    return p


def prepare_features_once(model):
    """``--prepare-once``: the model's first ``prepare_features`` result serves every later forward
    (the inputs never change between cpfold's iterations). Preparing them syncs the host (a boolean
    mask's ``nonzero``, ``int(counts.max())``), which a CUDA graph cannot capture."""
    prepared = {}
    prepare = model.prepare_features

    def prepare_once(feats):
        if "f" not in prepared:
            prepared["f"] = prepare(feats)
        return prepared["f"]

    model.prepare_features = prepare_once


def _capture_graph(forward, device, use_cuda):
    """One forward captured in a CUDA graph (after a run on a side stream, as torch asks), or None
    with the reason printed: the ``cpfold-graph: {json}`` line says which."""
    import torch

    if not use_cuda:
        print("cpfold-graph: " + json.dumps(dict(captured=False, why="no CUDA")), flush=True)
        return None
    try:
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            forward()
        torch.cuda.current_stream(device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        # A synchronising op invalidates the capture: raise at it, so the reason names it.
        torch.cuda.set_sync_debug_mode("error")
        try:
            with torch.cuda.graph(graph):
                forward()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    except Exception as e:  # a host sync or an unsupported op in the forward
        import traceback
        where = [f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.name}" for f in traceback.extract_tb(e.__traceback__)]
        print("cpfold-graph: " + json.dumps(dict(captured=False, why=f"{type(e).__name__}: {e}", where=where[-8:])),
              flush=True)
        return None
    print("cpfold-graph: " + json.dumps(dict(captured=True)), flush=True)
    return graph


def check_args(parser, args) -> None:
    """Checks that need more than one flag (argparse error, exit 2)."""
    world = args.cp0 * args.cp1
    if args.cuda_graph and (world != 1 or args.mode != "trunk" or args.warmup < 1):
        parser.error("--cuda-graph needs one GPU (--cp0 1 --cp1 1), --mode trunk and --warmup >= 1")
    for flag, spec in (("--inject-delay", args.inject_delay), ("--inject-slow", args.inject_slow)):
        if spec is not None and spec["rank"] >= world:
            parser.error(f"{flag}: rank {spec['rank']} is out of range for the {args.cp0}x{args.cp1} "
                         f"grid (ranks 0..{world - 1})")


def _install_nvtx_hooks(model):
    from torch.cuda import nvtx

    def pre(mod, inp):
        nvtx.range_push(f"{type(mod).__name__}.forward")

    def post(mod, inp, out):
        nvtx.range_pop()

    for m in model.modules():
        if type(m).__module__.startswith("cpfold."):
            m.register_forward_pre_hook(pre)
            m.register_forward_hook(post)


def seeded_model_and_inputs(cfg, seed: int, n_token: int, atoms_per_token: int, msa_depth: int,
                            checkpoint=None):
    """(model, loaded, feats): the same weights and inputs on every rank for the same seed. The
    weights come from the global RNG seeded by the kit's ``seed_all`` (torch's stream is exactly
    ``torch.manual_seed(seed)``'s), the inputs from ``make_inputs``' private generator."""
    import cpprof_workload as cw

    from .checkpoint import build_model
    from .features import make_inputs, validate_inputs
    cw.seed_all(seed)                             # every rank: identical weights and inputs
    model, loaded = build_model(cfg, checkpoint)
    feats = make_inputs(n_token, atoms_per_token=atoms_per_token, msa_depth=msa_depth, seed=seed)
    validate_inputs(feats)
    return model, loaded, feats


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_args(parser, args)
    import torch
    import torch.distributed as dist

    import cpprof_workload as cw

    from .checkpoint import save_checkpoint
    from .config import get_preset
    from .cp import CPGrid
    from .cp import cannon, comm
    from .wrapper import ContextParallel
    from .features import cast_features
    from .local_ranks import init_from_env

    use_cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    backend = args.backend if args.backend != "auto" else ("nccl" if use_cuda else "gloo")
    rank, world, local_rank = init_from_env(backend, args.pg_timeout)
    if use_cuda:
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    dtype_name = args.dtype or ("bf16" if use_cuda else "fp32")
    dtype = torch.bfloat16 if dtype_name == "bf16" else torch.float32
    dist.barrier()                  # also creates the NCCL communicator before any p2p
    delay, slow = args.inject_delay, args.inject_slow
    comm.set_inject_delay(delay["ms"] if delay and delay["rank"] == rank else None,
                          delay["match"] if delay else None)
    cannon.set_slow_factor(slow["factor"] if slow and slow["rank"] == rank else 1)
    grid = CPGrid(args.cp0, args.cp1)

    preset = get_preset(args.preset)
    cfg, rt = preset.model, preset.runtime
    if args.blocks is not None:
        cfg.pairformer_blocks = args.blocks
    recycles = rt.recycles if args.recycles is None else args.recycles
    steps = rt.diffusion_steps if args.diffusion_steps is None else args.diffusion_steps
    samples = rt.samples if args.samples is None else args.samples
    msa_depth = rt.msa_depth if args.msa_depth is None else args.msa_depth

    model, loaded, feats = seeded_model_and_inputs(cfg, args.seed, args.n_token, args.atoms_per_token,
                                                   msa_depth, args.checkpoint)
    if args.checkpoint and not loaded:
        if rank == 0:
            save_checkpoint(model, args.checkpoint)
        dist.barrier()
    model = model.to(device=device, dtype=dtype)
    feats = cast_features(feats, device=device)
    if args.prepare_once or args.cuda_graph:
        prepare_features_once(model)
    cp_model = ContextParallel(model, grid)
    if args.nvtx_modules and use_cuda:
        _install_nvtx_hooks(model)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr) if args.mode == "train" else None
    if rank == 0:
        info = dict(mode=args.mode, n_token=args.n_token, grid=[args.cp0, args.cp1], world=world,
                    preset=args.preset, dtype=dtype_name, backend=backend, recycles=recycles,
                    diffusion_steps=steps, samples=samples, msa_depth=msa_depth,
                    checkpoint=args.checkpoint, checkpoint_loaded=loaded,
                    parameters=sum(p.numel() for p in model.parameters()),
                    model=cfg.to_dict())     # the sizes: cpprof report's cost model reads them
        print("cpfold-config: " + json.dumps(info), flush=True)

    def sync():
        if use_cuda:
            torch.cuda.synchronize(device)

    warm_w, timed_w, timed_p, loss_val, first_counts = [], [], [], None, {}
    delays_it, batches_it, extra_it = [], [], []      # per iteration (fault injection)
    # The kit's schedule (under `cpprof profile`'s probe, $CPPROF_PROBE_ITERS, only its first
    # iterations) and marks: NVTX range cpfold:warmupK / cpfold:iterK, one cpprof-iter: line.
    def forward():
        # No generator: a CUDA graph cannot construct one while it captures (the trunk draws no
        # random numbers).
        with torch.no_grad():
            cp_model(feats, mode=args.mode, recycles=recycles, diffusion_steps=steps,
                     samples=samples, generator=None)

    graph = None
    for it, warm in cw.schedule(args.iters, args.warmup):
        sync()
        dist.barrier()
        if it == args.warmup and args.cuda_graph:
            graph = _capture_graph(forward, device, use_cuda)
            sync()
        if it == args.warmup:
            comm.reset_counts()                  # comm counts of the first timed iteration
        with cw.iteration(it, warmup=warm, prefix=RANGE_PREFIX) as mark:
            d0, b0, e0 = comm.INJECT.applied, comm.INJECT.batches, cannon.SLOW.extra
            gen = torch.Generator(device=device).manual_seed(args.seed + 1)
            if args.mode == "train":
                opt.zero_grad(set_to_none=True)
                loss, _ = cp_model.training_loss(feats, recycles=recycles, samples=samples, generator=gen)
                loss.backward()
                cp_model.sync_grads()
                opt.step()
                loss_val = float(loss.detach())
            elif graph is not None and not warm:
                graph.replay()
            else:
                with torch.no_grad():
                    cp_model(feats, mode=args.mode, recycles=recycles, diffusion_steps=steps,
                             samples=samples, generator=gen)
        delays_it.append(comm.INJECT.applied - d0)
        batches_it.append(comm.INJECT.batches - b0)
        extra_it.append(cannon.SLOW.extra - e0)
        if it == args.warmup:
            first_counts = comm.counts_by_tag()
        if warm:
            warm_w.append(mark["wall_s"])
        else:
            timed_w.append(mark["wall_s"])
            timed_p.append(mark["peak_mem_bytes"])
    print("cpfold-inject: " + json.dumps(dict(
        rank=rank,
        delay_rank=delay["rank"] if delay else None,
        delay_ms=delay["ms"] if delay and delay["rank"] == rank else 0.0,
        match=delay["match"] if delay else None,
        slow_rank=slow["rank"] if slow else None,
        slow_factor=slow["factor"] if slow and slow["rank"] == rank else 1,
        delays_total=comm.INJECT.applied,
        delays_timed=sum(delays_it[args.warmup:]),
        delays_per_iter=delays_it,
        p2p_batches_total=comm.INJECT.batches,
        p2p_batches_timed=sum(batches_it[args.warmup:]),
        p2p_batches_per_iter=batches_it,
        slow_extra_gemms_total=cannon.SLOW.extra,
        slow_extra_gemms_timed=sum(extra_it[args.warmup:]))), flush=True)
    mine = dict(rank=rank, iter_wall_s=timed_w, warmup_wall_s=warm_w,
                median_s=statistics.median(timed_w) if timed_w else None,
                peak_mem_bytes=int(max(timed_p)) if timed_p else None)
    gathered = [None] * world
    dist.all_gather_object(gathered, mine)
    if rank == 0:
        result = dict(
            mode=args.mode, n_token=args.n_token, grid=[args.cp0, args.cp1], world=world,
            preset=args.preset, dtype=dtype_name, device=str(device.type), backend=backend,
            torch=torch.__version__, recycles=recycles, diffusion_steps=steps, samples=samples,
            warmup=args.warmup, iters=args.iters,
            peak_mem_kind="cuda_max_allocated" if use_cuda else "cpu_max_rss",
            median_iter_s=max(g["median_s"] for g in gathered) if timed_w else None,
            peak_mem_max_bytes=max(g["peak_mem_bytes"] for g in gathered) if timed_w else None,
            per_rank=gathered, loss=loss_val, comm_counts_rank0=first_counts)
        line = json.dumps(result)
        if args.json_out:
            with open(args.json_out, "w") as fh:
                fh.write(line + "\n")
        print("cpfold: " + line, flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
