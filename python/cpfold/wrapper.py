# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Transparent context-parallel wrapper: full features in, full outputs out.

Layers (imports point down only): ``cpfold.cp`` (grid, pair layout, distributed
TriMul product, communication) <- ``cpfold.model`` (the network, which asks
``layout_of(module)``) <- this wrapper (attaches a layout to a model, pads,
broadcasts the control flow, syncs gradients)."""
from __future__ import annotations

from typing import Dict, Optional

import torch
import torch.distributed as dist
import torch.nn as nn

from .cp import comm
from .cp.layout import CPGrid
from .features import pad_tokens
from .model.common import pair_sharded_parameters, set_context_parallel

# output name -> token axes to trim after padding
_TOKEN_AXES = {"s_trunk": (1,), "z_trunk": (1, 2), "pae_logits": (1, 2), "pde_logits": (1, 2)}


class CPContext:
    """What a module needs to run context-parallel: the pair layout."""

    def __init__(self, grid: CPGrid):
        self.grid = grid
        self.layout = grid.layout


class ContextParallel(nn.Module):
    """Wrap a CPFoldModel for context parallelism on ``grid``.

    * the token axis is padded (masked) to a multiple of the grid sizes and the
      outputs are trimmed back, so callers never see the sharding;
    * control-flow counts (recycles, diffusion steps, samples) are broadcast
      from rank 0 (``comm.broadcast_ints``: the kit's ``broadcast_counts``, one
      int64 broadcast per call) so that every rank issues the same collectives
      in the same order (``broadcast_control=False`` exists only to demonstrate
      the hang);
    * after backward, :meth:`sync_grads` sums the partial gradients of the
      parameters that act on pair blocks.
    """

    def __init__(self, model: nn.Module, grid: CPGrid, broadcast_control: bool = True):
        super().__init__()
        self.model = model
        self.grid = grid
        self.ctx = CPContext(grid)
        self.broadcast_control = broadcast_control
        set_context_parallel(model, self.ctx)

    def control(self, *counts: int):
        if not self.broadcast_control:
            return [int(c) for c in counts]
        return comm.broadcast_ints(counts)

    def forward(self, feats: Dict[str, torch.Tensor], mode: str = "e2e", recycles: int = 1,
                diffusion_steps: int = 10, samples: int = 1,
                generator: Optional[torch.Generator] = None):
        recycles, diffusion_steps, samples = self.control(recycles, diffusion_steps, samples)
        n = feats["res_type"].shape[0]
        fp = pad_tokens(feats, self.grid.padded_tokens(n))
        out = self.model(fp, mode=mode, recycles=recycles, diffusion_steps=diffusion_steps,
                         samples=samples, generator=generator)
        return unpad_outputs(out, n)

    def training_loss(self, feats, recycles: int = 0, samples: int = 2,
                      generator: Optional[torch.Generator] = None):
        recycles, samples = self.control(recycles, samples)
        n = feats["res_type"].shape[0]
        fp = pad_tokens(feats, self.grid.padded_tokens(n))
        return self.model.training_loss(fp, recycles=recycles, samples=samples, generator=generator)

    @torch.no_grad()
    def sync_grads(self) -> None:
        """Sum partial gradients of pair-sharded parameters over all ranks (one
        coalesced all-reduce per dtype)."""
        if not dist.is_initialized() or dist.get_world_size() == 1:
            return
        by_dtype: Dict[torch.dtype, list] = {}
        for p in pair_sharded_parameters(self.model):
            if p.grad is not None:
                by_dtype.setdefault(p.grad.dtype, []).append(p.grad)
        for grads in by_dtype.values():
            flat = torch.cat([g.reshape(-1) for g in grads])
            comm.all_reduce_sum(flat, "sync_grads")
            off = 0
            for g in grads:
                g.copy_(flat[off:off + g.numel()].view_as(g))
                off += g.numel()


def unpad_outputs(out: Dict[str, torch.Tensor], n: int) -> Dict[str, torch.Tensor]:
    res = {}
    for k, v in out.items():
        for ax in _TOKEN_AXES.get(k, ()):
            v = v.narrow(ax, 0, n)
        res[k] = v
    return res
