# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Benchmark of the CP Pairformer on GPUs (one command, writes JSON + markdown).

    python -m cpfold.bench --out DIR                  # on a 2- or 4-GPU machine
    python -m cpfold.bench --out DIR --device cpu --preset tiny --sizes 32,64 \\
        --largest-start 64 --largest-step 64 --largest-max 192         # CPU smoke test

Phases (each launches its own ranks, one per GPU; total bounded by --budget-min):
  1. parity   bf16 CP-vs-single parity (cpfold.parity --mode all) on every CP grid
  2. timing   per module of one Pairformer block (AF3 sizes by default) at each N:
              median time per iteration and peak memory per rank, on 1 GPU (no CP)
              and on each CP grid; plus how much of the TriMul transfer time is
              hidden under the GEMMs (Cannon / ring double buffering)
              (every dtype of --dtype fp32,bf16; with --baseline DIR also the older
              cpfold package in DIR, printed beside this code's numbers)
  3. largest  largest N whose Pairformer block forward fits, 1 GPU and CP grids
  4. memory   peak memory per rank of a --memory-blocks (4) forward at --memory-n (512)
Grids default to 1x2 with 2-3 GPUs and 1x2 + 2x2 with 4 or more.
Results: DIR/bench.json, DIR/bench.md (also printed), with the targets of issue 17.

    # this code against an older commit, one GPU, fp32 and bf16:
    git archive OLD python/cpfold | tar -x -C /tmp/old
    python -m cpfold.bench --out DIR --grids 1x1 --dtype fp32,bf16 --baseline /tmp/old/python
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

MODULES = ("TriangleMultiplicationOutgoing", "TriangleMultiplicationIncoming",
           "TriangleAttentionStartingNode", "TriangleAttentionEndingNode", "PairTransition",
           "AttentionPairBias", "SingleTransition", "PairformerBlock")
TARGETS = {"2x2": {"block_speedup_2048": 1.5, "largest_ratio": 1.8},
           "1x2": {"block_speedup_2048": 1.9, "largest_ratio": 1.35}, "hidden_fraction": 0.5}
# One GPU (issue 17): PairformerBlock forward, fp32, seconds at N; bf16 vs fp32 speedup at N;
# peak of a 4-block forward at N = 512, fp32 (the public Boltz-2 Pairformer's 2.1 GiB).
TARGETS_1GPU = {"fp32_block_s": {512: 0.033, 1024: 0.200}, "bf16_speedup": {1024: 1.5},
                "memory_gib": {(512, 4, "fp32"): 2.1}}


def build_parser():
    p = argparse.ArgumentParser(prog="python -m cpfold.bench", allow_abbrev=False,
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=False, help="output directory (required unless --worker)")
    p.add_argument("--sizes", default="512,1024,2048")
    p.add_argument("--grids", default="auto", help="comma list like 1x2,2x2 (1x1 is always run)")
    p.add_argument("--preset", default="af3")
    p.add_argument("--dtype", default="bf16",
                   help="bf16, fp32, or a comma list (fp32,bf16): the timing phase runs each; "
                        "the first is the one parity, largest N and the grid targets use")
    p.add_argument("--baseline", default=None, metavar="DIR",
                   help="a directory holding an older cpfold package (e.g. `git archive COMMIT python/cpfold`): "
                        "its timing phase runs too, printed beside this code's")
    p.add_argument("--memory-n", type=int, default=512,
                   help="N of the multi-block memory check (peak of a --memory-blocks forward; 0: off)")
    p.add_argument("--memory-blocks", type=int, default=4)
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--budget-min", type=float, default=8.0, help="wall budget for the whole command")
    p.add_argument("--skip-parity", action="store_true")
    p.add_argument("--skip-largest", action="store_true")
    p.add_argument("--parity-n-token", type=int, default=256)
    p.add_argument("--parity-preset", default="small")
    p.add_argument("--largest-start", type=int, default=2048)
    p.add_argument("--largest-step", type=int, default=1024)
    p.add_argument("--largest-max", type=int, default=32768)
    p.add_argument("--largest-refine", type=int, default=4, help="refinement subdivisions of a step")
    p.add_argument("--worker", choices=("timing", "largest", "memory"), help=argparse.SUPPRESS)
    p.add_argument("--cp0", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--cp1", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--candidates", default="", help=argparse.SUPPRESS)
    p.add_argument("--deadline", type=float, default=0.0, help=argparse.SUPPRESS)
    p.add_argument("--result-file", default=None, help=argparse.SUPPRESS)
    return p


# ---------------------------------------------------------------------------
# worker side
# ---------------------------------------------------------------------------
class _Env:
    def __init__(self, args):
        import torch
        import torch.distributed as dist
        from .cp.layout import CPGrid
        from .wrapper import CPContext
        from .local_ranks import init_from_env
        self.cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
        self.rank, self.world, local = init_from_env("nccl" if self.cuda else "gloo", 900.0)
        self.device = torch.device("cuda", local) if self.cuda else torch.device("cpu")
        if self.cuda:
            torch.cuda.set_device(self.device)
        self.dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
        dist.barrier()
        self.grid = CPGrid(args.cp0, args.cp1)
        self.ctx = CPContext(self.grid) if self.world > 1 else None
        self.torch, self.dist = torch, dist

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize(self.device)

    def peak(self):
        if self.cuda:
            return int(self.torch.cuda.max_memory_allocated(self.device))
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def reset_peak(self):
        if self.cuda:
            self.torch.cuda.reset_peak_memory_stats(self.device)

    def block(self, cfg):
        import cpprof_workload as cw
        from .model.common import glorot_init_, set_context_parallel
        from .model.pairformer import PairformerBlock
        cw.seed_all(0)
        blk = PairformerBlock(cfg)
        glorot_init_(blk, cfg.init_gain)
        blk = blk.to(self.device, self.dtype).eval()
        set_context_parallel(blk, self.ctx)
        return blk

    def inputs(self, cfg, N):
        torch = self.torch
        lay = self.grid.layout
        R, C = lay.rows(N), lay.cols(N)
        g = torch.Generator(device=self.device).manual_seed(1)
        z = torch.randn(1, R.stop - R.start, C.stop - C.start, cfg.c_z, generator=g,
                        device=self.device, dtype=self.dtype)
        s = torch.randn(1, N, cfg.c_s, generator=g, device=self.device, dtype=self.dtype)
        mask = torch.ones(1, N, device=self.device, dtype=self.dtype)
        return s, z, mask

    def time_fn(self, fn, warmup, iters):
        """Per-iteration wall times (max over ranks) and this rank's peak memory."""
        torch, dist = self.torch, self.dist
        times = []
        self.reset_peak()
        for it in range(warmup + iters):
            self.sync()
            dist.barrier()
            t0 = time.perf_counter()
            fn()
            self.sync()
            dt = time.perf_counter() - t0
            if it >= warmup:
                times.append(dt)
        t = torch.tensor(times, dtype=torch.float64, device=self.device if self.cuda else "cpu")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)       # an iteration lasts until its slowest rank
        return t.tolist(), self.peak()


