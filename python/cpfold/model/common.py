# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Shared building blocks: Glorot-initialised linears, transitions, attention,
chunking, and the hooks that connect modules to context parallelism.

CP hook: every module may carry an attribute ``cp`` (a ``cpfold.wrapper.CPContext``
or None), set by :func:`set_context_parallel`.  ``layout_of(module)`` returns
the pair layout to use (``LOCAL`` without CP), so each module has ONE code
path whose communication degenerates to nothing on a single process.

Gradient bookkeeping: parameters that act on *sharded* pair blocks get only a
partial gradient on each rank and must be summed over ranks after backward;
such submodules are flagged with :func:`mark_pair_sharded`.  Everything else
runs replicated (identically) on every rank and gets identical gradients.
"""
from __future__ import annotations

import math
from typing import Callable, Iterator

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..cp.layout import LOCAL, PairLayout

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")
MASK_BIAS = -1e9           # additive bias for masked keys (finite: fully masked rows stay finite)


def layout_of(module: nn.Module) -> PairLayout:
    cp = getattr(module, "cp", None)
    return LOCAL if cp is None else cp.layout


def set_context_parallel(model: nn.Module, ctx) -> None:
    """Attach (or with ``ctx=None`` detach) a CP context to every submodule."""
    for m in model.modules():
        m.cp = ctx


def mark_pair_sharded(module: nn.Module) -> nn.Module:
    module._cp_pair_sharded = True
    return module


def pair_sharded_parameters(model: nn.Module) -> Iterator[nn.Parameter]:
    """Parameters under a module flagged by :func:`mark_pair_sharded` (deduplicated)."""
    seen = set()
    for m in model.modules():
        if getattr(m, "_cp_pair_sharded", False):
            for p in m.parameters():
                if id(p) not in seen:
                    seen.add(id(p))
                    yield p


def glorot_init_(model: nn.Module, gain: float) -> None:
    """Glorot-uniform x ``gain`` for every Linear weight; zero biases; unit LayerNorms."""
    for m in model.modules():
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight, gain=gain)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm) and m.elementwise_affine:
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


def linear(c_in: int, c_out: int, bias: bool = True) -> nn.Linear:
    return nn.Linear(c_in, c_out, bias=bias)


def rows_chunk(n_rows: int, per_row: int, budget: int) -> int:
    """Rows per chunk so that chunk * per_row <= budget (at least 1)."""
    return max(1, min(n_rows, budget // max(1, per_row)))


def apply_chunked(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, dim: int,
                  per_row: int, budget: int) -> torch.Tensor:
    """fn(x) computed in slices along ``dim`` to bound the temporaries."""
    n = x.shape[dim]
    step = rows_chunk(n, per_row, budget)
    if step >= n:
        return fn(x)
    if not inference_mode_ops():
        return torch.cat([fn(x.narrow(dim, i, min(step, n - i))) for i in range(0, n, step)], dim)
    out = None                        # without autograd: chunks written into one buffer (no cat copy)
    for i in range(0, n, step):
        y = fn(x.narrow(dim, i, min(step, n - i)))
        if out is None:
            shape = list(y.shape)
            shape[dim] = n
            out = y.new_empty(shape)
        out.narrow(dim, i, y.shape[dim]).copy_(y)
    return out


def inference_mode_ops() -> bool:
    """True when no autograd graph is recorded: the fast paths may then work in
    place (gating, residual adds) and write straight into preallocated buffers."""
    return not torch.is_grad_enabled()


def fused_weight(*linears: nn.Linear):
    """Weight and bias of the Linears stacked along the output axis (one GEMM
    instead of several; a bias-less part gets zeros).  Differentiable."""
    w = torch.cat([m.weight for m in linears], 0) if len(linears) > 1 else linears[0].weight
    if all(m.bias is None for m in linears):
        return w, None
    b = torch.cat([m.bias if m.bias is not None else m.weight.new_zeros(m.weight.shape[0])
                   for m in linears], 0)
    return w, b


def residual(z: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """z + d; without autograd the sum goes into d's buffer (no new allocation)
    when d is contiguous (so the result keeps the usual layout)."""
    if inference_mode_ops() and d.is_contiguous() and d.shape == z.shape and d.dtype == z.dtype:
        return d.add_(z)
    return z + d


def attention(q, k, v, bias=None):
    """Softmax attention.  q [..., H, Q, d], k/v [..., H, K, d], bias broadcastable
    to [..., H, Q, K].  Uses fused SDPA on CUDA (torch >= 2), plain math otherwise.

    A bias that is broadcast over leading dims (e.g. one [H, Q, K] bias for
    every row of a triangle attention) is handed to SDPA as a stride-0 view, not
    materialised; its last axis must be contiguous (it is made so otherwise)."""
    if HAS_SDPA and q.is_cuda:
        lead = q.shape[:-3]
        H, Q, d = q.shape[-3:]
        K = k.shape[-2]
        q4, k4, v4 = (t.reshape(-1, H, t.shape[-2], d) for t in (q, k, v))
        b4 = None
        if bias is not None:
            b = bias.to(q.dtype)
            if b.stride(-1) != 1:
                b = b.contiguous()
            b4 = b.expand(*lead, H, Q, K).reshape(-1, H, Q, K)
        o = F.scaled_dot_product_attention(q4, k4, v4, attn_mask=b4)
        return o.reshape(*lead, H, Q, d)
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if bias is not None:
        scores = scores + bias
    return torch.matmul(scores.float().softmax(-1).to(v.dtype), v)


class Transition(nn.Module):
    """SwiGLU transition (AF3 Algorithm 11): LN -> (swish(a) * b) -> Linear."""

    def __init__(self, c: int, n: int, chunk_elems: int = 1 << 28):
        super().__init__()
        self.norm = nn.LayerNorm(c)
        self.linear_a = linear(c, n * c, bias=False)
        self.linear_b = linear(c, n * c, bias=False)
        self.linear_out = linear(n * c, c, bias=False)
        self.chunk_elems = chunk_elems
        self.n = n

    def _core(self, x):
        x = self.norm(x)
        # Two GEMMs with dense outputs (one fused GEMM leaves a and b strided, and the
        # elementwise kernels on strided halves cost more than the GEMM saves).
        if inference_mode_ops():
            return self.linear_out(F.silu(self.linear_a(x), inplace=True).mul_(self.linear_b(x)))
        return self.linear_out(F.silu(self.linear_a(x)) * self.linear_b(x))

    def forward(self, x):
        if x.dim() >= 4:   # pair-shaped [B, R, C, c]: chunk over rows (LN, a|b, the product)
            per_row = x.shape[-2] * x.shape[-1] * (2 * self.n + 2) * x.shape[0]
            return apply_chunked(self._core, x, 1, per_row, self.chunk_elems)
        return self._core(x)


class AdaLN(nn.Module):
    """Adaptive LayerNorm (AF3 Algorithm 26): conditions a on s."""

    def __init__(self, c_a: int, c_s: int):
        super().__init__()
        self.norm_a = nn.LayerNorm(c_a, elementwise_affine=False)
        self.norm_s = nn.LayerNorm(c_s, elementwise_affine=False)
        self.linear_scale = linear(c_s, c_a)
        self.linear_shift = linear(c_s, c_a, bias=False)

    def forward(self, a, s):
        s = self.norm_s(s)
        return torch.sigmoid(self.linear_scale(s)) * self.norm_a(a) + self.linear_shift(s)


class ConditionedTransitionBlock(nn.Module):
    """AF3 Algorithm 25: SwiGLU transition with adaptive LN and adaLN-zero gating."""

    def __init__(self, c_a: int, c_s: int, n: int = 2):
        super().__init__()
        self.ada_ln = AdaLN(c_a, c_s)
        self.linear_a = linear(c_a, n * c_a, bias=False)
        self.linear_b = linear(c_a, n * c_a, bias=False)
        self.linear_out = linear(n * c_a, c_a, bias=False)
        self.linear_gate = linear(c_s, c_a)

    def forward(self, a, s):
        x = self.ada_ln(a, s)
        b = F.silu(self.linear_a(x)) * self.linear_b(x)
        return torch.sigmoid(self.linear_gate(s)) * self.linear_out(b)


class PairBiasProjection(nn.Module):
    """LN(z) -> per-head attention bias [B, R, C, H]."""

    def __init__(self, c_z: int, heads: int):
        super().__init__()
        self.norm = nn.LayerNorm(c_z)
        self.linear = linear(c_z, heads, bias=False)

    def forward(self, z):
        return self.linear(self.norm(z))


def add_key_bias(bias: torch.Tensor, key_bias: torch.Tensor) -> torch.Tensor:
    """bias [B, H, Q, K] (any strides) + key_bias (broadcastable) as one new
    contiguous tensor (SDPA reads the bias row by row: its last axis must be dense)."""
    if inference_mode_ops():
        out = torch.empty(bias.shape, dtype=bias.dtype, device=bias.device)
        return torch.add(bias, key_bias, out=out)
    return (bias + key_bias).contiguous()


class AttentionPairBias(nn.Module):
    """Token attention with pair bias (AF3 Algorithm 24).

    Without ``c_cond`` it is the Pairformer's single attention; with it, the
    DiffusionTransformer variant (adaptive LN + adaLN-zero output gate).
    ``pair_sharded``: z arrives as this rank's block; the small bias [.., H] is
    computed locally and all-gathered (one AllGather), the attention itself runs
    replicated on the full single representation.
    """

    def __init__(self, c_s: int, c_z: int, heads: int, c_cond: int = 0, pair_sharded: bool = True):
        super().__init__()
        assert c_s % heads == 0
        self.heads, self.head_dim = heads, c_s // heads
        self.c_cond = c_cond
        self.norm = AdaLN(c_s, c_cond) if c_cond else nn.LayerNorm(c_s)
        self.linear_q = linear(c_s, c_s)
        self.linear_k = linear(c_s, c_s, bias=False)
        self.linear_v = linear(c_s, c_s, bias=False)
        self.linear_g = linear(c_s, c_s, bias=False)
        self.linear_o = linear(c_s, c_s, bias=False)
        self.pair_bias = PairBiasProjection(c_z, heads)
        if pair_sharded:
            mark_pair_sharded(self.pair_bias)
        if c_cond:
            self.linear_cond_gate = linear(c_cond, c_s)

    def forward(self, s, z, tok_mask, cond=None, bias=None):
        """s [B, N, c_s] (replicated); z: pair block (or None if ``bias`` given:
        a precomputed full bias [B, N, N, H]); tok_mask [B, N]."""
        if bias is None:
            bias = layout_of(self).gather_full(self.pair_bias(z), tag=type(self).__name__)
        B, N, _ = s.shape
        x = self.norm(s, cond) if self.c_cond else self.norm(s)
        H, d = self.heads, self.head_dim
        split = lambda t: t.view(*t.shape[:-1], H, d).transpose(-2, -3)   # [.., H, N, d]
        q, k, v = split(self.linear_q(x)), split(self.linear_k(x)), split(self.linear_v(x))
        key_bias = ((1.0 - tok_mask) * MASK_BIAS)[:, None, None, :].to(bias.dtype)
        b = add_key_bias(bias.permute(0, 3, 1, 2), key_bias)                # [B, H, N, N] contiguous
        if b.shape[0] != q.shape[0]:
            b = b.expand(q.shape[0], *b.shape[1:])
        o = attention(q, k, v, b)                                           # [B, H, N, d]
        o = o.transpose(-2, -3).reshape(*x.shape[:-1], H * d)
        g = self.linear_g(x)
        if inference_mode_ops():
            out = self.linear_o(g.sigmoid_().mul_(o))
        else:
            out = self.linear_o(torch.sigmoid(g) * o)
        if self.c_cond:
            out = torch.sigmoid(self.linear_cond_gate(cond)) * out
        return out
