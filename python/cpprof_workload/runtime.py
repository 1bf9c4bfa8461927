# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Seeds, small weights, control counts and iteration marks for a profiled CP workload.

The rule they serve (the profiling recipe's step 3): every rank must issue the same collectives
in the same order, so every rank is seeded alike and takes its control-flow counts (recycles,
sampling steps) from rank 0; and each iteration is marked, so that `cpprof profile`'s probe and
the readout's steady-state window find it.
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import resource
import sys
import time
from typing import Dict, Iterator, List, Optional, Tuple

import torch

ITER_TAG = "cpprof-iter:"
# Set by `cpprof profile` for its feasibility probe: run only this many iterations of the schedule.
PROBE_ITERS_ENV = "CPPROF_PROBE_ITERS"
_NORMS = (torch.nn.LayerNorm, torch.nn.GroupNorm, torch.nn.modules.batchnorm._NormBase)
_planned: Optional[int] = None


def _dist():
    """torch.distributed when a process group is up, else None."""
    d = getattr(torch, "distributed", None)
    if d is not None and d.is_available() and d.is_initialized():
        return d
    return None


def rank() -> int:
    """This process's global rank: the process group's, else $RANK, else 0."""
    d = _dist()
    if d is not None:
        return d.get_rank()
    return int(os.environ.get("RANK", "0"))


def seed_all(seed: int) -> int:
    """Seeds Python's, torch's (CPU and every GPU) and, when importable, NumPy's RNG alike."""
    seed = int(seed)
    random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    np = sys.modules.get("numpy")  # seeded only when the workload uses it
    if np is not None:
        np.random.seed(seed % (2 ** 32))
    return seed


@torch.no_grad()
def init_small_(module: torch.nn.Module, gain: float = 0.1) -> torch.nn.Module:
    """Glorot-uniform x ``gain`` for every weight of two or more axes (Linear, Conv, Embedding...),
    zero biases, identity norms (weight 1, bias 0), so that deep stacks stay numerically tame."""
    for m in module.modules():
        is_norm = isinstance(m, _NORMS) or type(m).__name__.endswith("Norm")
        for pname, p in m.named_parameters(recurse=False):
            if is_norm:
                if pname == "weight":
                    p.fill_(1.0)
                elif pname == "bias":
                    p.zero_()
            elif pname.endswith("bias") or p.dim() < 2:
                p.zero_()
            else:
                torch.nn.init.xavier_uniform_(p, gain=gain)
    return module


def broadcast_counts(**counts: int) -> Dict[str, int]:
    """Rank 0's values of the control-flow counts (recycles=3, steps=200) on every rank, in one
    collective. Without an initialised process group the counts come back as given."""
    for k, v in counts.items():
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"broadcast_counts: {k}={v!r} is not an int (control counts are whole numbers)")
    d = _dist()
    if d is None or d.get_world_size() == 1 or not counts:
        return dict(counts)
    names = list(counts)
    device = "cpu"
    if d.get_backend() == "nccl":
        device = torch.device("cuda", torch.cuda.current_device())
    t = torch.tensor([counts[k] for k in names], dtype=torch.int64, device=device)
    d.broadcast(t, src=0)
    return dict(zip(names, (int(x) for x in t.cpu().tolist())))


def schedule(iters: int, warmup: int = 1) -> List[Tuple[int, bool]]:
    """The (index, is_warmup) pairs of a run of ``warmup`` + ``iters`` iterations. Under
    `cpprof profile`'s probe ($CPPROF_PROBE_ITERS) only the first ones run; the iteration lines
    still say how many were planned, so the probe predicts the whole run."""
    global _planned
    plan = [(i, i < warmup) for i in range(warmup + iters)]
    _planned = len(plan)
    cap = os.environ.get(PROBE_ITERS_ENV)
    if cap and cap.isdigit():
        plan = plan[:max(1, int(cap))]
    return plan


def _sync():
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


