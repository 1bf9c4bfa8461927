# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Distributed block matrix product for the triangle multiplication.

For every channel (leading batch dims are carried along) computes
``C = op(X) @ op(Y)`` where op is identity or transpose, with X, Y and C
block-sharded like the pair tensor.  Blocks are *raw*: the rank at grid
position (I, J) holds X[I, J] and Y[I, J] of the untransposed matrices and
receives C[I, J].

* q x q grid: Cannon's algorithm.  At step s the rank (I, J) multiplies the
  logical blocks L[I, K] and R[K, J] with K = (I + J + s) mod q.  An initial
  skew (one p2p batch) brings L[I, I+J] and R[I+J, J] to (I, J) -- for a
  transposed operand this also transposes the block grid -- then q
  multiply-and-shift steps follow: L moves one rank left, R one rank up, as one
  p2p batch posted *before* the local product so the transfer of the next
  blocks overlaps the current GEMM (double buffering).  The last step has no
  shift: q - 1 shift batches in total.
* q x 1 grid (rows sharded, blocks are n x N): 1-D ring.  For NN / NT the
  right operand's row blocks travel round the ring (gather type); for TN the
  partial results travel and accumulate (reduce type).  q - 1 p2p batches.
* 1 x q grid (columns sharded): same ring on the transposed problem,
  C^T = op(Y)^T op(X)^T.

``dist_matmul`` is differentiable; the backward products are again
distributed products of the same three kinds (NN, NT, TN).

Fault injection (``cpfold.run --inject-slow RANK:FACTOR``): on that rank every
local GEMM of the distributed product (each bmm / baddbmm of a Cannon or ring
step, and the single matmul of the unsharded case) runs FACTOR times; the
extra results are discarded (see :func:`set_slow_factor`).
"""
from __future__ import annotations

import torch

from . import comm


def _op(t: torch.Tensor, trans: bool) -> torch.Tensor:
    return t.transpose(-1, -2) if trans else t


class _Slow:
    factor = 1          # > 1 on the slowed rank only
    extra = 0           # extra GEMMs run so far (never reset)


SLOW = _Slow()


def set_slow_factor(factor: int) -> None:
    """Make this rank's local TriMul products ``factor`` times as much GPU work:
    each local GEMM is run ``factor`` times with identical operands and all
    but the first result dropped (same kernels, same shapes, launched back to
    back on the compute stream).  1 switches it off."""
    if int(factor) != factor or factor < 1:
        raise ValueError(f"slow factor must be an integer >= 1, got {factor!r}")
    SLOW.factor = int(factor)
    SLOW.extra = 0


def _gemm(fn, *args):
    """``fn(*args)`` (an out-of-place torch GEMM), repeated under --inject-slow."""
    out = fn(*args)
    for _ in range(SLOW.factor - 1):
        fn(*args)                       # discarded: extra work only
        SLOW.extra += 1
    return out


def local_matmul(X, Y, tx, ty):
    return _gemm(torch.matmul, _op(X, tx), _op(Y, ty))


def local_matmul_rows(X, Y, tx, ty, rows: slice):
    """Rows ``rows`` of ``op(X) @ op(Y)`` (no CP): the product in row chunks, so
    that its whole result never has to exist at once."""
    return _gemm(torch.matmul, _op(X, tx)[..., rows, :], _op(Y, ty))


def _as3(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1, t.shape[-2], t.shape[-1])


def _dense(t: torch.Tensor) -> torch.Tensor:
    """``t`` itself when it is contiguous or the transpose of a contiguous tensor
    (the GEMMs read either; the ring sends its contiguous storage), else a copy."""
    if t.is_contiguous() or t.transpose(-1, -2).is_contiguous():
        return t
    return t.contiguous()


def _storage(t: torch.Tensor) -> torch.Tensor:
    """The contiguous tensor over ``t``'s memory (``t`` or its transpose): what
    the p2p calls move.  Sender and receiver buffers share one layout
    (``torch.empty_like`` keeps strides), so the element order matches."""
    return t if t.is_contiguous() else t.transpose(-1, -2)


def _run(overlap) -> None:
    """Run the caller's independent work (see ``dist_matmul_owned``) once."""
    if overlap is not None:
        overlap()


