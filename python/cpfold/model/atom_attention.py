# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Light atom-level attention (AF3 Algorithms 5-7, simplified).

Atoms are processed in sequence-local windows: ``atom_window_queries`` (32)
query atoms attend to ``atom_window_keys`` (128) key atoms centred on them.
All atom-level computation is replicated on every CP rank (it is O(A), small
next to the O(N^3) trunk).  Diffusion samples are a leading batch dimension.
"""
from __future__ import annotations

from typing import Dict, NamedTuple, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..config import ATOM_NAME_LEN, NUM_ELEMENTS, NUM_NAME_CHARS
from .common import AdaLN, ConditionedTransitionBlock, attention, linear

ATOM_FEAT_DIM = 3 + 1 + NUM_ELEMENTS + ATOM_NAME_LEN * NUM_NAME_CHARS + 1


class AtomCond(NamedTuple):
    c: torch.Tensor            # [1, A, c_atom] per-atom conditioning
    p: torch.Tensor            # [1, W, Wq, Wk, c_atompair] windowed atom-pair representation


def window_keys(A: int, wq: int, wk: int, device) -> torch.Tensor:
    """[W, Wk] key atom indices per query window (may be out of range; see mask)."""
    W = A // wq
    centre = torch.arange(W, device=device) * wq + wq // 2
    return centre[:, None] - wk // 2 + torch.arange(wk, device=device)[None, :]


class AtomAttention(nn.Module):
    """Windowed atom attention with pair bias and adaptive LN."""

    def __init__(self, c_atom: int, c_ap: int, heads: int):
        super().__init__()
        assert c_atom % heads == 0
        self.heads, self.head_dim = heads, c_atom // heads
        self.ada_ln = AdaLN(c_atom, c_atom)
        self.linear_q = linear(c_atom, c_atom)
        self.linear_k = linear(c_atom, c_atom, bias=False)
        self.linear_v = linear(c_atom, c_atom, bias=False)
        self.linear_g = linear(c_atom, c_atom, bias=False)
        self.linear_o = linear(c_atom, c_atom, bias=False)
        self.pair_norm = nn.LayerNorm(c_ap)
        self.pair_linear = linear(c_ap, heads, bias=False)
        self.linear_cond_gate = linear(c_atom, c_atom)

    def forward(self, q, c, p, f):
        Kb, A, _ = q.shape
        W, wq, wk = p.shape[1], p.shape[2], p.shape[3]
        H, d = self.heads, self.head_dim
        x = self.ada_ln(q, c)
        key_idx = f["atom_window_keys_clamped"]                          # [W, Wk]
        qh = self.linear_q(x).view(Kb, W, wq, H, d).transpose(2, 3)        # [Kb, W, H, Wq, d]
        kh = self.linear_k(x)[:, key_idx].view(Kb, W, wk, H, d).transpose(2, 3)
        vh = self.linear_v(x)[:, key_idx].view(Kb, W, wk, H, d).transpose(2, 3)
        bias = self.pair_linear(self.pair_norm(p)).permute(0, 1, 4, 2, 3)  # [1, W, H, Wq, Wk]
        bias = bias + f["atom_window_key_bias"].to(bias.dtype)             # [1, W, 1, 1, Wk]
        o = attention(qh, kh, vh, bias).transpose(2, 3).reshape(Kb, A, H * d)
        o = self.linear_o(torch.sigmoid(self.linear_g(x)) * o)
        return torch.sigmoid(self.linear_cond_gate(c)) * o


class AtomTransformer(nn.Module):
    def __init__(self, cfg, num_blocks: int):
        super().__init__()
        self.attention = nn.ModuleList(
            [AtomAttention(cfg.c_atom, cfg.c_atompair, cfg.atom_heads) for _ in range(num_blocks)])
        self.transition = nn.ModuleList(
            [ConditionedTransitionBlock(cfg.c_atom, cfg.c_atom) for _ in range(num_blocks)])

    def forward(self, q, c, p, f):
        for att, tr in zip(self.attention, self.transition):
            q = q + att(q, c, p, f)
            q = q + tr(q, c)
        return q


class AtomAttentionEncoder(nn.Module):
    """Atom features (+ optional noisy positions and trunk conditioning) -> tokens."""

    def __init__(self, cfg, c_token: int, trunk_conditioning: bool, num_blocks: int):
        super().__init__()
        ca, cp = cfg.c_atom, cfg.c_atompair
        self.trunk_conditioning = trunk_conditioning
        self.linear_feats = linear(ATOM_FEAT_DIM, ca, bias=False)
        self.linear_pair_d = linear(3, cp, bias=False)
        self.linear_pair_inv = linear(1, cp, bias=False)
        self.linear_pair_v = linear(1, cp, bias=False)
        if trunk_conditioning:
            self.s_proj = nn.Sequential(nn.LayerNorm(cfg.c_s), linear(cfg.c_s, ca, bias=False))
            self.z_proj = nn.Sequential(nn.LayerNorm(cfg.c_z), linear(cfg.c_z, cp, bias=False))
            self.linear_r = linear(3, ca, bias=False)
        self.linear_c_row = linear(ca, cp, bias=False)
        self.linear_c_col = linear(ca, cp, bias=False)
        self.pair_mlp = nn.Sequential(nn.ReLU(), linear(cp, cp, bias=False), nn.ReLU(),
                                      linear(cp, cp, bias=False), nn.ReLU(), linear(cp, cp, bias=False))
        self.transformer = AtomTransformer(cfg, num_blocks)
        self.linear_token = linear(ca, c_token, bias=False)

    def conditioning(self, f: Dict[str, torch.Tensor], s_trunk=None, z_trunk=None) -> AtomCond:
        """Step-independent atom conditioning (computed once per diffusion call)."""
        feats = torch.cat([f["ref_pos"], f["ref_charge"][..., None], f["ref_element"],
                           f["ref_atom_name_chars"].flatten(-2), f["atom_pad_mask"][..., None]], -1)
        c = self.linear_feats(feats)                                        # [1, A, ca]
        idx = f["atom_window_keys_clamped"]                                 # [W, Wk]
        W, wk = idx.shape
        wq = c.shape[1] // W
        pos_q = f["ref_pos"].view(1, W, wq, 3)
        pos_k = f["ref_pos"][:, idx]                                        # [1, W, Wk, 3]
        d = pos_q[:, :, :, None, :] - pos_k[:, :, None, :, :]               # [1, W, Wq, Wk, 3]
        tok = f["atom_to_token"]
        tok_q = tok.view(1, W, wq)
        tok_k = tok[:, idx]
        v = ((tok_q[..., :, None] == tok_k[..., None, :]) & (f["atom_window_key_valid"][:, :, None, :] > 0))
        v = v[..., None].to(c.dtype)                                         # same token, valid key
        p = (self.linear_pair_d(d) + self.linear_pair_inv(1.0 / (1.0 + (d * d).sum(-1, keepdim=True)))
             + self.linear_pair_v(v)) * v
        if self.trunk_conditioning:
            c = c + self.s_proj(s_trunk)[:, tok[0]]
            zp = self.z_proj(z_trunk)                                       # [1, N, N, cp] (reduce first)
            p = p + zp[:, tok_q[0][:, :, None], tok_k[0][:, None, :]]           # [1, W, Wq, Wk, cp]
        c_k = c[:, idx]                                                     # [1, W, Wk, ca]
        p = p + self.linear_c_row(F.relu(c)).view(1, W, wq, 1, -1) + self.linear_c_col(F.relu(c_k))[:, :, None]
        p = p + self.pair_mlp(p)
        return AtomCond(c, p)

    def forward(self, f, cond: AtomCond, r_noisy: Optional[torch.Tensor] = None):
        """Returns (token activations [Kb, N, c_token], q_skip, c_skip, p_skip)."""
        c, p = cond
        q = c if r_noisy is None else c + self.linear_r(r_noisy)
        q = self.transformer(q, c, p, f)
        x = F.relu(self.linear_token(q)) * f["atom_pad_mask"][..., None]
        # deterministic mean over each token's atoms (dense [N, M] index, no atomics)
        ta, tm = f["token_atoms"], f["token_atoms_mask"]                    # [N, M]
        a = (x[:, ta] * tm[None, :, :, None]).sum(2) / tm.sum(-1).clamp_min(1)[None, :, None]
        return a, q, c, p


class AtomAttentionDecoder(nn.Module):
    def __init__(self, cfg, c_token: int, num_blocks: int):
        super().__init__()
        self.linear_a = linear(c_token, cfg.c_atom, bias=False)
        self.transformer = AtomTransformer(cfg, num_blocks)
        self.norm = nn.LayerNorm(cfg.c_atom)
        self.linear_out = linear(cfg.c_atom, 3, bias=False)

    def forward(self, a, q_skip, c_skip, p_skip, f):
        q = q_skip + self.linear_a(a)[:, f["atom_to_token"][0]]
        q = self.transformer(q, c_skip, p_skip, f)
        return self.linear_out(self.norm(q))
