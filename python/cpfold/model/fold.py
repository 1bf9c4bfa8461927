# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""CPFoldModel: embedder -> recycled MSA + Pairformer trunk -> diffusion ->
confidence, plus a synthetic training loss.

Runs as-is on one process; wrapped by ``cpfold.wrapper.ContextParallel`` the pair
path is sharded across ranks (the modules find the CP context themselves).
Boundaries where the sharded trunk output is all-gathered are marked
"CP boundary".
"""
from __future__ import annotations

from typing import Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..config import ModelConfig
from ..features import SPECS
from .atom_attention import window_keys
from .common import glorot_init_, layout_of, linear, mark_pair_sharded
from .confidence import ConfidenceModule, DistogramHead
from .diffusion import DiffusionModule, EDMSampler, centre_random_augmentation
from .embedder import InputEmbedder
from .msa import MSAModule
from .pairformer import PairformerModule


class CPFoldModel(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.input_embedder = InputEmbedder(cfg)
        self.recycle_s = nn.Sequential(nn.LayerNorm(cfg.c_s), linear(cfg.c_s, cfg.c_s, bias=False))
        self.recycle_z = mark_pair_sharded(
            nn.Sequential(nn.LayerNorm(cfg.c_z), linear(cfg.c_z, cfg.c_z, bias=False)))
        self.msa_module = MSAModule(cfg)
        self.pairformer = PairformerModule(cfg, cfg.pairformer_blocks)
        self.distogram_head = DistogramHead(cfg)
        self.diffusion_module = DiffusionModule(cfg)
        self.confidence_module = ConfidenceModule(cfg)
        self.sampler = EDMSampler(cfg.sigma_data)
        glorot_init_(self, cfg.init_gain)

    # ------------------------------------------------------------------ inputs
    @property
    def dtype(self):
        return next(self.parameters()).dtype

    def prepare_features(self, feats: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        """Unbatched contract features -> batched (B = 1) model inputs in the
        model dtype, atoms padded to whole windows, plus derived indices."""
        cfg = self.cfg
        dtype = self.dtype
        A0 = feats["ref_pos"].shape[0]
        wq = cfg.atom_window_queries
        A = (A0 + wq - 1) // wq * wq
        f = {}
        for k, v in feats.items():
            spec = SPECS.get(k)
            if spec is not None and "A" in spec.shape and A != A0:
                pad = [0, 0] * (v.dim() - 1) + [0, A - A0]
                v = F.pad(v, pad)
            if v.is_floating_point() and k != "atom_coords":
                v = v.to(dtype)
            f[k] = v[None]
        N = f["res_type"].shape[1]
        dev = f["ref_pos"].device
        a2t = f["atom_to_token"][0]
        am = f["atom_pad_mask"][0] > 0
        counts = torch.bincount(a2t[am], minlength=N)
        first = torch.cumsum(counts, 0) - counts
        M = max(1, int(counts.max()))
        ar = torch.arange(M, device=dev)
        f["token_atoms"] = (first[:, None] + ar).clamp(max=A - 1)            # [N, M]
        f["token_atoms_mask"] = (ar[None, :] < counts[:, None]).to(dtype)    # [N, M]
        f["token_rep_atom"] = first.clamp(max=A - 1)[None]                   # [1, N]
        keys = window_keys(A, wq, cfg.atom_window_keys, dev)                 # [W, Wk]
        inside = (keys >= 0) & (keys < A)
        kc = keys.clamp(0, A - 1)
        valid = inside & am[kc]
        f["atom_window_keys_clamped"] = kc
        f["atom_window_key_valid"] = valid[None].to(dtype)                   # [1, W, Wk]
        f["atom_window_key_bias"] = ((~valid).to(dtype) * -1e9)[None, :, None, None, :]
        f["n_atoms_input"] = A0
        return f

    # ------------------------------------------------------------------ trunk
    def trunk(self, f, recycles: int, grad_last_cycle_only: bool = True):
        """Returns (s_inputs, s [B, N, c_s] replicated, z = this rank's pair block)."""
        tok_mask = f["token_pad_mask"]
        s_inputs, s_init, z_init = self.input_embedder(f)
        s = torch.zeros_like(s_init)
        z = torch.zeros_like(z_init)
        for cycle in range(recycles + 1):
            last = cycle == recycles
            with torch.set_grad_enabled(torch.is_grad_enabled() and (last or not grad_last_cycle_only)):
                z = z_init + self.recycle_z(z)
                z = self.msa_module(f, z, s_inputs, tok_mask)
                s = s_init + self.recycle_s(s)
                s, z = self.pairformer(s, z, tok_mask)
            if not last and grad_last_cycle_only:
                s, z = s.detach(), z.detach()
        return s_inputs, s, z

    # ------------------------------------------------------------------ inference
    def forward(self, feats, mode: str = "e2e", recycles: int = 1, diffusion_steps: int = 10,
                samples: int = 1, generator: Optional[torch.Generator] = None):
        """mode 'trunk': s/z trunk outputs; 'e2e': + sampled coordinates and
        confidence logits.  All outputs are full (unsharded) tensors."""
        if mode not in ("trunk", "e2e"):
            raise ValueError(f"mode must be 'trunk' or 'e2e', got {mode!r}")
        f = self.prepare_features(feats)
        s_inputs, s, z = self.trunk(f, recycles)
        lay = layout_of(self)
        z_full = lay.gather_full(z, tag="trunk_output")          # CP boundary
        out = {"s_trunk": s, "z_trunk": z_full}
        if mode == "trunk":
            return out
        cache = self.diffusion_module.prepare(f, s_inputs, s, z_full)
        coords = self.sampler.sample(self.diffusion_module, cache, f["atom_pad_mask"],
                                     diffusion_steps, samples, generator)
        conf = self.confidence_module(f, s_inputs, s, z, coords)
        A0 = f["n_atoms_input"]
        out["coords"] = coords[:, :A0]
        out["plddt_logits"] = conf["plddt_logits"][:, :A0]
        out["pae_logits"] = conf["pae_logits"]
        out["pde_logits"] = conf["pde_logits"]
        return out

    # ------------------------------------------------------------------ training
    def training_loss(self, feats, recycles: int = 0, samples: int = 2,
                      generator: Optional[torch.Generator] = None):
        """Synthetic AF3-style loss: distogram cross-entropy on the trunk output
        + weighted denoising MSE for ``samples`` noise levels.  Gradients flow
        through the last recycle only."""
        if "atom_coords" not in feats:
            raise ValueError("training needs the 'atom_coords' feature")
        f = self.prepare_features(feats)
        s_inputs, s, z = self.trunk(f, recycles)
        z_full = layout_of(self).gather_full(z, tag="trunk_output")        # CP boundary
        tok_mask = f["token_pad_mask"].float()
        x_true = f["atom_coords"].float()                                   # [1, A, 3]
        rep = x_true[:, f["token_rep_atom"][0]]
        dist = torch.cdist(rep, rep)
        target = torch.bucketize(dist, self.distogram_head.edges.float())
        logits = self.distogram_head(z_full).float()
        pm = tok_mask[:, :, None] * tok_mask[:, None, :]
        ce = F.cross_entropy(logits.permute(0, 3, 1, 2), target, reduction="none")
        dist_loss = (ce * pm).sum() / pm.sum()

        sd = self.cfg.sigma_data
        am = f["atom_pad_mask"].float()
        mask = am.expand(samples, -1)
        x0 = centre_random_augmentation(x_true.expand(samples, -1, -1), mask, generator)
        sigma = sd * torch.exp(-1.2 + 1.5 * torch.randn(samples, generator=generator, device=x0.device))
        x_noisy = x0 + sigma[:, None, None] * torch.randn(x0.shape, generator=generator, device=x0.device)
        cache = self.diffusion_module.prepare(f, s_inputs, s, z_full)
        x_den = self.diffusion_module(x_noisy, sigma, cache)
        err = ((x_den - x0) ** 2).sum(-1) * mask
        mse = err.sum(-1) / (3 * mask.sum(-1))
        weight = (sigma ** 2 + sd ** 2) / (sigma * sd) ** 2
        diff_loss = (weight * mse).mean()
        loss = dist_loss + diff_loss
        return loss, {"distogram_loss": dist_loss.detach(), "diffusion_loss": diff_loss.detach()}