def cannon_matmul(ops: list, tx: bool, ty: bool, lay, tag: str, release: bool = False,
                  compute: bool = True, communicate: bool = True, overlap=None) -> torch.Tensor:
    """Cannon's algorithm on a q x q grid.  ``ops`` = [X, Y] raw local blocks
    [..., n, n].  ``release``: the list holds the only references and may be
    emptied after the skew (inference).  ``compute`` / ``communicate`` switch
    the GEMMs / the transfers off, for the overlap benchmark only."""
    q = lay.P_r
    assert lay.P_c == q and q >= 2
    I, J = lay.r, lay.c
    rk = lay.rank_of            # indices are taken mod q
    me = rk(I, J)
    k = comm.next_msg_tag_base()
    tag_l, tag_r = k + 1, k + 2
    X, Y = ops[0].contiguous(), ops[1].contiguous()
    if release:
        ops.clear()
    batch_shape = X.shape[:-2]
    n = X.shape[-1]
    assert X.shape[-2] == n and Y.shape == X.shape, "Cannon needs equal square blocks"

    # ---- initial skew: L[I, I+J] and R[I+J, J] to rank (I, J) ------------------
    K0 = (I + J) % q
    src_l = rk(K0, I) if tx else rk(I, K0)
    src_r = rk(J, K0) if ty else rk(K0, J)
    dst_l = rk(J, I - J) if tx else rk(I, J - I)
    dst_r = rk(J - I, I) if ty else rk(I - J, J)
    assert (src_l == me) == (dst_l == me) and (src_r == me) == (dst_r == me)
    L, R = X, Y
    sends, recvs = [], []
    if src_l != me and communicate:
        L = torch.empty_like(X)
        sends.append((X, dst_l, tag_l))
        recvs.append((L, src_l, tag_l))
    if src_r != me and communicate:
        R = torch.empty_like(Y)
        sends.append((Y, dst_r, tag_r))
        recvs.append((R, src_r, tag_r))
    skew = comm.batch_p2p(sends, recvs, tag)
    _run(overlap)                       # the caller's independent work hides the skew
    comm.wait_all(skew)
    # Receive buffers may be reused only if they are not the caller's X / Y
    # (saved for backward, or still referenced).
    l_owned, r_owned = L is not X, R is not Y
    if release:
        X = Y = None

    # ---- q multiply-and-shift steps (double-buffered) ------------------------
    left, right = rk(I, J - 1), rk(I, J + 1)
    up, down = rk(I - 1, J), rk(I + 1, J)
    spare_l = spare_r = None
    out = None
    for s in range(q):
        works = []
        shift = s < q - 1 and communicate
        if shift:   # post the next transfer first: it overlaps this step's GEMM
            nl = spare_l if spare_l is not None else torch.empty_like(L)
            nr = spare_r if spare_r is not None else torch.empty_like(R)
            works = comm.batch_p2p([(L, left, tag_l), (R, up, tag_r)],
                                   [(nl, right, tag_l), (nr, down, tag_r)], tag)
        if compute or out is None:
            a = _op(_as3(L), tx)
            b = _op(_as3(R), ty)
            if out is None:
                out = _gemm(torch.bmm, a, b) if compute else a.new_zeros(a.shape[0], n, n)
            else:
                out = _gemm(torch.baddbmm, out, a, b)
        comm.wait_all(works)
        if shift:
            spare_l = L if l_owned else None
            spare_r = R if r_owned else None
            L, R = nl, nr
            l_owned = r_owned = True
    return out.reshape(*batch_shape, n, n)


def ring_rows_matmul(X, Y, tx: bool, ty: bool, peers, me: int, tag: str,
                     compute: bool = True, communicate: bool = True, overlap=None) -> torch.Tensor:
    """Rows sharded over ``peers`` (ring order): X, Y, C are [..., n, N] row blocks.
    ``compute`` / ``communicate``: benchmark switches (see cannon_matmul).
    ``overlap``: independent work run once while the first transfer is in flight.
    Transposed views of contiguous tensors are used as they are (no copy): the
    GEMMs read them strided and the ring moves their contiguous storage."""
    q = len(peers)
    tag_ring = comm.next_msg_tag_base() + 3
    X = _dense(X)
    Y = _dense(Y)
    n, N = X.shape[-2], X.shape[-1]
    assert N == n * q and Y.shape == X.shape
    X3, Y3 = _as3(X), _as3(Y)
    cols = lambda k: slice(k * n, (k + 1) * n)
    if not tx:
        # gather type: Y's row blocks travel "up" the ring; at step s we hold Y[K], K = me + s.
        # The first shift is posted before anything else (prefetch), the caller's
        # independent work and this step's GEMM run while it moves.
        send_to, recv_from = peers[(me - 1) % q], peers[(me + 1) % q]
        cur, spare = Y3, None
        out = None if not ty else X3.new_empty(X3.shape[0], n, N)
        for s in range(q):
            K = (me + s) % q
            works = []
            shift = s < q - 1 and communicate
            if shift:
                nxt = spare if spare is not None else torch.empty_like(cur)
                works = comm.batch_p2p([(_storage(cur), send_to, tag_ring)],
                                       [(_storage(nxt), recv_from, tag_ring)], tag)
            if s == 0:
                _run(overlap)
            if not ty:      # C[I,:] += X[I, K] @ Y[K, :]
                a = X3[:, :, cols(K)]
                if out is None:
                    out = _gemm(torch.bmm, a, cur) if compute else a.new_zeros(a.shape[0], n, N)
                elif compute:
                    out = _gemm(torch.baddbmm, out, a, cur)
            elif compute:   # C[I, K] = X[I, :] @ Y[K, :]^T
                out[:, :, cols(K)] = _gemm(torch.bmm, X3, cur.transpose(1, 2))
            comm.wait_all(works)
            if shift:
                spare = cur if cur is not Y3 else None
                cur = nxt
        return out.reshape(X.shape[:-2] + (n, N))
    assert not ty, "TT products are never needed"
    # reduce type (TN): C[D,:] = sum_K X[K, D]^T @ Y[K, :].  At step s this rank
    # adds its contribution to destination D = me - s - 1; partial sums move
    # me -> me + 1 and arrive home after q - 1 hops.
    # The caller's independent work runs after the first partial sum is posted.
    send_to, recv_from = peers[(me + 1) % q], peers[(me - 1) % q]
    pending, rbuf, acc = [], None, None
    for s in range(q):
        D = (me - s - 1) % q
        if compute:      # overlaps the pending transfer
            contrib = _gemm(torch.bmm, X3[:, :, cols(D)].transpose(1, 2), Y3)
        else:
            contrib = X3.new_zeros(X3.shape[0], n, N)
        if s > 0 and communicate:
            comm.wait_all(pending)
            contrib.add_(rbuf)
        if s < q - 1 and communicate:
            rbuf = torch.empty_like(contrib)
            pending = comm.batch_p2p([(contrib, send_to, tag_ring)], [(rbuf, recv_from, tag_ring)], tag)
        if s == 0:
            _run(overlap)
        acc = contrib
    return acc.reshape(X.shape[:-2] + (n, N))


