# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Communication primitives for context parallelism.

Everything here works on torch 1.13 + gloo (CPU) and torch 2.x + NCCL (GPU):
gloo lacks all_gather_into_tensor / reduce_scatter, so list-based
``dist.all_gather`` and an all-reduce fallback are used there.

Point-to-point traffic always uses ``dist.batch_isend_irecv`` on the default
group with global ranks; on NCCL each batch is one grouped launch
(one ``ncclDevKernel_SendRecv``).

Every call is counted in ``COUNTS[(tag, op)]`` (tag = calling module class,
``.bwd`` suffix for backward) so tests can check the communication schedule
against ``expect.json``.

Fault injection (``cpfold.run --inject-delay``): :func:`set_inject_delay`
makes this rank synchronize its device and sleep before every p2p batch (the
tag filtered by a substring), so its peers wait inside their SendRecv kernels.
"""
from __future__ import annotations

import collections
import os
import time
from typing import List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist

import cpprof_workload as cw

COUNTS: "collections.Counter[Tuple[str, str]]" = collections.Counter()


def count(tag: str, op: str, n: int = 1) -> None:
    COUNTS[(tag, op)] += n


def reset_counts() -> None:
    COUNTS.clear()


def counts_by_tag() -> dict:
    """{tag: {op: n}} snapshot of the counters."""
    out: dict = {}
    for (tag, op), n in sorted(COUNTS.items()):
        out.setdefault(tag, {})[op] = n
    return out


def _is_gloo(group=None) -> bool:
    return dist.get_backend(group) == "gloo"


def _wire(t: torch.Tensor, group=None) -> torch.Tensor:
    """Tensor to hand to the backend for a *copying* operation (gather, p2p).
    gloo has no bfloat16: move the same bits as float16 (a view, so receive
    buffers are filled in place)."""
    if t.dtype == torch.bfloat16 and _is_gloo(group):
        return t.view(torch.float16)       # pure copy: the bits are never interpreted
    return t


def _reduce_in_place(x: torch.Tensor, group) -> None:
    """dist.all_reduce(SUM), with an fp32 detour for bfloat16 on gloo."""
    if x.dtype == torch.bfloat16 and _is_gloo(group):
        tmp = x.float()
        dist.all_reduce(tmp, group=group)
        x.copy_(tmp)
    else:
        dist.all_reduce(x, group=group)


def group_size(group) -> int:
    """Size of a process group; ``None`` stands for a trivial one-rank group."""
    return 1 if group is None else dist.get_world_size(group)


# ---------------------------------------------------------------------------
# raw collectives
# ---------------------------------------------------------------------------
def all_gather_cat(x: torch.Tensor, group, dim: int, tag: str) -> torch.Tensor:
    """All-gather ``x`` over ``group`` and concatenate along ``dim`` in group-rank order."""
    size = group_size(group)
    if size == 1:
        return x
    x = x.contiguous()
    count(tag, "all_gather")
    if not _is_gloo(group) and hasattr(dist, "all_gather_into_tensor"):
        buf = x.new_empty((size,) + tuple(x.shape))
        dist.all_gather_into_tensor(buf, x, group=group)
        parts = buf.unbind(0)
    else:
        parts = [torch.empty_like(x) for _ in range(size)]
        dist.all_gather([_wire(p, group) for p in parts], _wire(x, group), group=group)
    return torch.cat(parts, dim)


def reduce_scatter_cat(g: torch.Tensor, group, dim: int, tag: str) -> torch.Tensor:
    """Sum ``g`` over ``group`` and keep this rank's chunk along ``dim`` (inverse of all_gather_cat)."""
    size = group_size(group)
    if size == 1:
        return g
    idx = dist.get_rank(group)
    if _is_gloo(group):
        # gloo has no reduce_scatter: all-reduce the whole tensor, keep our chunk.
        count(tag, "all_reduce")
        full = g.contiguous().clone()
        _reduce_in_place(full, group)
        return full.chunk(size, dim)[idx].contiguous()
    count(tag, "reduce_scatter")
    chunks = g.chunk(size, dim)
    out = torch.empty_like(chunks[idx], memory_format=torch.contiguous_format)
    if hasattr(dist, "reduce_scatter_tensor"):
        dist.reduce_scatter_tensor(out, torch.stack(chunks, 0), group=group)
    else:
        dist.reduce_scatter(out, [c.contiguous() for c in chunks], group=group)
    return out


