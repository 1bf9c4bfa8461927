# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Pairformer trunk (AF3 Algorithm 17) with context-parallel pair operations.

The pair tensor z arrives as this rank's block [B, n_r, n_c, c_z] (the full
tensor without CP).  ``tok_mask`` [B, N] is always the full (replicated) token
mask; the single representation s [B, N, c_s] is replicated.
"""
from __future__ import annotations

import torch
import torch.nn as nn

import torch.nn.functional as F

from ..cp.cannon import local_matmul_rows
from .common import (AttentionPairBias, MASK_BIAS, Transition, add_key_bias, attention, fused_weight,
                     inference_mode_ops, layout_of, linear, mark_pair_sharded, residual, rows_chunk)


class TriangleMultiplication(nn.Module):
    """Triangle multiplicative update (AF3 Algorithms 12/13).

    outgoing: x_ij = sum_k a_ik * b_jk     (per channel:  A @ B^T)
    incoming: x_ij = sum_k a_ki * b_kj     (per channel:  A^T @ B)
    The contraction runs through ``PairLayout.matmul`` (Cannon / ring under
    CP); the projections before and the gated output after are block-local.
    """

    outgoing = True

    def __init__(self, c_z: int, c_hidden: int, chunk_elems: int = 1 << 28):
        super().__init__()
        self.c_z, self.c_hidden, self.chunk_elems = c_z, c_hidden, chunk_elems
        self.norm_in = nn.LayerNorm(c_z)
        self.linear_ab_p = linear(c_z, 2 * c_hidden, bias=False)
        self.linear_ab_g = linear(c_z, 2 * c_hidden, bias=False)
        self.linear_g = linear(c_z, c_z, bias=False)
        self.norm_out = nn.LayerNorm(c_hidden)
        self.linear_out = linear(c_hidden, c_z, bias=False)
        mark_pair_sharded(self)

    def _forward(self, z, tok_mask):
        lay = layout_of(self)
        N = tok_mask.shape[-1]
        B, n_r, n_c, c = z.shape
        h = self.c_hidden
        m_r, m_c = tok_mask[:, lay.rows(N)], tok_mask[:, lay.cols(N)]
        # One GEMM for the four projections of a and b (values and gates).
        w_in, _ = fused_weight(self.linear_ab_p, self.linear_ab_g)        # [4h, c]
        if not inference_mode_ops():
            return self._forward_autograd(z, m_r, m_c, w_in)
        # Inference: per row chunk, LN(z) once; the projections come out of the
        # GEMM channel-first ([4h, rows * n_c] = W @ x^T), the layout the batched
        # product and the p2p transfers use, so no permute copy is made; gating
        # and masking run in place and write straight into the operand buffer.
        # The output gate sigmoid(linear_g(LN(z))) is stored in the output
        # buffer and multiplied in place at the end (no second LN(z)).
        step = rows_chunk(n_r, n_c * (2 * c + 4 * h), self.chunk_elems)
        local = lay.kind == "local"       # without CP the gate is taken from the same LN(z)
        ab = z.new_empty(B, 2 * h, n_r, n_c)
        out = z.new_empty(B, n_r, n_c, self.c_z)
        for bi in range(B):
            for i in range(0, n_r, step):
                x = self.norm_in(z[bi, i:i + step])                        # [r, n_c, c]
                r = x.shape[0]
                pg = torch.mm(w_in, x.reshape(r * n_c, c).t())             # [4h, r * n_c]
                p, g = pg[:2 * h], pg[2 * h:]
                pm = (m_r[bi, i:i + step, None] * m_c[bi, None, :]).reshape(1, r * n_c).to(g.dtype)
                g.sigmoid_().mul_(pm)
                torch.mul(g.view(2 * h, r, n_c), p.view(2 * h, r, n_c), out=ab[bi, :, i:i + step])
                if local:
                    torch.sigmoid(self.linear_g(x), out=out[bi, i:i + step])
                del x, pg, p, g

        def output_gate():        # under CP: runs while the product's first transfer is in flight
            for bj in range(B):
                for j in range(0, n_r, step):
                    torch.sigmoid(self.linear_g(self.norm_in(z[bj, j:j + step])), out=out[bj, j:j + step])

        step = rows_chunk(n_r, n_c * (2 * h + c), self.chunk_elems)
        if local:
            # Without CP the product runs in row chunks (each at most chunk_elems) straight
            # into the output pass: the whole [h, N, N] result never exists (peak: z, a, b,
            # out and a chunk).  Few, large chunks: the GEMM of a row chunk of the incoming
            # product reads a column slice of a, which costs when the slices are thin.
            a, b = ab[:, :h], ab[:, h:]
            step_t = max(step, rows_chunk(n_r, n_c * h, self.chunk_elems))
            for bi in range(B):
                for i in range(0, n_r, step_t):
                    t = local_matmul_rows(a[bi], b[bi], not self.outgoing, self.outgoing,
                                          slice(i, min(i + step_t, n_r)))         # [h, r_t, n_c]
                    for j in range(0, t.shape[1], step):
                        tt = t[:, j:j + step].permute(1, 2, 0)                     # [r, n_c, h]
                        out[bi, i + j:i + j + tt.shape[0]].mul_(self.linear_out(self.norm_out(tt)))
                    del t
            return out
        # The operand list is handed over: the distributed product frees a and b
        # as soon as it no longer needs them.
        operands = [ab[:, :h], ab[:, h:]]
        del ab
        t = lay_matmul(self, operands, output_gate)
        for bi in range(B):
            for i in range(0, n_r, step):
                tt = t[bi, :, i:i + step].permute(1, 2, 0)                 # [r, n_c, h]
                out[bi, i:i + step].mul_(self.linear_out(self.norm_out(tt)))
        return out

    def _forward_autograd(self, z, m_r, m_c, w_in):
        """The same computation with out-of-place ops (training), row-chunked."""
        B, n_r, n_c, c = z.shape
        h = self.c_hidden
        step = rows_chunk(n_r, B * n_c * (2 * c + 6 * h), self.chunk_elems)
        a_parts, b_parts, gates = [], [], []
        for i in range(0, n_r, step):
            x = self.norm_in(z[:, i:i + step])
            pm = (m_r[:, i:i + step, None] * m_c[:, None, :])[..., None].to(x.dtype)
            p, g = F.linear(x, w_in).split(2 * h, -1)
            ab = (torch.sigmoid(g) * p * pm).permute(0, 3, 1, 2)          # [B, 2h, r, n_c]
            a_parts.append(ab[:, :h])
            b_parts.append(ab[:, h:])
            gates.append(torch.sigmoid(self.linear_g(x)))
        cat = lambda parts, dim: parts[0] if len(parts) == 1 else torch.cat(parts, dim)
        operands = [cat(a_parts, 2).contiguous(), cat(b_parts, 2).contiguous()]
        gate = cat(gates, 1)
        del a_parts, b_parts, gates
        t = lay_matmul(self, operands)
        return gate * self.linear_out(self.norm_out(t.permute(0, 2, 3, 1)))


def lay_matmul(tri_mul, operands, overlap=None):
    return layout_of(tri_mul).matmul_owned(operands, not tri_mul.outgoing, tri_mul.outgoing,
                                           tag=type(tri_mul).__name__, overlap=overlap)


# Each concrete class defines its own ``forward`` so that a profiler's
# functions-trace (which instruments function objects) names them apart.
class TriangleMultiplicationOutgoing(TriangleMultiplication):
    outgoing = True

    def forward(self, z, tok_mask):
        return self._forward(z, tok_mask)


class TriangleMultiplicationIncoming(TriangleMultiplication):
    outgoing = False

    def forward(self, z, tok_mask):
        return self._forward(z, tok_mask)


class TriangleAttention(nn.Module):
    """Triangle attention (AF3 Algorithms 14/15, Boltz/OpenFold formulation).

    starting node: o_ij = sum_k softmax_k(q_ij . k_ik + b_jk) v_ik   (attend along a row)
    ending node  : the same on z^T, transposed back.

    Under CP (square grid) the keys/values of my block rows are all-gathered
    over my row peers and the bias rows b[j in my columns, :] come from the
    rank holding the transposed block (one p2p exchange).  On a 1-D grid the
    rows are complete locally (the bias is all-gathered); if the attended axis
    is the sharded one, an all-to-all reshard goes round the computation.
    """

    starting = True

    def __init__(self, c_z: int, heads: int, head_dim: int, chunk_elems: int = 1 << 28):
        super().__init__()
        self.heads, self.head_dim = heads, head_dim
        self.norm = nn.LayerNorm(c_z)
        self.linear_bias = linear(c_z, heads, bias=False)
        self.linear_q = linear(c_z, heads * head_dim, bias=False)
        self.linear_k = linear(c_z, heads * head_dim, bias=False)
        self.linear_v = linear(c_z, heads * head_dim, bias=False)
        self.linear_g = linear(c_z, heads * head_dim)
        self.linear_o = linear(heads * head_dim, c_z)
        self.chunk_elems = chunk_elems
        mark_pair_sharded(self)

    def _forward(self, z, tok_mask):
        lay = layout_of(self)
        if not self.starting:
            z, lay = z.transpose(1, 2), lay.T
        if lay.kind == "cols":
            tag = type(self).__name__
            out = lay.reshard_rows_to_cols(
                self._rows(lay.reshard_cols_to_rows(z, tag), tok_mask, lay.T), tag)
        else:
            out = self._rows(z, tok_mask, lay)
        return out if self.starting else out.transpose(1, 2)

    def _rows(self, z, tok_mask, lay):
        """Starting-node attention on a layout whose attended axis (columns)
        is either unsharded ('local', 'rows') or square-sharded."""
        tag = type(self).__name__
        N = tok_mask.shape[-1]
        x = self.norm(z)                                             # [B, n_r, n_c, c]
        if lay.kind == "square":
            x_kv = lay.gather_row_peers(x, 2, tag)                   # [B, n_r, N, c]
            del x                                                    # queries: a view of x_kv
            x = x_kv[:, :, lay.cols(N)]
            bias = lay.exchange_transpose(self._bias(x_kv), tag)     # b[h, j in cols, k]
        else:
            x_kv = x
            bias = lay.gather_col_peers(self._bias(x), 2, tag)      # [B, H, N, N]
        # Keys of padding tokens are masked; the mask is folded into the one
        # [B, H, Q, K] bias that every row shares (SDPA reads it as a stride-0
        # broadcast over the rows: no per-row copy).  Padding *rows* attend
        # like valid ones; their outputs are never read by valid tokens.
        key_bias = ((1.0 - tok_mask) * MASK_BIAS)[:, None, None, :].to(bias.dtype)
        return self.attend(x, x_kv, add_key_bias(bias, key_bias))

    def _bias(self, x):
        """linear_bias(x) channel-first: [B, H, R, K] straight out of the GEMM W @ x^T."""
        B, R, K, c = x.shape
        w = self.linear_bias.weight                                  # [H, c]
        return torch.matmul(w, x.reshape(B, R * K, c).transpose(1, 2)).view(B, -1, R, K)

    def attend(self, x_q, x_kv, bias):
        """x_q [B, R, Q, c] queries, x_kv [B, R, K, c] keys/values (same rows; the
        same tensor when queries and keys coincide), bias [B, H, Q, K] shared by
        every row.  Chunked over rows R; q/k/v/g come out of one GEMM (two when
        the keys are gathered), gating runs in place without autograd."""
        B, R, Q, c = x_q.shape
        K = x_kv.shape[2]
        H, d = self.heads, self.head_dim
        hd = H * d
        same = x_q is x_kv
        if same:
            w_all, b_all = fused_weight(self.linear_q, self.linear_k, self.linear_v, self.linear_g)
        else:
            w_qg, b_qg = fused_weight(self.linear_q, self.linear_g)
            w_kv, b_kv = fused_weight(self.linear_k, self.linear_v)
        fast = inference_mode_ops()
        # per row: the projections (4 hd per key/query), the attention output, the result
        step = rows_chunk(R, B * (Q * (3 * hd + c) + K * 2 * hd), self.chunk_elems)
        out = None
        for bi in range(B):
            bias_b = bias[bi:bi + 1].unsqueeze(1)                      # [1, 1, H, Q, K]
            for i in range(0, R, step):
                xq = x_q[bi:bi + 1, i:i + step]
                r = xq.shape[1]
                if same:
                    q, k, v, g = F.linear(xq, w_all, b_all).split(hd, -1)
                else:
                    q, g = F.linear(xq, w_qg, b_qg).split(hd, -1)
                    k, v = F.linear(x_kv[bi:bi + 1, i:i + step], w_kv, b_kv).split(hd, -1)
                heads = lambda t, L: t.view(1, r, L, H, d).transpose(2, 3)     # [1, r, H, L, d]
                o = attention(heads(q, Q), heads(k, K), heads(v, K), bias_b)   # [1, r, H, Q, d]
                o = o.transpose(2, 3).reshape(1, r, Q, hd)
                y = self.linear_o(g.sigmoid_().mul_(o) if fast else torch.sigmoid(g) * o)
                if step >= R and B == 1:
                    return y
                if not fast:
                    out = [] if out is None else out
                    out.append(y)
                    continue
                if out is None:
                    out = y.new_empty(B, R, Q, y.shape[-1])
                out[bi:bi + 1, i:i + step] = y
        if not fast:                       # autograd: chunks concatenated (rows, then batch)
            per_b = len(out) // B
            rows = [torch.cat(out[j * per_b:(j + 1) * per_b], 1) for j in range(B)]
            return rows[0] if B == 1 else torch.cat(rows, 0)
        return out


class TriangleAttentionStartingNode(TriangleAttention):
    starting = True

    def forward(self, z, tok_mask):
        return self._forward(z, tok_mask)


class TriangleAttentionEndingNode(TriangleAttention):
    starting = False

    def forward(self, z, tok_mask):
        return self._forward(z, tok_mask)


class PairTransition(Transition):
    """Pair transition (block-local, chunked over rows)."""

    def __init__(self, c_z: int, n: int, chunk_elems: int = 1 << 28):
        super().__init__(c_z, n, chunk_elems)
        mark_pair_sharded(self)

    def forward(self, z):
        return super().forward(z)


class SingleTransition(Transition):
    """Single transition (replicated)."""

    def forward(self, s):
        return super().forward(s)


class PairformerBlock(nn.Module):
    def __init__(self, cfg, pair_only: bool = False):
        super().__init__()
        ce = cfg.chunk_elems
        self.tri_mul_out = TriangleMultiplicationOutgoing(cfg.c_z, cfg.tri_mul_hidden, ce)
        self.tri_mul_in = TriangleMultiplicationIncoming(cfg.c_z, cfg.tri_mul_hidden, ce)
        self.tri_att_start = TriangleAttentionStartingNode(cfg.c_z, cfg.tri_att_heads, cfg.tri_att_head_dim, ce)
        self.tri_att_end = TriangleAttentionEndingNode(cfg.c_z, cfg.tri_att_heads, cfg.tri_att_head_dim, ce)
        self.pair_transition = PairTransition(cfg.c_z, cfg.transition_n, ce)
        self.pair_only = pair_only
        if not pair_only:
            self.attention_pair_bias = AttentionPairBias(cfg.c_s, cfg.c_z, cfg.single_att_heads)
            self.single_transition = SingleTransition(cfg.c_s, cfg.transition_n)

    def pair_stack(self, z, tok_mask):
        # residual(): without autograd the sum reuses the update's buffer
        z = residual(z, self.tri_mul_out(z, tok_mask))
        z = residual(z, self.tri_mul_in(z, tok_mask))
        z = residual(z, self.tri_att_start(z, tok_mask))
        z = residual(z, self.tri_att_end(z, tok_mask))
        return residual(z, self.pair_transition(z))

    def forward(self, s, z, tok_mask):
        z = self.pair_stack(z, tok_mask)
        if not self.pair_only:
            s = residual(s, self.attention_pair_bias(s, z, tok_mask))
            s = residual(s, self.single_transition(s))
        return s, z


class PairformerModule(nn.Module):
    """Stack of PairformerBlocks (the trunk; also used by the confidence head)."""

    def __init__(self, cfg, num_blocks: int):
        super().__init__()
        self.blocks = nn.ModuleList([PairformerBlock(cfg) for _ in range(num_blocks)])

    def forward(self, s, z, tok_mask):
        for block in self.blocks:
            s, z = block(s, z, tok_mask)
        return s, z