def _worker_timing(args) -> int:
    from .config import get_preset
    from .cp.cannon import dist_matmul_bench
    env = _Env(args)
    torch, dist = env.torch, env.dist
    cfg = get_preset(args.preset).model
    blk = env.block(cfg)
    lay = env.grid.layout
    out_lines = []
    for N in [int(x) for x in args.sizes.split(",") if x]:
        N = env.grid.padded_tokens(N)
        s, z, mask = env.inputs(cfg, N)
        fns = {
            "TriangleMultiplicationOutgoing": lambda: blk.tri_mul_out(z, mask),
            "TriangleMultiplicationIncoming": lambda: blk.tri_mul_in(z, mask),
            "TriangleAttentionStartingNode": lambda: blk.tri_att_start(z, mask),
            "TriangleAttentionEndingNode": lambda: blk.tri_att_end(z, mask),
            "PairTransition": lambda: blk.pair_transition(z),
            "AttentionPairBias": lambda: blk.attention_pair_bias(s, z, mask),
            "SingleTransition": lambda: blk.single_transition(s),
            "PairformerBlock": lambda: blk(s, z, mask),
        }
        rec = {"N": N, "modules": {}}
        with torch.no_grad():
            for name, fn in fns.items():
                times, peak = env.time_fn(fn, args.warmup, args.iters)
                rec["modules"][name] = {"median_s": statistics.median(times), "iter_s": times,
                                        "peak_mem_bytes": peak}
            if lay.kind != "local":        # transfer hidden under the GEMMs (TriMul product)
                h = cfg.tri_mul_hidden
                a = torch.randn(1, h, z.shape[1], z.shape[2], device=env.device, dtype=env.dtype)
                b = torch.randn_like(a)
                ov = {}
                for key, cmp_, com in (("full", True, True), ("compute_only", True, False),
                                       ("comm_only", False, True)):
                    times, _ = env.time_fn(lambda: dist_matmul_bench(a, b, False, True, lay, cmp_, com),
                                           args.warmup, args.iters)
                    ov[key + "_s"] = statistics.median(times)
                comm_t = ov["comm_only_s"]
                hidden = (comm_t + ov["compute_only_s"] - ov["full_s"]) / comm_t if comm_t > 0 else 0.0
                ov["hidden_fraction"] = max(0.0, min(1.0, hidden))
                rec["trimul_overlap"] = ov
                del a, b
        fns = s = z = mask = None                     # free before the next size
        if env.cuda:
            torch.cuda.empty_cache()
        per_rank = [None] * env.world
        dist.all_gather_object(per_rank, {k: v["peak_mem_bytes"] for k, v in rec["modules"].items()})
        for name in rec["modules"]:
            rec["modules"][name]["peak_mem_bytes_per_rank"] = [r[name] for r in per_rank]
        if env.rank == 0:
            out_lines.append(rec)
            with open(args.result_file, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
    dist.barrier()
    dist.destroy_process_group()
    return 0


def _worker_memory(args) -> int:
    """Peak memory of a ``--memory-blocks`` Pairformer stack forward at ``--memory-n``."""
    import cpprof_workload as cw
    from .config import get_preset
    from .model.common import glorot_init_, set_context_parallel
    from .model.pairformer import PairformerModule
    env = _Env(args)
    dist = env.dist
    cfg = get_preset(args.preset).model
    cw.seed_all(0)
    stack = PairformerModule(cfg, args.memory_blocks)
    glorot_init_(stack, cfg.init_gain)
    stack = stack.to(env.device, env.dtype).eval()
    set_context_parallel(stack, env.ctx)
    N = env.grid.padded_tokens(args.memory_n)
    s, z, mask = env.inputs(cfg, N)
    weights = sum(p.numel() * p.element_size() for p in stack.parameters())
    times, peak = env.time_fn(lambda: stack(s, z, mask), 1, 1)
    peaks = [None] * env.world
    dist.all_gather_object(peaks, peak)
    if env.rank == 0:
        with open(args.result_file, "w") as fh:
            json.dump({"N": N, "blocks": args.memory_blocks, "peak_mem_bytes_per_rank": peaks,
                       "weights_bytes": weights, "wall_s": times[0]}, fh)
    dist.barrier()
    dist.destroy_process_group()
    return 0


def _worker_largest(args) -> int:
    from .config import get_preset
    env = _Env(args)
    torch, dist = env.torch, env.dist
    cfg = get_preset(args.preset).model
    blk = env.block(cfg)
    for N in [int(x) for x in args.candidates.split(",") if x]:
        if args.deadline and time.time() > args.deadline:
            if env.rank == 0:
                print(f"bench-deadline: {N}", flush=True)
            break
        N = env.grid.padded_tokens(N)
        try:
            env.reset_peak()
            s, z, mask = env.inputs(cfg, N)
            with torch.no_grad():
                blk(s, z, mask)
            env.sync()
            peak = env.peak()
            del s, z, mask
        except RuntimeError as e:            # torch.cuda.OutOfMemoryError is a RuntimeError
            if "out of memory" not in str(e).lower():
                raise
            print(f"bench-oom: {N} rank {env.rank}", flush=True)
            os._exit(3)                       # peers are stuck in collectives: the launcher kills them
        if env.cuda:
            torch.cuda.empty_cache()
        peaks = [None] * env.world
        dist.all_gather_object(peaks, peak)   # also: every rank finished N
        if env.rank == 0:
            print("bench-fit: " + json.dumps({"N": N, "peak_mem_bytes_per_rank": peaks}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0


# ---------------------------------------------------------------------------
# launcher side
# ---------------------------------------------------------------------------
def _parse_grid(g: str):
    a, b = g.lower().split("x")
    return int(a), int(b)


def _machine(device):
    import torch
    info = {"torch": torch.__version__, "device": device}
    if device == "cuda":
        info["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        try:
            info["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
        except Exception:                     # pragma: no cover - depends on the build
            pass
    else:
        info["cpus"] = os.cpu_count()
    return info


# fragmentation would understate the largest N that fits
_ALLOC_ENV = {"PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")}


def _largest(args, argv_common, cp0, cp1, deadline, log):
    from .local_ranks import launch
    world = cp0 * cp1

    def probe(cands):
        remaining = deadline - time.time()
        if remaining < 30 or not cands:
            return [], None, "budget"
        res = launch("cpfold.bench", argv_common + [
            "--worker", "largest", "--cp0", str(cp0), "--cp1", str(cp1),
            "--candidates", ",".join(map(str, cands)), "--deadline", str(deadline - 20)],
            world, timeout=remaining - 10, env=_ALLOC_ENV)
        fits, fail = [], None
        for line in res.logs[0].splitlines():
            if line.startswith("bench-fit: "):
                fits.append(json.loads(line[len("bench-fit: "):]))
        for lg in res.logs:
            for line in lg.splitlines():
                if line.startswith("bench-oom: "):
                    fail = int(line.split()[1])
        why = "oom" if fail else ("timeout" if res.timed_out else
                                  ("deadline" if "bench-deadline" in res.logs[0] else
                                   ("ok" if res.ok else "error")))
        if why == "error":
            log(f"largest {cp0}x{cp1}: worker error:\n" + "\n".join(res.logs[0].splitlines()[-15:]))
        return fits, fail, why

    step = args.largest_step
    coarse = list(range(args.largest_start, args.largest_max + 1, step))
    fits, fail, why = probe(coarse)
    probes = list(fits)
    best = max((f["N"] for f in fits), default=None)
    if best is not None and why == "oom" and args.largest_refine > 1:
        fine_step = max(1, step // args.largest_refine)
        fine = list(range(best + fine_step, best + step, fine_step))
        fits2, fail2, why2 = probe(fine)
        probes += fits2
        if fits2:
            best = max(best, max(f["N"] for f in fits2))
        why = f"{why}; refine: {why2}"
    return {"largest_n": best, "stopped_by": why, "probes": probes}


def _fmt_gib(b):
    return "-" if b is None else f"{b / 2**30:.2f}"


def _markdown(res) -> str:
    grids = res["grids"]
    lines = [f"# cpfold benchmark ({res['config']['preset']}, {res['config']['dtype']})", "",
             f"machine: {json.dumps(res['machine'])}", ""]
    if res.get("parity"):
        lines += [f"## {res['config']['dtype']} parity (CP vs 1 device)", "", "| grid | mode | max_rel_err | tol |",
                  "| --- | --- | --- | --- |"]
        for g, p in res["parity"].items():
            if "modes" in p:
                for m, r in p["modes"].items():
                    lines.append(f"| {g} | {m} | {r['max_rel_err']:.3e} | {p.get('tol')} |")
            else:
                lines.append(f"| {g} | - | {p.get('error', 'failed')} | |")
        lines.append("")
    timing = res["timing"]
    lines += ["## Per module: median time per iteration (ms) / peak memory per rank (GiB, max over ranks)", ""]
    cp_grids = [g for g in grids if g != "1x1"]
    head = "| module | N | " + " | ".join(f"{g} ms | {g} GiB" for g in grids) + " |" + \
        "".join(f" speedup {g} |" for g in cp_grids)
    lines += [head, "|" + " --- |" * (2 + 2 * len(grids) + len(cp_grids))]
    sizes = sorted({rec["N"] for g in grids for rec in timing.get(g, [])})
    for N in sizes:
        for mod in MODULES:
            cells, base = [], None
            for g in grids:
                rec = next((r for r in timing.get(g, []) if r["N"] == N), None)
                m = rec["modules"].get(mod) if rec else None
                if m:
                    ms = m["median_s"] * 1e3
                    if g == "1x1":
                        base = ms
                    cells.append(f"{ms:.2f} | {_fmt_gib(max(m['peak_mem_bytes_per_rank']))}")
                else:
                    cells.append("- | -")
            sp = []
            for g in grids:
                if g == "1x1":
                    continue
                rec = next((r for r in timing.get(g, []) if r["N"] == N), None)
                m = rec["modules"].get(mod) if rec else None
                sp.append(f"{base / (m['median_s'] * 1e3):.2f}x" if (m and base) else "-")
            lines.append(f"| {mod} | {N} | " + " | ".join(cells) + " |" + "".join(f" {x} |" for x in sp))
    lines.append("")
    ov = [(g, r["N"], r["trimul_overlap"]) for g in grids for r in timing.get(g, []) if "trimul_overlap" in r]
    if ov:
        lines += ["## TriMul product: transfer hidden under GEMMs", "",
                  "| grid | N | full ms | compute-only ms | comm-only ms | hidden fraction |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for g, N, o in ov:
            lines.append(f"| {g} | {N} | {o['full_s']*1e3:.2f} | {o['compute_only_s']*1e3:.2f} | "
                         f"{o['comm_only_s']*1e3:.2f} | {o['hidden_fraction']:.2f} |")
        lines.append("")
    if res.get("largest"):
        lines += ["## Largest N (one Pairformer block forward fits)", "",
                  "| grid | largest N | peak GiB/rank at it | stopped by |", "| --- | --- | --- | --- |"]
        for g, r in res["largest"].items():
            pk = next((max(p["peak_mem_bytes_per_rank"]) for p in r["probes"] if p["N"] == r["largest_n"]), None)
            lines.append(f"| {g} | {r['largest_n']} | {_fmt_gib(pk)} | {r['stopped_by']} |")
        lines.append("")
    runs = res.get("runs", [])
    if any(r["code"] == "base" for r in runs):
        lines += ["## This code vs the baseline (median ms per iteration; peak GiB per rank)", "",
                  f"baseline: {res['config'].get('baseline')}", "",
                  "| module | grid | dtype | N | baseline ms | new ms | speedup | baseline GiB | new GiB |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for run in runs:
            if run["code"] != "new":
                continue
            base = next((b for b in runs if b["code"] == "base" and b["grid"] == run["grid"]
                         and b["dtype"] == run["dtype"]), None)
            for rec in run["records"]:
                brec = next((r for r in (base or {}).get("records", []) if r["N"] == rec["N"]), None)
                for mod in MODULES:
                    m = rec["modules"].get(mod)
                    bm = brec["modules"].get(mod) if brec else None
                    if not m:
                        continue
                    bms = f"{bm['median_s'] * 1e3:.2f}" if bm else "-"
                    sp = f"{bm['median_s'] / m['median_s']:.2f}x" if bm else "-"
                    bgib = _fmt_gib(max(bm["peak_mem_bytes_per_rank"])) if bm else "-"
                    lines.append(f"| {mod} | {run['grid']} | {run['dtype']} | {rec['N']} | {bms} | "
                                 f"{m['median_s'] * 1e3:.2f} | {sp} | {bgib} | "
                                 f"{_fmt_gib(max(m['peak_mem_bytes_per_rank']))} |")
        lines.append("")
    dts = res["config"].get("dtypes", [])
    if "fp32" in dts and "bf16" in dts:
        lines += ["## bf16 vs fp32 (PairformerBlock, median ms)", "",
                  "| grid | code | N | fp32 ms | bf16 ms | bf16 speedup |", "| --- | --- | --- | --- | --- | --- |"]
        for run in runs:
            if run["dtype"] != "fp32":
                continue
            for rec in run["records"]:
                a = _block_s(res, run["grid"], "fp32", run["code"], rec["N"])
                b = _block_s(res, run["grid"], "bf16", run["code"], rec["N"])
                if a and b:
                    lines.append(f"| {run['grid']} | {run['code']} | {rec['N']} | {a * 1e3:.2f} | "
                                 f"{b * 1e3:.2f} | {a / b:.2f}x |")
        lines.append("")
    if res.get("memory"):
        lines += ["## Peak memory of a multi-block Pairformer forward (this code)", "",
                  "| grid | dtype | N | blocks | peak GiB/rank (max) | weights GiB |", "| --- | --- | --- | --- | --- | --- |"]
        for m in res["memory"]:
            lines.append(f"| {m['grid']} | {m['dtype']} | {m['N']} | {m['blocks']} | "
                         f"{_fmt_gib(max(m['peak_mem_bytes_per_rank']))} | {_fmt_gib(m['weights_bytes'])} |")
        lines.append("")
    if res.get("targets"):
        lines += ["## Targets", "", "| check | value | target | met |", "| --- | --- | --- | --- |"]
        for t in res["targets"]:
            v = "-" if t["value"] is None else f"{t['value']:.2f}"
            lines.append(f"| {t['check']} | {v} | {t['target']} | {t['met']} |")
        lines.append("")
    lines.append(f"total wall time: {res['elapsed_s']:.0f} s")
    return "\n".join(lines) + "\n"


def _block_s(res, grid, dtype, code, N):
    for run in res.get("runs", []):
        if (run["grid"], run["dtype"], run["code"]) == (grid, dtype, code):
            for r in run["records"]:
                if r["N"] == N and "PairformerBlock" in r["modules"]:
                    return r["modules"]["PairformerBlock"]["median_s"]
    return None


def _targets_1gpu(res):
    out = []
    for N, tgt in TARGETS_1GPU["fp32_block_s"].items():
        v = _block_s(res, "1x1", "fp32", "new", N)
        if v is not None:
            out.append({"check": f"PairformerBlock 1x1 fp32 at N={N}, ms", "value": v * 1e3,
                        "target": f"<= {tgt * 1e3:.0f}", "met": v <= tgt})
    for N, tgt in TARGETS_1GPU["bf16_speedup"].items():
        a, b = _block_s(res, "1x1", "fp32", "new", N), _block_s(res, "1x1", "bf16", "new", N)
        if a and b:
            out.append({"check": f"PairformerBlock 1x1 bf16 speedup over fp32 at N={N}", "value": a / b,
                        "target": f">= {tgt}", "met": a / b >= tgt})
    for m in res.get("memory", []):
        tgt = TARGETS_1GPU["memory_gib"].get((m["N"], m["blocks"], m["dtype"]))
        if tgt is not None:
            v = max(m["peak_mem_bytes_per_rank"]) / 2**30
            out.append({"check": f"peak GiB/rank, {m['blocks']}-block forward {m['grid']} {m['dtype']} N={m['N']}",
                        "value": v, "target": f"<= {tgt}", "met": v <= tgt})
    return out


def _targets(res):
    out = _targets_1gpu(res)
    t1 = {r["N"]: r for r in res["timing"].get("1x1", [])}
    for g in res["grids"]:
        if g == "1x1":
            continue
        recs = {r["N"]: r for r in res["timing"].get(g, [])}
        N = max((n for n in recs if n in t1), default=None)
        if N is not None and g in TARGETS:
            v = t1[N]["modules"]["PairformerBlock"]["median_s"] / recs[N]["modules"]["PairformerBlock"]["median_s"]
            tgt = TARGETS[g]["block_speedup_2048"]
            out.append({"check": f"PairformerBlock speedup {g} at N={N}", "value": v, "target": f">= {tgt}",
                        "met": v >= tgt})
        for n, r in sorted(recs.items()):
            if "trimul_overlap" in r and n == N:
                v = r["trimul_overlap"]["hidden_fraction"]
                out.append({"check": f"TriMul transfer hidden {g} at N={n}", "value": v,
                            "target": f">= {TARGETS['hidden_fraction']}", "met": v >= TARGETS["hidden_fraction"]})
        lg = res.get("largest", {})
        if g in TARGETS and "largest_ratio" in TARGETS[g] and g in lg and "1x1" in lg:
            a, b = lg[g]["largest_n"], lg["1x1"]["largest_n"]
            v = a / b if a and b else None
            tgt = TARGETS[g]["largest_ratio"]
            out.append({"check": f"largest N {g} / 1x1", "value": v, "target": f">= {tgt}",
                        "met": v is not None and v >= tgt})
    return out


class torch_no_grad:                 # imported lazily: the launcher side must not need torch first
    def __enter__(self):
        import torch
        self._ctx = torch.no_grad()
        return self._ctx.__enter__()

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if args.worker == "timing":
        return _worker_timing(args)
    if args.worker == "largest":
        return _worker_largest(args)
    if args.worker == "memory":
        with torch_no_grad():
            return _worker_memory(args)
    if not args.out:
        print("cpfold.bench: --out DIR is required", file=sys.stderr)
        return 2
    import torch
    from .cp.layout import check_grid_shape
    from .local_ranks import launch
    t0 = time.time()
    deadline = t0 + args.budget_min * 60
    device = "cuda" if (args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())) else "cpu"
    ngpu = torch.cuda.device_count() if device == "cuda" else 0
    if args.grids == "auto":
        if device == "cpu":
            cp = ["1x2"]
        else:
            cp = (["1x2", "2x2"] if ngpu >= 4 else ["1x2"]) if ngpu >= 2 else []
    else:
        cp = [g for g in args.grids.split(",") if g and g != "1x1"]
    for g in cp:
        a, b = _parse_grid(g)
        check_grid_shape(a, b)
        if device == "cuda" and a * b > ngpu:
            print(f"cpfold.bench: grid {g} needs {a * b} GPUs, {ngpu} visible", file=sys.stderr)
            return 2
    grids = ["1x1"] + cp
    os.makedirs(args.out, exist_ok=True)
    log_path = os.path.join(args.out, "bench.log")
    logf = open(log_path, "w")

    def log(msg):
        line = f"[{time.time() - t0:6.1f}s] {msg}"
        print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()

    dtypes = [d for d in args.dtype.split(",") if d]
    bad = [d for d in dtypes if d not in ("bf16", "fp32")]
    if bad or not dtypes:
        print(f"cpfold.bench: --dtype {args.dtype!r}: use bf16, fp32 or a comma list of them", file=sys.stderr)
        return 2
    if args.baseline and not os.path.isfile(os.path.join(args.baseline, "cpfold", "bench.py")):
        print(f"cpfold.bench: --baseline {args.baseline}: no cpfold/bench.py there; give the directory "
              "that holds the older cpfold package", file=sys.stderr)
        return 2
    args.dtype = dtypes[0]          # parity, largest N and the grid targets use the first dtype

    def common_for(dtype):
        return ["--preset", args.preset, "--dtype", dtype, "--device", device,
                "--sizes", args.sizes, "--iters", str(args.iters), "--warmup", str(args.warmup)]

    common = common_for(args.dtype)
    res = {"config": vars(args) | {"device": device, "dtypes": dtypes}, "machine": _machine(device),
           "grids": grids, "parity": {}, "timing": {}, "runs": [], "memory": [], "largest": {}}
    log(f"grids {grids}, device {device}, budget {args.budget_min} min")

    # 1. parity ------------------------------------------------------------------
    if not args.skip_parity:
        for g in cp:
            a, b = _parse_grid(g)
            cmd = [sys.executable, "-m", "cpfold.parity", "--cp0", str(a), "--cp1", str(b),
                   "--n-token", str(args.parity_n_token), "--preset", args.parity_preset,
                   "--dtype", args.dtype, "--device", device, "--mode", "all", "--json",
                   "--timeout", str(max(60, min(300, deadline - time.time() - 60)))]
            env = dict(os.environ)
            env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + \
                (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            p = subprocess.run(cmd, capture_output=True, text=True, env=env)
            line = next((l for l in p.stdout.splitlines() if l.startswith("parity: ")), None)
            res["parity"][g] = json.loads(line[len("parity: "):]) if line else \
                {"error": f"exit {p.returncode}: " + (p.stdout + p.stderr)[-400:]}
            res["parity"][g]["exit_code"] = p.returncode
            log(f"parity {g}: exit {p.returncode} " + (f"max_rel_err={res['parity'][g].get('max_rel_err')}"))

    # 2. timing ------------------------------------------------------------------
    # Every (grid, dtype) with this code, and with the baseline package when given
    # (the same worker command run from the older package's directory).
    # res["timing"][grid] keeps this code's records in the first dtype.
    for dtype in dtypes:
        for g in grids:
            for code in (("new", "base") if args.baseline else ("new",)):
                a, b = _parse_grid(g)
                label = f"{g}-{dtype}-{code}"
                rf = os.path.join(args.out, f"timing_{label}.jsonl")
                if os.path.exists(rf):
                    os.unlink(rf)
                remaining = deadline - time.time()
                if remaining < 30:
                    log(f"timing {label}: skipped (budget)")
                    continue
                env, cwd = dict(_ALLOC_ENV), None
                if code == "base":
                    cwd = os.path.abspath(args.baseline)
                    env["PYTHONPATH"] = cwd
                r = launch("cpfold.bench", common_for(dtype) + [
                    "--worker", "timing", "--cp0", str(a), "--cp1", str(b), "--result-file", os.path.abspath(rf)],
                    a * b, timeout=remaining - 10, env=env, cwd=cwd)
                recs = []
                if os.path.exists(rf):
                    with open(rf) as fh:
                        recs = [json.loads(l) for l in fh if l.strip()]
                res["runs"].append({"grid": g, "dtype": dtype, "code": code, "records": recs})
                if code == "new" and dtype == dtypes[0]:
                    res["timing"][g] = recs
                log(f"timing {label}: sizes {[x['N'] for x in recs]} ok={r.ok}" +
                    ("" if r.ok else "\n" + "\n".join(r.logs[r.failed_rank or 0].splitlines()[-15:])))
    # 3. largest N -------------------------------------------------------------------
    if not args.skip_largest:
        for g in grids:
            a, b = _parse_grid(g)
            res["largest"][g] = _largest(args, common, a, b, deadline, log)
            log(f"largest {g}: {res['largest'][g]['largest_n']} ({res['largest'][g]['stopped_by']})")

    # 4. peak memory of a multi-block forward (this code only) ----------------------
    if args.memory_n > 0:
        for dtype in dtypes:
            for g in grids:
                a, b = _parse_grid(g)
                rf = os.path.abspath(os.path.join(args.out, f"memory_{g}-{dtype}.json"))
                remaining = deadline - time.time()
                if remaining < 30:
                    log(f"memory {g} {dtype}: skipped (budget)")
                    continue
                r = launch("cpfold.bench", common_for(dtype) + [
                    "--worker", "memory", "--cp0", str(a), "--cp1", str(b), "--result-file", rf,
                    "--memory-n", str(args.memory_n), "--memory-blocks", str(args.memory_blocks)],
                    a * b, timeout=remaining - 10, env=_ALLOC_ENV)
                if r.ok and os.path.exists(rf):
                    with open(rf) as fh:
                        res["memory"].append(dict(json.load(fh), grid=g, dtype=dtype))
                log(f"memory {g} {dtype}: ok={r.ok}" +
                    ("" if r.ok else "\n" + "\n".join(r.logs[r.failed_rank or 0].splitlines()[-15:])))

    res["targets"] = _targets(res)
    res["elapsed_s"] = time.time() - t0
    with open(os.path.join(args.out, "bench.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    md = _markdown(res)
    with open(os.path.join(args.out, "bench.md"), "w") as fh:
        fh.write(md)
    print(md)
    log(f"wrote {args.out}/bench.json and bench.md")
    logf.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
