# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Confidence head (AF3 Algorithm 31, simplified): a few Pairformer blocks on
the trunk output + predicted-structure distances, then pLDDT/PAE/PDE logits."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .common import layout_of, linear, mark_pair_sharded
from .pairformer import PairformerModule


class ConfidenceModule(nn.Module):
    """Runs once per diffusion sample.  Under CP the Pairformer blocks are
    context-parallel on this rank's z block; their output is all-gathered once
    per sample (boundary AllGather) for the PAE/PDE heads."""

    def __init__(self, cfg):
        super().__init__()
        self.norm_z = mark_pair_sharded(nn.LayerNorm(cfg.c_z))
        self.linear_si = linear(cfg.c_s_inputs, cfg.c_z, bias=False)
        self.linear_sj = linear(cfg.c_s_inputs, cfg.c_z, bias=False)
        self.norm_s = nn.LayerNorm(cfg.c_s)
        self.linear_s = linear(cfg.c_s_inputs, cfg.c_s, bias=False)
        self.n_bins = cfg.confidence_distance_bins
        self.register_buffer("dist_edges", torch.linspace(3.375, 21.375, self.n_bins - 1))
        self.linear_dist = mark_pair_sharded(linear(self.n_bins, cfg.c_z, bias=False))
        self.pairformer = PairformerModule(cfg, cfg.confidence_blocks)
        self.pae_head = nn.Sequential(nn.LayerNorm(cfg.c_z), linear(cfg.c_z, cfg.pae_bins))
        self.pde_head = nn.Sequential(nn.LayerNorm(cfg.c_z), linear(cfg.c_z, cfg.pde_bins))
        self.plddt_head = nn.Sequential(nn.LayerNorm(cfg.c_s), linear(cfg.c_s, cfg.plddt_bins))

    def forward(self, f, s_inputs, s_trunk, z_trunk, coords):
        """z_trunk: this rank's block; coords [K, A, 3].  Returns logits dict with
        plddt [K, A, bins], pae / pde [K, N, N, bins]."""
        lay = layout_of(self)
        tag = type(self).__name__
        N = s_inputs.shape[1]
        rows, cols = lay.rows(N), lay.cols(N)
        tok_mask = f["token_pad_mask"]
        z0 = (self.norm_z(z_trunk)
              + lay.slice_rows(self.linear_si(s_inputs), 1, tag)[:, :, None]
              + lay.slice_cols(self.linear_sj(s_inputs), 1, tag)[:, None, :])
        s0 = self.norm_s(s_trunk) + self.linear_s(s_inputs)
        rep = coords.detach()[:, f["token_rep_atom"][0]]                   # [K, N, 3]
        w = self.linear_dist.weight.t()
        out = {"plddt_logits": [], "pae_logits": [], "pde_logits": []}
        for k in range(coords.shape[0]):
            x = rep[k:k + 1].float()
            d = torch.cdist(x[:, rows], x[:, cols])                          # [1, n_r, n_c]
            z = z0 + F.embedding(torch.bucketize(d, self.dist_edges.float()), w)
            s, z = self.pairformer(s0, z, tok_mask)
            z_full = lay.gather_full(z, tag)
            out["pae_logits"].append(self.pae_head(z_full))
            out["pde_logits"].append(self.pde_head(z_full + z_full.transpose(1, 2)))
            out["plddt_logits"].append(self.plddt_head(s)[:, f["atom_to_token"][0]])
        return {k: torch.cat(v, 0) for k, v in out.items()}


class DistogramHead(nn.Module):
    """Symmetric distogram logits from the full trunk pair tensor (training loss)."""

    def __init__(self, cfg):
        super().__init__()
        self.linear = linear(cfg.c_z, cfg.distogram_bins)
        self.register_buffer("edges", torch.linspace(2.3125, 21.6875, cfg.distogram_bins - 1))

    def forward(self, z_full):
        return self.linear(z_full + z_full.transpose(1, 2))
