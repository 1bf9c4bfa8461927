"""Pairformer trunk (AF3 Algorithm 17) with context-parallel pair operations.

The pair tensor z arrives as this rank's block [B, n_r, n_c, c_z] (the full
tensor without CP).  ``tok_mask`` [B, N] is always the full (replicated) token
mask; the single representation s [B, N, c_s] is replicated.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from .common import (AttentionPairBias, MASK_BIAS, Transition, attention, layout_of,
                     linear, mark_pair_sharded, rows_chunk)


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
        B, n_r, n_c, _ = z.shape
        h = self.c_hidden
        m_r, m_c = tok_mask[:, lay.rows(N)], tok_mask[:, lay.cols(N)]
        # Row-chunked projections written straight into channel-first operands
        # [B, h, n_r, n_c] (the layout the batched GEMMs and the p2p transfers use).
        step = rows_chunk(n_r, B * n_c * (self.c_z + 6 * h), self.chunk_elems)

        def project(i):
            x = self.norm_in(z[:, i:i + step])
            pm = (m_r[:, i:i + step, None] * m_c[:, None, :])[..., None].to(x.dtype)
            ab = torch.sigmoid(self.linear_ab_g(x)) * self.linear_ab_p(x) * pm
            return ab.permute(0, 3, 1, 2)

        if step >= n_r:
            ab = project(0)
            a, b = ab[:, :h].contiguous(), ab[:, h:].contiguous()
            del ab
        else:
            a = z.new_empty(B, h, n_r, n_c)
            b = z.new_empty(B, h, n_r, n_c)
            for i in range(0, n_r, step):
                ab = project(i)
                a[:, :, i:i + step] = ab[:, :h]
                b[:, :, i:i + step] = ab[:, h:]
            del ab
        # The operand list is handed over: without autograd the distributed
        # product frees a and b as soon as the initial skew has copied them.
        operands = [a, b]
        del a, b
        t = lay.matmul_owned(operands, not self.outgoing, self.outgoing, tag=type(self).__name__)

        def output(i):            # gate recomputed from z: no full LN(z) kept alive
            x = self.norm_in(z[:, i:i + step])
            tt = t[:, :, i:i + step].permute(0, 2, 3, 1)
            return torch.sigmoid(self.linear_g(x)) * self.linear_out(self.norm_out(tt))

        if step >= n_r:
            return output(0)
        return torch.cat([output(i) for i in range(0, n_r, step)], 1)


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
            bias = lay.exchange_transpose(self.linear_bias(x_kv), tag)   # b[j in cols, k]
        else:
            x_kv = x
            bias = lay.gather_col_peers(self.linear_bias(x), 1, tag)     # [B, N, N, H]
        key_mask = tok_mask[:, lay.rows(N), None] * tok_mask[:, None, :]     # [B, n_r, N]
        return self.attend(x, x_kv, bias, key_mask)

    def attend(self, x_q, x_kv, bias, key_mask):
        """x_q [B, R, Q, c] queries, x_kv [B, R, K, c] keys/values (same rows),
        bias [B, Q, K, H], key_mask [B, R, K].  Chunked over rows R."""
        B, R, Q, _ = x_q.shape
        K = x_kv.shape[2]
        H, d = self.heads, self.head_dim
        bias = bias.permute(0, 3, 1, 2).unsqueeze(1)                 # [B, 1, H, Q, K]
        step = rows_chunk(R, B * H * Q * K, self.chunk_elems)
        outs = []
        for i in range(0, R, step):
            xq, xkv = x_q[:, i:i + step], x_kv[:, i:i + step]
            r = xq.shape[1]
            heads = lambda t, L: t.view(B, r, L, H, d).transpose(2, 3)   # [B, r, H, L, d]
            q = heads(self.linear_q(xq), Q)
            k = heads(self.linear_k(xkv), K)
            v = heads(self.linear_v(xkv), K)
            mb = ((1.0 - key_mask[:, i:i + step]) * MASK_BIAS)[:, :, None, None, :].to(bias.dtype)
            o = attention(q, k, v, bias + mb)                        # [B, r, H, Q, d]
            o = o.transpose(2, 3).reshape(B, r, Q, H * d)
            outs.append(self.linear_o(torch.sigmoid(self.linear_g(xq)) * o))
        return outs[0] if len(outs) == 1 else torch.cat(outs, 1)


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
        z = z + self.tri_mul_out(z, tok_mask)
        z = z + self.tri_mul_in(z, tok_mask)
        z = z + self.tri_att_start(z, tok_mask)
        z = z + self.tri_att_end(z, tok_mask)
        return z + self.pair_transition(z)

    def forward(self, s, z, tok_mask):
        z = self.pair_stack(z, tok_mask)
        if not self.pair_only:
            s = s + self.attention_pair_bias(s, z, tok_mask)
            s = s + self.single_transition(s)
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