def _dist_matmul_impl(ops: list, tx, ty, lay, tag, release=False, **bench):
    kind = lay.kind
    if kind == "local":
        X, Y = ops
        if release:
            ops.clear()
        _run(bench.get("overlap"))
        return local_matmul(X, Y, tx, ty)
    if kind == "square":
        return cannon_matmul(ops, tx, ty, lay, tag, release=release, **bench)
    X, Y = ops
    if release:
        ops.clear()
    if kind == "rows":
        peers = [lay.rank_of(i, 0) for i in range(lay.P_r)]
        return ring_rows_matmul(X, Y, tx, ty, peers, lay.r, tag, **bench)
    if kind == "cols":
        # C^T = op(Y)^T op(X)^T, whose operands are row-sharded.
        peers = [lay.rank_of(0, j) for j in range(lay.P_c)]
        ct = ring_rows_matmul(Y.transpose(-1, -2), X.transpose(-1, -2), ty, tx, peers, lay.c, tag, **bench)
        return ct.transpose(-1, -2)
    raise ValueError(f"unsupported layout kind {kind!r}")


class _DistMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, Y, tx, ty, lay, tag):
        ctx.save_for_backward(X, Y)
        ctx.args = (tx, ty, lay, tag)
        return _dist_matmul_impl([X, Y], tx, ty, lay, tag)

    @staticmethod
    def backward(ctx, dC):
        X, Y = ctx.saved_tensors
        tx, ty, lay, tag = ctx.args
        tag = tag + ".bwd"
        dC = dC.contiguous()
        need_x, need_y = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        dX = dY = None
        if (tx, ty) == (False, False):      # C = X Y
            if need_x: dX = _dist_matmul_impl([dC, Y], False, True, lay, tag)
            if need_y: dY = _dist_matmul_impl([X, dC], True, False, lay, tag)
        elif (tx, ty) == (False, True):     # C = X Y^T
            if need_x: dX = _dist_matmul_impl([dC, Y], False, False, lay, tag)
            if need_y: dY = _dist_matmul_impl([dC, X], True, False, lay, tag)
        elif (tx, ty) == (True, False):     # C = X^T Y
            if need_x: dX = _dist_matmul_impl([Y, dC], False, True, lay, tag)
            if need_y: dY = _dist_matmul_impl([X, dC], False, False, lay, tag)
        else:
            raise NotImplementedError("TT product")
        return dX, dY, None, None, None, None


def dist_matmul(X, Y, tx: bool, ty: bool, lay, tag: str = "dist_matmul"):
    """Distributed per-channel ``op(X) @ op(Y)`` on the block layout ``lay``."""
    if lay.kind == "local":
        return local_matmul(X, Y, tx, ty)
    return _DistMatmul.apply(X, Y, tx, ty, lay, tag)


def dist_matmul_owned(ops: list, tx: bool, ty: bool, lay, tag: str = "dist_matmul", overlap=None):
    """:func:`dist_matmul` on ``ops = [X, Y]`` whose only references the list
    holds; without autograd the operands are released as early as possible.
    ``overlap``: work independent of the product (e.g. the TriMul output gate),
    run once right after the first transfer is posted so that it hides the
    transfer (called exactly once in every layout, before the result exists)."""
    X, Y = ops
    if torch.is_grad_enabled() and (X.requires_grad or Y.requires_grad):
        ops.clear()
        _run(overlap)
        return dist_matmul(X, Y, tx, ty, lay, tag)
    del X, Y
    return _dist_matmul_impl(ops, tx, ty, lay, tag, release=True, overlap=overlap)


def dist_matmul_bench(X, Y, tx: bool, ty: bool, lay, compute: bool, communicate: bool,
                      tag: str = "bench"):
    """Benchmark helper (no autograd): the distributed product with the GEMMs
    or the transfers switched off, to measure how much transfer is hidden."""
    return _dist_matmul_impl([X, Y], tx, ty, lay, tag, compute=compute, communicate=communicate)
