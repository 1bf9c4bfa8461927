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
"""
from __future__ import annotations

import torch

from . import comm

_TAG_L, _TAG_R, _TAG_RING = 1, 2, 3


def _op(t: torch.Tensor, trans: bool) -> torch.Tensor:
    return t.transpose(-1, -2) if trans else t


def local_matmul(X, Y, tx, ty):
    return torch.matmul(_op(X, tx), _op(Y, ty))


def _as3(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1, t.shape[-2], t.shape[-1])


def cannon_matmul(X, Y, tx: bool, ty: bool, lay, tag: str) -> torch.Tensor:
    q = lay.P_r
    assert lay.P_c == q and q >= 2
    I, J = lay.r, lay.c
    rk = lay.rank_of            # indices are taken mod q
    me = rk(I, J)
    X = X.contiguous()
    Y = Y.contiguous()
    batch_shape = X.shape[:-2]
    n = X.shape[-1]
    assert X.shape[-2] == n and Y.shape == X.shape, "Cannon needs equal square blocks"

    # ---- initial skew ---------------------------------------------------------
    K0 = (I + J) % q
    src_l = rk(K0, I) if tx else rk(I, K0)
    src_r = rk(J, K0) if ty else rk(K0, J)
    dst_l = rk(J, I - J) if tx else rk(I, J - I)
    dst_r = rk(J - I, I) if ty else rk(I - J, J)
    assert (src_l == me) == (dst_l == me) and (src_r == me) == (dst_r == me)
    L, R = X, Y
    sends, recvs = [], []
    if src_l != me:
        L = torch.empty_like(X)
        sends.append((X, dst_l, _TAG_L))
        recvs.append((L, src_l, _TAG_L))
    if src_r != me:
        R = torch.empty_like(Y)
        sends.append((Y, dst_r, _TAG_R))
        recvs.append((R, src_r, _TAG_R))
    comm.wait_all(comm.batch_p2p(sends, recvs, tag))

    # ---- q multiply-and-shift steps (double-buffered) ------------------------
    left, right = rk(I, J - 1), rk(I, J + 1)
    up, down = rk(I - 1, J), rk(I + 1, J)
    spare_l = spare_r = None
    out = None
    for s in range(q):
        works = []
        if s < q - 1:
            # receive buffers must not alias X/Y (saved for backward) nor L/R (being sent)
            nl = spare_l if spare_l is not None else torch.empty_like(X)
            nr = spare_r if spare_r is not None else torch.empty_like(Y)
            works = comm.batch_p2p([(L, left, _TAG_L), (R, up, _TAG_R)],
                                   [(nl, right, _TAG_L), (nr, down, _TAG_R)], tag)
        a = _op(_as3(L), tx)
        b = _op(_as3(R), ty)
        out = torch.bmm(a, b) if out is None else torch.baddbmm(out, a, b)
        comm.wait_all(works)
        if s < q - 1:
            spare_l = L if L is not X else None
            spare_r = R if R is not Y else None
            L, R = nl, nr
    return out.reshape(*batch_shape, n, n)


def ring_rows_matmul(X, Y, tx: bool, ty: bool, peers, me: int, tag: str) -> torch.Tensor:
    """Rows sharded over ``peers`` (ring order): X, Y, C are [..., n, N] row blocks."""
    q = len(peers)
    X = X.contiguous()
    Y = Y.contiguous()
    n, N = X.shape[-2], X.shape[-1]
    assert N == n * q and Y.shape == X.shape
    X3, Y3 = _as3(X), _as3(Y)
    cols = lambda k: slice(k * n, (k + 1) * n)
    if not tx:
        # gather type: Y's row blocks travel "up" the ring; at step s we hold Y[K], K = me + s.
        send_to, recv_from = peers[(me - 1) % q], peers[(me + 1) % q]
        cur, spare = Y3, None
        out = None if not ty else X3.new_empty(X3.shape[0], n, N)
        for s in range(q):
            K = (me + s) % q
            works = []
            if s < q - 1:
                nxt = spare if spare is not None else torch.empty_like(Y3)
                works = comm.batch_p2p([(cur, send_to, _TAG_RING)], [(nxt, recv_from, _TAG_RING)], tag)
            if not ty:      # C[I,:] += X[I, K] @ Y[K, :]
                a = X3[:, :, cols(K)]
                out = torch.bmm(a, cur) if out is None else torch.baddbmm(out, a, cur)
            else:           # C[I, K] = X[I, :] @ Y[K, :]^T
                out[:, :, cols(K)] = torch.bmm(X3, cur.transpose(1, 2))
            comm.wait_all(works)
            if s < q - 1:
                spare = cur if cur is not Y3 else None
                cur = nxt
        return out.reshape(X.shape[:-2] + (n, N))
    assert not ty, "TT products are never needed"
    # reduce type (TN): C[D,:] = sum_K X[K, D]^T @ Y[K, :].  At step s this rank
    # adds its contribution to destination D = me - s - 1; partial sums move
    # me -> me + 1 and arrive home after q - 1 hops.
    send_to, recv_from = peers[(me + 1) % q], peers[(me - 1) % q]
    pending, rbuf, acc = [], None, None
    for s in range(q):
        D = (me - s - 1) % q
        contrib = torch.bmm(X3[:, :, cols(D)].transpose(1, 2), Y3)   # overlaps the pending transfer
        if s > 0:
            comm.wait_all(pending)
            contrib.add_(rbuf)
        if s < q - 1:
            rbuf = torch.empty_like(contrib)
            pending = comm.batch_p2p([(contrib, send_to, _TAG_RING)], [(rbuf, recv_from, _TAG_RING)], tag)
        acc = contrib
    return acc.reshape(X.shape[:-2] + (n, N))


def _dist_matmul_impl(X, Y, tx, ty, lay, tag):
    kind = lay.kind
    if kind == "local":
        return local_matmul(X, Y, tx, ty)
    if kind == "square":
        return cannon_matmul(X, Y, tx, ty, lay, tag)
    if kind == "rows":
        peers = [lay.rank_of(i, 0) for i in range(lay.P_r)]
        return ring_rows_matmul(X, Y, tx, ty, peers, lay.r, tag)
    if kind == "cols":
        # C^T = op(Y)^T op(X)^T, whose operands are row-sharded.
        peers = [lay.rank_of(0, j) for j in range(lay.P_c)]
        ct = ring_rows_matmul(Y.transpose(-1, -2), X.transpose(-1, -2), ty, tx, peers, lay.c, tag)
        return ct.transpose(-1, -2)
    raise ValueError(f"unsupported layout kind {kind!r}")


class _DistMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, Y, tx, ty, lay, tag):
        ctx.save_for_backward(X, Y)
        ctx.args = (tx, ty, lay, tag)
        return _dist_matmul_impl(X, Y, tx, ty, lay, tag)

    @staticmethod
    def backward(ctx, dC):
        X, Y = ctx.saved_tensors
        tx, ty, lay, tag = ctx.args
        tag = tag + ".bwd"
        dC = dC.contiguous()
        need_x, need_y = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        dX = dY = None
        if (tx, ty) == (False, False):      # C = X Y
            if need_x: dX = _dist_matmul_impl(dC, Y, False, True, lay, tag)
            if need_y: dY = _dist_matmul_impl(X, dC, True, False, lay, tag)
        elif (tx, ty) == (False, True):     # C = X Y^T
            if need_x: dX = _dist_matmul_impl(dC, Y, False, False, lay, tag)
            if need_y: dY = _dist_matmul_impl(dC, X, True, False, lay, tag)
        elif (tx, ty) == (True, False):     # C = X^T Y
            if need_x: dX = _dist_matmul_impl(Y, dC, False, True, lay, tag)
            if need_y: dY = _dist_matmul_impl(X, dC, False, False, lay, tag)
        else:
            raise NotImplementedError("TT product")
        return dX, dY, None, None, None, None


def dist_matmul(X, Y, tx: bool, ty: bool, lay, tag: str = "dist_matmul"):
    """Distributed per-channel ``op(X) @ op(Y)`` on the block layout ``lay``."""
    if lay.kind == "local":
        return local_matmul(X, Y, tx, ty)
    return _DistMatmul.apply(X, Y, tx, ty, lay, tag)
