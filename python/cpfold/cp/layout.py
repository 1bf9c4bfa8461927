# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Block layout of the pair tensor on the CP process grid.

The pair tensor z[B, N, N, C] is split into P_r row blocks and P_c column
blocks; the rank at grid position (r, c) holds z[:, rows(r), cols(c), :].
``PairLayout`` knows the grid, the row/column peer groups, and offers the
layout-aware operations the model needs.  ``LOCAL`` is the trivial 1 x 1
layout used when the model runs without context parallelism; every operation
then degenerates to the single-process computation.

Layout kinds:
  local   1 x 1
  square  q x q, q >= 2   (Cannon TriMul, row/column gathers for attention)
  rows    q x 1           (1-D ring; rows sharded)
  cols    1 x q           (1-D ring; columns sharded)

``lay.T`` describes the same ranks looking at the transposed tensor: block
(i, j) of z^T is block (j, i) of z, so a local ``transpose`` of every block
plus ``lay.T`` is a free, communication-less transpose.
"""
from __future__ import annotations

import math
from typing import List, Optional

import torch
import torch.distributed as dist

from . import comm
from .cannon import dist_matmul, dist_matmul_owned


class PairLayout:
    def __init__(self, P_r: int, P_c: int, r: int, c: int, grid_ranks: List[List[int]],
                 row_group=None, col_group=None, distributed: bool = False):
        self.P_r, self.P_c, self.r, self.c = P_r, P_c, r, c
        self.grid_ranks = grid_ranks
        self.row_group = row_group      # ranks sharing my row block (size P_c), ordered by column
        self.col_group = col_group      # ranks sharing my column block (size P_r), ordered by row
        self.distributed = distributed
        self._pos = {grid_ranks[i][j]: (i, j) for i in range(P_r) for j in range(P_c)}
        self._T: Optional["PairLayout"] = None

    # ---- geometry ---------------------------------------------------------------
    @property
    def kind(self) -> str:
        if self.P_r == 1 and self.P_c == 1:
            return "local"
        if self.P_r == self.P_c:
            return "square"
        if self.P_c == 1:
            return "rows"
        if self.P_r == 1:
            return "cols"
        raise ValueError(f"unsupported layout {self.P_r}x{self.P_c}")

    @property
    def T(self) -> "PairLayout":
        if self._T is None:
            gt = [[self.grid_ranks[j][i] for j in range(self.P_r)] for i in range(self.P_c)]
            self._T = PairLayout(self.P_c, self.P_r, self.c, self.r, gt, self.col_group,
                                 self.row_group, self.distributed)
            self._T._T = self
        return self._T

    def rank_of(self, i: int, j: int) -> int:
        return self.grid_ranks[i % self.P_r][j % self.P_c]

    @property
    def partner(self) -> int:
        """Rank holding the transposed block (c, r) (square grids)."""
        return self.rank_of(self.c, self.r)

    def rows(self, N: int) -> slice:
        n = N // self.P_r
        return slice(self.r * n, (self.r + 1) * n)

    def cols(self, N: int) -> slice:
        n = N // self.P_c
        return slice(self.c * n, (self.c + 1) * n)

    # ---- compute / communication --------------------------------------------------
    def matmul(self, X, Y, tx: bool, ty: bool, tag: str):
        """Per-channel op(X) @ op(Y) of block-sharded [..., rows, cols] matrices."""
        return dist_matmul(X, Y, tx, ty, self, tag)

    def matmul_owned(self, operands: list, tx: bool, ty: bool, tag: str, overlap=None):
        """Like :meth:`matmul` for operands ``[X, Y]`` handed over by the caller
        (who keeps no other reference): without autograd they are freed early.
        ``overlap``: independent work run once while the first transfer moves."""
        return dist_matmul_owned(operands, tx, ty, self, tag, overlap=overlap)

    def gather_row_peers(self, x, dim: int, tag: str):
        """All-gather along ``dim`` over the ranks of my block row (backward: reduce-scatter)."""
        return comm.gather_reduce_scatter(x, self.row_group, dim, tag)

    def gather_col_peers(self, x, dim: int, tag: str):
        """All-gather along ``dim`` over the ranks of my block column (backward: reduce-scatter)."""
        return comm.gather_reduce_scatter(x, self.col_group, dim, tag)

    def exchange_transpose(self, x, tag: str):
        """Swap ``x`` with the rank holding the transposed block (identity on the diagonal)."""
        if not self.distributed:
            return x
        return comm.exchange(x, self.partner, tag)

    def reshard_cols_to_rows(self, z, tag: str):
        """'cols' layout: [B, N, n, ...] (my columns) -> [B, n, N, ...] (rows with my index)."""
        assert self.kind == "cols"
        peers = [self.rank_of(0, j) for j in range(self.P_c)]
        return comm.reshard(z, 1, 2, peers, self.c, tag)

    def reshard_rows_to_cols(self, z, tag: str):
        assert self.kind == "cols"
        peers = [self.rank_of(0, j) for j in range(self.P_c)]
        return comm.reshard(z, 2, 1, peers, self.c, tag)

    # Replicated -> sharded.  Whenever the pair tensor is split at all, the
    # slice feeds rank-specific computation, so its gradient is partial on every
    # rank and must be all-reduced -- even along an axis that is not split.
    def slice_rows(self, t, dim: int, tag: str):
        """This rank's row tokens of a replicated token-indexed tensor (grad: all-reduce)."""
        return self._slice(t, [(dim, self.rows(t.shape[dim]))] if self.P_r > 1 else [], tag)

    def slice_cols(self, t, dim: int, tag: str):
        return self._slice(t, [(dim, self.cols(t.shape[dim]))] if self.P_c > 1 else [], tag)

    def slice_block(self, t, row_dim: int, col_dim: int, tag: str):
        """This rank's block of a replicated pair tensor (grad: all-reduce)."""
        sl = []
        if self.P_r > 1:
            sl.append((row_dim, self.rows(t.shape[row_dim])))
        if self.P_c > 1:
            sl.append((col_dim, self.cols(t.shape[col_dim])))
        return self._slice(t, sl, tag)

    def _slice(self, t, dim_slices, tag):
        if self.kind == "local":
            return t
        narrows = [(d, s.start, s.stop - s.start) for d, s in dim_slices]
        return comm.slice_replicated(t, narrows, tag, self.distributed)

    def gather_full(self, x, tag: str, row_dim: int = 1, col_dim: int = 2):
        """All-gather the blocks of a pair tensor from every rank into the full
        tensor (one world all-gather).  The result feeds replicated computation,
        so backward just keeps this rank's block of the gradient."""
        if self.kind == "local":
            return x
        return _GatherBlocks.apply(x, self, row_dim, col_dim, tag)


