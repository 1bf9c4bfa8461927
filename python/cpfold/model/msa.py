# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""MSA module (AF3 Algorithms 8-10, small)."""
from __future__ import annotations

import torch
import torch.nn as nn

from ..config import NUM_RES_TYPES
from .common import (MASK_BIAS, PairBiasProjection, Transition, layout_of, linear,
                     mark_pair_sharded, rows_chunk)
from .pairformer import PairformerBlock


class OuterProductMean(nn.Module):
    """z_ij += Linear(mean_s a_si (x) b_sj).  The MSA is replicated; each CP rank
    slices a to its block rows and b to its block columns (no communication)."""

    def __init__(self, c_m: int, c_z: int, c_hidden: int, chunk_elems: int):
        super().__init__()
        self.norm = nn.LayerNorm(c_m)
        self.linear_a = linear(c_m, c_hidden, bias=False)
        self.linear_b = linear(c_m, c_hidden, bias=False)
        self.linear_out = mark_pair_sharded(linear(c_hidden * c_hidden, c_z))
        self.chunk_elems = chunk_elems

    def forward(self, m, msa_mask):
        lay = layout_of(self)
        tag = type(self).__name__
        x = self.norm(m)
        mk = msa_mask[..., None].to(x.dtype)
        a = lay.slice_rows(self.linear_a(x) * mk, 2, tag)            # [B, S, n_r, h]
        b = lay.slice_cols(self.linear_b(x) * mk, 2, tag)            # [B, S, n_c, h]
        N = msa_mask.shape[-1]
        m_r, m_c = msa_mask[:, :, lay.rows(N)], msa_mask[:, :, lay.cols(N)]
        norm = torch.einsum("bsi,bsj->bij", m_r, m_c)[..., None] + 1e-3     # [B, n_r, n_c, 1]
        B, S, n_r, h = a.shape
        n_c = b.shape[2]
        step = rows_chunk(n_r, B * n_c * h * h, self.chunk_elems)
        outs = []
        for i in range(0, n_r, step):
            o = torch.einsum("bsic,bsjd->bijcd", a[:, :, i:i + step], b)
            o = o.reshape(B, o.shape[1], n_c, h * h) / norm[:, i:i + step]
            outs.append(self.linear_out(o))
        return outs[0] if len(outs) == 1 else torch.cat(outs, 1)


class MSAPairWeightedAveraging(nn.Module):
    """m_si += Linear(g * sum_j softmax_j(b_ij) v_sj); the pair bias block is
    all-gathered (one AllGather), the averaging is replicated."""

    def __init__(self, c_m: int, c_z: int, heads: int, c_hidden: int):
        super().__init__()
        self.heads, self.c_hidden = heads, c_hidden
        self.norm_m = nn.LayerNorm(c_m)
        self.linear_v = linear(c_m, heads * c_hidden, bias=False)
        self.linear_g = linear(c_m, heads * c_hidden, bias=False)
        self.linear_o = linear(heads * c_hidden, c_m, bias=False)
        self.pair_bias = mark_pair_sharded(PairBiasProjection(c_z, heads))

    def forward(self, m, z, tok_mask):
        lay = layout_of(self)
        b = lay.gather_full(self.pair_bias(z), tag=type(self).__name__)        # [B, N, N, H]
        b = b + ((1.0 - tok_mask) * MASK_BIAS)[:, None, :, None].to(b.dtype)
        w = b.float().softmax(dim=2).to(m.dtype)
        x = self.norm_m(m)
        B, S, N, _ = m.shape
        v = self.linear_v(x).view(B, S, N, self.heads, self.c_hidden)
        o = torch.einsum("bijh,bsjhc->bsihc", w, v).reshape(B, S, N, -1)
        return self.linear_o(torch.sigmoid(self.linear_g(x)) * o)


class MSABlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.outer_product_mean = OuterProductMean(cfg.c_m, cfg.c_z, cfg.c_opm, cfg.chunk_elems)
        self.pair_weighted_averaging = MSAPairWeightedAveraging(cfg.c_m, cfg.c_z, cfg.msa_heads, cfg.msa_head_dim)
        self.msa_transition = Transition(cfg.c_m, cfg.transition_n)
        self.pair_block = PairformerBlock(cfg, pair_only=True)

    def forward(self, m, z, msa_mask, tok_mask):
        z = z + self.outer_product_mean(m, msa_mask)
        m = m + self.pair_weighted_averaging(m, z, tok_mask)
        m = m + self.msa_transition(m)
        z = self.pair_block.pair_stack(z, tok_mask)
        return m, z


class MSAModule(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.linear_m = linear(NUM_RES_TYPES + 2, cfg.c_m, bias=False)
        self.linear_s = linear(cfg.c_s_inputs, cfg.c_m, bias=False)
        self.blocks = nn.ModuleList([MSABlock(cfg) for _ in range(cfg.msa_blocks)])

    def forward(self, f, z, s_inputs, tok_mask):
        feat = torch.cat([f["msa"], f["has_deletion"][..., None], f["deletion_value"][..., None]], -1)
        m = self.linear_m(feat) + self.linear_s(s_inputs)[:, None]
        for block in self.blocks:
            m, z = block(m, z, f["msa_mask"], tok_mask)
        return z