@contextlib.contextmanager
def iteration(i: int, warmup: bool = False, planned: Optional[int] = None, out=None,
              prefix: str = "cpprof") -> Iterator[Dict[str, object]]:
    """Marks iteration ``i``: an NVTX range ``<prefix>:iter<i>`` (``<prefix>:warmup<i>``; prefix
    ``cpprof`` unless told, cpfold passes ``cpfold``) when CUDA is there, and on exit one line on
    stdout (docs/workload-kit.md, "The iteration line")::

        cpprof-iter: {"rank": 0, "iter": 1, "warmup": false, "wall_s": 0.25, "wall_ms": 250.0,
                      "peak_mem_bytes": 123, "peak_mem_kind": "cuda_max_allocated", "planned": 4}

    wall time from a synchronised start to a synchronised end; peak memory since the start
    (torch.cuda.max_memory_allocated, else the process's peak RSS). ``with iteration(i) as mark:``
    gives a dict that holds the line's fields once the block has ended (for a workload's own
    summary)."""
    if not isinstance(prefix, str) or not prefix:
        raise ValueError(f"iteration: prefix {prefix!r} is not a non-empty string")
    cuda = torch.cuda.is_available()
    name = f"{prefix}:{'warmup' if warmup else 'iter'}{int(i)}"
    mark: Dict[str, object] = {}
    _sync()
    if cuda and torch.cuda.is_initialized():
        torch.cuda.reset_peak_memory_stats()
    if cuda:
        torch.cuda.nvtx.range_push(name)
    t0 = time.perf_counter()
    try:
        yield mark
    finally:
        _sync()
        wall = time.perf_counter() - t0
        if cuda:
            torch.cuda.nvtx.range_pop()
    if cuda and torch.cuda.is_initialized():
        peak, kind = torch.cuda.max_memory_allocated(), "cuda_max_allocated"
    else:
        peak, kind = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "cpu_max_rss"
    line = {"rank": rank(), "iter": int(i), "warmup": bool(warmup), "wall_s": round(wall, 6),
            "wall_ms": round(wall * 1e3, 3), "peak_mem_bytes": int(peak), "peak_mem_kind": kind}
    p = planned if planned is not None else _planned
    if p is not None:
        line["planned"] = int(p)
    mark.clear()
    mark.update(line)
    stream = out if out is not None else sys.stdout
    stream.write(ITER_TAG + " " + json.dumps(line) + "\n")
    stream.flush()


def parse_iteration_lines(text: str) -> List[dict]:
    """The ``cpprof-iter:`` lines of a workload's output (anywhere in a line), as dicts."""
    found = []
    for line in text.splitlines():
        at = line.find(ITER_TAG)
        if at >= 0:
            found.append(json.loads(line[at + len(ITER_TAG):]))
    return found


def load_checkpoint_or_init(model: torch.nn.Module, path: Optional[str] = None, gain: float = 0.1,
                            strict: bool = True) -> str:
    """Loads weights from ``path`` (a state-dict file, or a directory holding one .pt/.pth/.bin
    file) when given, else ``init_small_(model, gain)``. Returns what was done, for the log."""
    if not path:
        init_small_(model, gain)
        return f"initialised: Glorot-uniform x {gain}"
    f = path
    if os.path.isdir(path):
        cands = sorted(n for n in os.listdir(path) if n.endswith((".pt", ".pth", ".bin", ".ckpt")))
        if len(cands) != 1:
            raise FileNotFoundError(
                f"load_checkpoint_or_init: {path!r} holds {len(cands)} weight files ({', '.join(cands) or 'none'}): "
                f"name the file, or load the model your own way (e.g. from_pretrained) and skip this call")
        f = os.path.join(path, cands[0])
    if not os.path.isfile(f):
        raise FileNotFoundError(f"load_checkpoint_or_init: no checkpoint at {f!r}")
    state = torch.load(f, map_location="cpu")
    for key in ("state_dict", "model", "model_state_dict"):
        if isinstance(state, dict) and isinstance(state.get(key), dict):
            state = state[key]
            break
    result = model.load_state_dict(state, strict=strict)
    missing = len(getattr(result, "missing_keys", []) or [])
    return f"loaded {f}" + (f" ({missing} keys missing)" if missing else "")