def all_reduce_sum(x: torch.Tensor, tag: str, group=None) -> torch.Tensor:
    """In-place sum over ``group`` (default: all ranks)."""
    group = dist.group.WORLD if group is None else group
    if dist.is_initialized() and dist.get_world_size(group) > 1:
        count(tag, "all_reduce")
        _reduce_in_place(x, group)
    return x


_SCHEDULE = [0]


def next_msg_tag_base() -> int:
    """Message-tag base for the next p2p *primitive call* (Cannon product, ring,
    exchange, reshard).  Every rank calls every primitive in the same order --
    also the ranks that end up sending nothing -- so the bases agree exactly
    when the ranks follow the same schedule.  If control flow diverges, gloo
    sees tags that never match and the job hangs (like NCCL) instead of
    pairing unrelated messages; the launchers' timeouts then catch it."""
    _SCHEDULE[0] += 1
    return (_SCHEDULE[0] % 100000) * 16


# ---------------------------------------------------------------------------
# fault injection: a late rank (cpfold.run --inject-delay RANK:MS[:MATCH])
# ---------------------------------------------------------------------------
class _Injection:
    enabled = False             # set on the delayed rank only
    delay_s = 0.0
    match: Optional[str] = None
    applied = 0                 # delays applied so far (never reset)
    batches = 0                 # p2p batches posted so far (never reset; every rank)


INJECT = _Injection()


def set_inject_delay(ms: Optional[float], match: Optional[str] = None) -> None:
    """Before every p2p batch whose tag contains ``match`` (every batch when
    ``match`` is None or empty), synchronize this rank's device and sleep
    ``ms`` milliseconds.  ``ms`` None switches the injection off."""
    INJECT.enabled = ms is not None
    INJECT.delay_s = (ms or 0.0) / 1000.0
    INJECT.match = match or None
    INJECT.applied = 0
    INJECT.batches = 0


def _inject_delay(ops, tag: str) -> None:
    if not INJECT.enabled or (INJECT.match is not None and INJECT.match not in tag):
        return
    dev = ops[0].tensor.device
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)     # everything this rank queued so far has run ...
    time.sleep(INJECT.delay_s)          # ... then it is late by exactly the delay
    INJECT.applied += 1


def batch_p2p(sends: Sequence[Tuple[torch.Tensor, int, int]],
              recvs: Sequence[Tuple[torch.Tensor, int, int]], tag: str) -> List:
    """Post (tensor, peer, msg_tag) sends and receives as one batch; return the works.

    Message tags keep gloo's per-pair matching unambiguous; NCCL ignores them
    (messages to one peer are then matched in posting order, which is the same
    on both sides by construction).  An empty batch posts nothing (and is
    neither counted nor delayed).
    """
    ops = [dist.P2POp(dist.isend, _wire(t), p, tag=k) for t, p, k in sends]
    ops += [dist.P2POp(dist.irecv, _wire(t), p, tag=k) for t, p, k in recvs]
    if not ops:
        return []
    _inject_delay(ops, tag)
    INJECT.batches += 1
    count(tag, "p2p_batch")
    count(tag, "p2p_ops", len(ops))
    dev = ops[0].tensor.device
    if COMM_STREAM.enabled and dev.type == "cuda":
        return [_SideStreamWork(ops, dev)]
    return dist.batch_isend_irecv(ops)


