# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Input embedding (AF3 Algorithms 1-3, simplified)."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .atom_attention import AtomAttentionEncoder
from .common import layout_of, linear, mark_pair_sharded


class RelativePositionEncoding(nn.Module):
    """AF3 Algorithm 3 for the pair block (rows, cols).

    Features: one-hot relative residue index (same chain), one-hot relative
    token index (same residue), same-entity flag, one-hot relative chain copy
    (same entity).  Computed as a bias-free Linear on the concatenated
    one-hots, evaluated by indexing the weight (no one-hot tensor in memory).
    """

    def __init__(self, c_z: int, r_max: int, s_max: int):
        super().__init__()
        self.r_max, self.s_max = r_max, s_max
        self.n_rel = 2 * r_max + 2
        self.n_chain = 2 * s_max + 2
        self.linear = linear(2 * self.n_rel + 1 + self.n_chain, c_z, bias=False)

    def forward(self, f, rows: slice, cols: slice):
        r, c = (lambda k: f[k][:, rows, None]), (lambda k: f[k][:, None, cols])
        same_chain = r("asym_id") == c("asym_id")
        same_res = (r("residue_index") == c("residue_index")) & same_chain
        same_entity = r("entity_id") == c("entity_id")
        R = self.r_max
        d_res = torch.where(same_chain, (r("residue_index") - c("residue_index") + R).clamp(0, 2 * R),
                            torch.full_like(same_chain, 2 * R + 1, dtype=torch.long))
        d_tok = torch.where(same_res, (r("token_index") - c("token_index") + R).clamp(0, 2 * R),
                            torch.full_like(same_chain, 2 * R + 1, dtype=torch.long))
        S = self.s_max
        d_chain = torch.where(same_entity, (r("sym_id") - c("sym_id") + S).clamp(0, 2 * S),
                              torch.full_like(same_chain, 2 * S + 1, dtype=torch.long))
        w = self.linear.weight.t()                                   # [features, c_z]
        n = self.n_rel
        return (F.embedding(d_res, w[:n]) + F.embedding(d_tok, w[n:2 * n])
                + same_entity[..., None].to(w.dtype) * w[2 * n]
                + F.embedding(d_chain, w[2 * n + 1:]))


class InputEmbedder(nn.Module):
    """Atom encoder -> s_inputs; s_init; z_init = outer sum + relative position.

    Under CP, z_init is produced directly as this rank's block: the outer-sum
    projections run on the replicated tokens and are sliced (their gradient is
    all-reduced); the relative-position term is computed for the block only.
    """

    def __init__(self, cfg):
        super().__init__()
        self.atom_encoder = AtomAttentionEncoder(cfg, c_token=cfg.c_s, trunk_conditioning=False,
                                                 num_blocks=cfg.atom_encoder_blocks)
        self.linear_s = linear(cfg.c_s_inputs, cfg.c_s, bias=False)
        self.linear_zi = linear(cfg.c_s_inputs, cfg.c_z, bias=False)
        self.linear_zj = linear(cfg.c_s_inputs, cfg.c_z, bias=False)
        self.relpos = mark_pair_sharded(RelativePositionEncoding(cfg.c_z, cfg.relpos_r_max, cfg.relpos_s_max))

    def forward(self, f):
        a, _, _, _ = self.atom_encoder(f, self.atom_encoder.conditioning(f))
        s_inputs = torch.cat([a, f["res_type"], f["profile"], f["deletion_mean"][..., None]], -1)
        s_init = self.linear_s(s_inputs)
        lay = layout_of(self)
        N = s_inputs.shape[1]
        tag = type(self).__name__
        zi = lay.slice_rows(self.linear_zi(s_inputs), 1, tag)
        zj = lay.slice_cols(self.linear_zj(s_inputs), 1, tag)
        z = zi[:, :, None] + zj[:, None, :] + self.relpos(f, lay.rows(N), lay.cols(N))
        return s_inputs, s_init, z
