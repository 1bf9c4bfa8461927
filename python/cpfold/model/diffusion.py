# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Diffusion module and EDM-style sampler (AF3 Algorithms 18-23, light).

Runs replicated on every CP rank, on the full (all-gathered) trunk output.
Samples are a leading batch dimension.  Step-independent work (pair
conditioning, per-block pair biases, atom conditioning) is computed once per
sampling call by :meth:`DiffusionModule.prepare`.
"""
from __future__ import annotations

import math
from typing import Dict, List

import torch
import torch.nn as nn

from .atom_attention import AtomAttentionDecoder, AtomAttentionEncoder
from .common import AttentionPairBias, ConditionedTransitionBlock, Transition, linear
from .embedder import RelativePositionEncoding


class FourierEmbedding(nn.Module):
    """cos(2 pi (t w + b)) with fixed random w, b (AF3 Algorithm 22)."""

    def __init__(self, dim: int):
        super().__init__()
        self.register_buffer("w", torch.randn(dim))
        self.register_buffer("b", torch.randn(dim))

    def forward(self, t):
        return torch.cos(2 * math.pi * (t[..., None] * self.w + self.b))


class DiffusionConditioning(nn.Module):
    """AF3 Algorithm 21: pair conditioning (once) and single conditioning (per step)."""

    def __init__(self, cfg):
        super().__init__()
        self.sigma_data = cfg.sigma_data
        self.relpos = RelativePositionEncoding(cfg.c_z, cfg.relpos_r_max, cfg.relpos_s_max)
        self.pair_norm = nn.LayerNorm(2 * cfg.c_z)
        self.pair_linear = linear(2 * cfg.c_z, cfg.c_z, bias=False)
        self.pair_transitions = nn.ModuleList([Transition(cfg.c_z, 2, cfg.chunk_elems) for _ in range(2)])
        c_in = cfg.c_s + cfg.c_s_inputs
        self.single_norm = nn.LayerNorm(c_in)
        self.single_linear = linear(c_in, cfg.c_s, bias=False)
        self.fourier = FourierEmbedding(256)
        self.noise_norm = nn.LayerNorm(256)
        self.noise_linear = linear(256, cfg.c_s, bias=False)
        self.single_transitions = nn.ModuleList([Transition(cfg.c_s, 2) for _ in range(2)])

    def pair_conditioning(self, f, z_trunk):
        rel = self.relpos(f, slice(None), slice(None))
        z = self.pair_linear(self.pair_norm(torch.cat([z_trunk, rel], -1)))
        for t in self.pair_transitions:
            z = z + t(z)
        return z

    def forward(self, t_hat, s_trunk, s_inputs):
        s = self.single_linear(self.single_norm(torch.cat([s_trunk, s_inputs], -1)))
        n = self.fourier(0.25 * torch.log(t_hat / self.sigma_data)).to(s.dtype)   # [K, 256]
        s = s + self.noise_linear(self.noise_norm(n))[:, None, :]
        for t in self.single_transitions:
            s = s + t(s)
        return s


class DiffusionTransformerBlock(nn.Module):
    def __init__(self, c_a: int, c_s: int, c_z: int, heads: int):
        super().__init__()
        self.attention = AttentionPairBias(c_a, c_z, heads, c_cond=c_s, pair_sharded=False)
        self.transition = ConditionedTransitionBlock(c_a, c_s)


class DiffusionTransformer(nn.Module):
    """Token-level transformer with pair bias and adaptive LN (AF3 Algorithm 23)."""

    def __init__(self, cfg):
        super().__init__()
        self.blocks = nn.ModuleList([
            DiffusionTransformerBlock(cfg.c_token_diffusion, cfg.c_s, cfg.c_z, cfg.diffusion_heads)
            for _ in range(cfg.diffusion_blocks)])

    def pair_biases(self, z_cond) -> List[torch.Tensor]:
        return [blk.attention.pair_bias(z_cond) for blk in self.blocks]

    def forward(self, a, s, biases, tok_mask):
        for blk, bias in zip(self.blocks, biases):
            a = a + blk.attention(a, None, tok_mask, cond=s, bias=bias)
            a = a + blk.transition(a, s)
        return a


class DiffusionModule(nn.Module):
    """Denoiser D(x_noisy, t) (AF3 Algorithm 20)."""

    def __init__(self, cfg):
        super().__init__()
        self.sigma_data = cfg.sigma_data
        c_tok = cfg.c_token_diffusion
        self.conditioning = DiffusionConditioning(cfg)
        self.atom_encoder = AtomAttentionEncoder(cfg, c_token=c_tok, trunk_conditioning=True,
                                                 num_blocks=cfg.atom_encoder_blocks)
        self.s_to_a = nn.Sequential(nn.LayerNorm(cfg.c_s), linear(cfg.c_s, c_tok, bias=False))
        self.transformer = DiffusionTransformer(cfg)
        self.norm_a = nn.LayerNorm(c_tok)
        self.atom_decoder = AtomAttentionDecoder(cfg, c_tok, cfg.atom_decoder_blocks)

    def prepare(self, f, s_inputs, s_trunk, z_trunk) -> Dict:
        """Step-independent conditioning; z_trunk is the full pair tensor."""
        z_cond = self.conditioning.pair_conditioning(f, z_trunk)
        return {
            "f": f, "s_inputs": s_inputs, "s_trunk": s_trunk,
            "pair_biases": self.transformer.pair_biases(z_cond),
            "atom_cond": self.atom_encoder.conditioning(f, s_trunk, z_cond),
        }

    def forward(self, x_noisy, t_hat, cache):
        """x_noisy [K, A, 3] (fp32), t_hat [K] -> denoised positions [K, A, 3] (fp32)."""
        f = cache["f"]
        dtype = cache["s_trunk"].dtype
        sd = self.sigma_data
        t = t_hat.to(torch.float32)
        s = self.conditioning(t_hat.to(dtype), cache["s_trunk"], cache["s_inputs"])
        r = (x_noisy / torch.sqrt(t * t + sd * sd)[:, None, None]).to(dtype)
        a, q_skip, c_skip, p_skip = self.atom_encoder(f, cache["atom_cond"], r)
        a = a + self.s_to_a(s)
        a = self.transformer(a, s, cache["pair_biases"], f["token_pad_mask"])
        a = self.norm_a(a)
        r_update = self.atom_decoder(a, q_skip, c_skip, p_skip, f).to(torch.float32)
        c_skip_ = (sd * sd / (sd * sd + t * t))[:, None, None]
        c_out = (sd * t / torch.sqrt(sd * sd + t * t))[:, None, None]
        return c_skip_ * x_noisy + c_out * r_update


def random_rotations(n: int, generator, device) -> torch.Tensor:
    q = torch.randn(n, 4, generator=generator, device=device)
    q = q / q.norm(dim=-1, keepdim=True)
    w, x, y, z = q.unbind(-1)
    return torch.stack([
        1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
        2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
        2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1).view(n, 3, 3)


def centre_random_augmentation(x, atom_mask, generator, s_trans: float = 1.0):
    """AF3 Algorithm 19: centre, random rotation, random translation (per sample)."""
    m = atom_mask[..., None]
    x = x - (x * m).sum(1, keepdim=True) / m.sum(1, keepdim=True).clamp_min(1)
    K = x.shape[0]
    R = random_rotations(K, generator, x.device).to(x.dtype)
    t = s_trans * torch.randn(K, 1, 3, generator=generator, device=x.device, dtype=x.dtype)
    return torch.einsum("kij,kaj->kai", R, x) + t


class EDMSampler:
    """AF3 Algorithm 18 (EDM sampler with noise injection); all defaults from AF3."""

    def __init__(self, sigma_data: float = 16.0, s_max: float = 160.0, s_min: float = 4e-4,
                 p: float = 7.0, gamma_0: float = 0.8, gamma_min: float = 1.0,
                 noise_scale: float = 1.003, step_scale: float = 1.5):
        self.sigma_data, self.s_max, self.s_min, self.p = sigma_data, s_max, s_min, p
        self.gamma_0, self.gamma_min = gamma_0, gamma_min
        self.noise_scale, self.step_scale = noise_scale, step_scale

    def schedule(self, steps: int, device) -> torch.Tensor:
        t = torch.arange(steps + 1, dtype=torch.float64) / max(1, steps)
        c = self.sigma_data * (self.s_max ** (1 / self.p)
                               + t * (self.s_min ** (1 / self.p) - self.s_max ** (1 / self.p))) ** self.p
        return c.to(device=device, dtype=torch.float32)

    def sample(self, denoiser: DiffusionModule, cache, atom_mask, steps: int, samples: int, generator):
        """atom_mask [1, A]; returns coordinates [samples, A, 3] (fp32)."""
        device = atom_mask.device
        A = atom_mask.shape[-1]
        mask = atom_mask.to(torch.float32).expand(samples, A)
        c = self.schedule(steps, device).tolist()      # python floats: no per-step device sync
        x = c[0] * torch.randn(samples, A, 3, generator=generator, device=device)
        for i in range(1, steps + 1):
            x = centre_random_augmentation(x, mask, generator)
            c_prev, c_i = c[i - 1], c[i]
            gamma = self.gamma_0 if c_i > self.gamma_min else 0.0
            t_hat = c_prev * (gamma + 1)
            noise = torch.randn(samples, A, 3, generator=generator, device=device)
            x_noisy = x + self.noise_scale * math.sqrt(max(t_hat ** 2 - c_prev ** 2, 0.0)) * noise
            t_vec = torch.full((samples,), t_hat, device=device)
            x_den = denoiser(x_noisy, t_vec, cache)
            delta = (x_noisy - x_den) / t_hat
            x = x_noisy + self.step_scale * (c_i - t_hat) * delta
        return x * mask[..., None]