# ---------------------------------------------------------------------------
# a separate CUDA stream for p2p (CPFOLD_COMM_STREAM=1 or set_comm_stream(True))
# ---------------------------------------------------------------------------
class _CommStream:
    enabled = os.environ.get("CPFOLD_COMM_STREAM", "0") == "1"
    streams: dict = {}


COMM_STREAM = _CommStream()


def set_comm_stream(on: bool) -> None:
    """Post p2p batches from a dedicated CUDA stream (per device): the stream
    waits on an event of the compute stream taken when the batch is posted (the
    operands are ready), the transfer runs beside whatever compute is queued
    after it, and :func:`wait_all` makes the compute stream wait on an event of
    the comm stream: no host synchronisation anywhere.  No effect on CPU."""
    COMM_STREAM.enabled = bool(on)


def _side_stream(dev):
    s = COMM_STREAM.streams.get(dev)
    if s is None:
        s = COMM_STREAM.streams[dev] = torch.cuda.Stream(device=dev)
    return s


class _SideStreamWork:
    """One p2p batch posted from the comm stream; ``wait()`` joins it into the
    current stream with an event (device-side only)."""

    def __init__(self, ops, dev):
        self.side = _side_stream(dev)
        self.side.wait_stream(torch.cuda.current_stream(dev))      # operands ready
        with torch.cuda.stream(self.side):
            self.works = dist.batch_isend_irecv(ops)
        for op in ops:      # the caching allocator must not reuse them before the comm stream is done
            op.tensor.record_stream(self.side)

    def wait(self):
        with torch.cuda.stream(self.side):
            for w in self.works:
                w.wait()                                            # comm stream waits for NCCL
        torch.cuda.current_stream(self.side.device).wait_stream(self.side)


def wait_all(works) -> None:
    for w in works:
        w.wait()


def broadcast_ints(values: Sequence[int], tag: str = "control") -> List[int]:
    """Integer control-flow counts from rank 0 on every rank (identity without a process group):
    the workload kit's ``cpprof_workload.broadcast_counts``, one int64 broadcast on the process
    group's device (the current GPU under NCCL, the CPU under gloo). This function stays as
    cpfold's own (counted under ``tag``, and named in trace_spec.json, so that a profile keeps
    the broadcast under a ``cpfold.cp.comm.broadcast_ints`` range)."""
    values = [int(v) for v in values]
    if not dist.is_initialized() or dist.get_world_size() == 1:
        return values
    count(tag, "broadcast")
    got = cw.broadcast_counts(**{f"c{i}": v for i, v in enumerate(values)})
    return [got[f"c{i}"] for i in range(len(values))]


# ---------------------------------------------------------------------------
# autograd-aware primitives
# ---------------------------------------------------------------------------
class _GatherReduceScatter(torch.autograd.Function):
    """All-gather whose consumers differ per rank: backward is a reduce-scatter."""

    @staticmethod
    def forward(ctx, x, group, dim, tag):
        ctx.group, ctx.dim, ctx.tag = group, dim, tag
        return all_gather_cat(x, group, dim, tag)

    @staticmethod
    def backward(ctx, g):
        return reduce_scatter_cat(g, ctx.group, ctx.dim, ctx.tag + ".bwd"), None, None, None


def gather_reduce_scatter(x, group, dim, tag):
    if group_size(group) == 1:
        return x
    return _GatherReduceScatter.apply(x, group, dim, tag)


class _GatherSlice(torch.autograd.Function):
    """All-gather feeding *replicated* computation (identical on every rank):
    backward keeps this rank's slice of the (identical) gradient."""

    @staticmethod
    def forward(ctx, x, group, dim, tag):
        ctx.group, ctx.dim = group, dim
        return all_gather_cat(x, group, dim, tag)

    @staticmethod
    def backward(ctx, g):
        size, idx = group_size(ctx.group), dist.get_rank(ctx.group)
        return g.chunk(size, ctx.dim)[idx].contiguous(), None, None, None