class _GatherBlocks(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lay, row_dim, col_dim, tag):
        ctx.lay, ctx.row_dim, ctx.col_dim = lay, row_dim, col_dim
        x = x.contiguous()
        world = dist.get_world_size()
        comm.count(tag, "all_gather")
        if dist.get_backend() != "gloo" and hasattr(dist, "all_gather_into_tensor"):
            buf = x.new_empty((world,) + tuple(x.shape))
            dist.all_gather_into_tensor(buf, x)
            parts = buf.unbind(0)
        else:
            parts = [torch.empty_like(x) for _ in range(world)]
            dist.all_gather([comm._wire(p) for p in parts], comm._wire(x))
        rows = [torch.cat([parts[lay.rank_of(i, j)] for j in range(lay.P_c)], col_dim)
                for i in range(lay.P_r)]
        return torch.cat(rows, row_dim)

    @staticmethod
    def backward(ctx, g):
        lay = ctx.lay
        rs = lay.rows(g.shape[ctx.row_dim])
        cs = lay.cols(g.shape[ctx.col_dim])
        g = g.narrow(ctx.row_dim, rs.start, rs.stop - rs.start)
        g = g.narrow(ctx.col_dim, cs.start, cs.stop - cs.start)
        return g.contiguous(), None, None, None, None


LOCAL = PairLayout(1, 1, 0, 0, [[0]])


def check_grid_shape(cp0: int, cp1: int, world: Optional[int] = None) -> str:
    """Validate a CP grid; return its kind.  Raises ValueError with a clear message."""
    if cp0 < 1 or cp1 < 1:
        raise ValueError(f"CP grid {cp0}x{cp1}: both sizes must be >= 1")
    if world is not None and cp0 * cp1 != world:
        raise ValueError(f"CP grid {cp0}x{cp1} needs {cp0 * cp1} ranks, but the world size is {world}")
    if cp0 == cp1 == 1:
        return "local"
    if cp0 == cp1:
        return "square"
    if cp1 == 1:
        return "rows"
    if cp0 == 1:
        return "cols"
    raise ValueError(
        f"unsupported CP grid {cp0}x{cp1}: the pair tensor must be split on a square "
        f"q x q grid (Cannon's algorithm) or a 1 x q / q x 1 grid (1-D ring); "
        f"e.g. use {min(cp0, cp1)}x{min(cp0, cp1)} or 1x{cp0 * cp1}")


class CPGrid:
    """The cp0 x cp1 process grid (rank = i * cp1 + j) with its peer groups.

    Must be constructed on every rank, after ``init_process_group``, in the same
    order relative to other group creations (it calls ``dist.new_group``).
    """

    def __init__(self, cp0: int, cp1: int):
        world = dist.get_world_size() if dist.is_initialized() else 1
        self.kind = check_grid_shape(cp0, cp1, world)
        self.cp0, self.cp1 = cp0, cp1
        rank = dist.get_rank() if dist.is_initialized() else 0
        grid = [[i * cp1 + j for j in range(cp1)] for i in range(cp0)]
        r, c = divmod(rank, cp1)
        row_group = col_group = None
        if cp1 > 1:
            for i in range(cp0):          # every rank creates every group, same order
                g = dist.new_group(grid[i])
                if i == r:
                    row_group = g
        if cp0 > 1:
            for j in range(cp1):
                g = dist.new_group([grid[i][j] for i in range(cp0)])
                if j == c:
                    col_group = g
        self.layout = PairLayout(cp0, cp1, r, c, grid, row_group, col_group,
                                 distributed=dist.is_initialized())
        self.rank = rank
        # the token count must split evenly along both grid axes
        self.multiple = cp0 * cp1 // math.gcd(cp0, cp1)

    def padded_tokens(self, n: int) -> int:
        m = self.multiple
        return (n + m - 1) // m * m