def gather_replicated(x, group, dim, tag):
    if group_size(group) == 1:
        return x
    return _GatherSlice.apply(x, group, dim, tag)


class _SliceAllReduce(torch.autograd.Function):
    """Take this rank's slice of a replicated tensor.  Every rank's slice
    contributes part of the gradient, so backward all-reduces the zero-padded
    gradient over all ranks (making it identical everywhere again)."""

    @staticmethod
    def forward(ctx, x, narrows, tag):
        ctx.shape, ctx.narrows, ctx.tag = x.shape, narrows, tag
        y = x
        for dim, start, length in narrows:
            y = y.narrow(dim, start, length)
        return y.clone()

    @staticmethod
    def backward(ctx, g):
        full = g.new_zeros(ctx.shape)
        view = full
        for dim, start, length in ctx.narrows:
            view = view.narrow(dim, start, length)
        view.copy_(g)
        all_reduce_sum(full, ctx.tag + ".bwd")
        return full, None, None


def slice_replicated(x, narrows, tag, distributed: bool):
    """narrows: list of (dim, start, length)."""
    if not distributed:
        y = x
        for dim, start, length in narrows:
            y = y.narrow(dim, start, length)
        return y
    return _SliceAllReduce.apply(x, tuple(narrows), tag)


class _Exchange(torch.autograd.Function):
    """Swap a tensor with ``peer`` (same shape on both sides); self-inverse.
    With ``peer`` == self it is the identity (but still takes a schedule slot,
    forward and backward, like every other rank)."""

    @staticmethod
    def forward(ctx, x, peer, tag):
        ctx.peer, ctx.tag = peer, tag
        return _exchange(x, peer, tag)

    @staticmethod
    def backward(ctx, g):
        return _exchange(g, ctx.peer, ctx.tag + ".bwd"), None, None


def _exchange(x, peer, tag):
    k = next_msg_tag_base()
    if peer == dist.get_rank():
        return x.clone()
    x = x.contiguous()
    out = torch.empty_like(x)
    wait_all(batch_p2p([(x, peer, k)], [(out, peer, k)], tag))
    return out


def exchange(x, peer: int, tag: str):
    return _Exchange.apply(x, peer, tag)


def _reshard(x, split_dim, cat_dim, peers, me, tag):
    k0 = next_msg_tag_base()
    chunks = x.chunk(len(peers), split_dim)
    parts = [None] * len(peers)
    parts[me] = chunks[me]
    sends, recvs = [], []
    for k, peer in enumerate(peers):
        if k == me:
            continue
        sends.append((chunks[k].contiguous(), peer, k0))
        parts[k] = torch.empty_like(chunks[me], memory_format=torch.contiguous_format)
        recvs.append((parts[k], peer, k0))
    wait_all(batch_p2p(sends, recvs, tag))
    return torch.cat(parts, cat_dim)


class _Reshard(torch.autograd.Function):
    """All-to-all (one p2p batch): split along ``split_dim``, send chunk k to
    peer k, concatenate what arrives along ``cat_dim``.  Changes which axis of
    a 1-D-sharded pair tensor is sharded."""

    @staticmethod
    def forward(ctx, x, split_dim, cat_dim, peers, me, tag):
        ctx.args = (split_dim, cat_dim, peers, me, tag)
        return _reshard(x, split_dim, cat_dim, peers, me, tag)

    @staticmethod
    def backward(ctx, g):
        split_dim, cat_dim, peers, me, tag = ctx.args
        return _reshard(g, cat_dim, split_dim, peers, me, tag + ".bwd"), None, None, None, None, None


def reshard(x, split_dim, cat_dim, peers, me, tag):
    if len(peers) == 1:
        return x
    return _Reshard.apply(x, split_dim, cat_dim, tuple(peers), me, tag)
