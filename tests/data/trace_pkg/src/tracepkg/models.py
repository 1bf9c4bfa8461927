# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""torch.nn.Module subclasses, for --discover."""
import torch
import torch.nn as nn


class TriMulBlock(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.lin = nn.Linear(c, c)

    def forward(self, z):
        return z + self.lin(z)


class PairformerStack(nn.Module):
    def __init__(self, c=4, n=2):
        super().__init__()
        self.blocks = nn.ModuleList(TriMulBlock(c) for _ in range(n))

    def forward(self, z):
        for blk in self.blocks:
            z = blk(z)
        return z


class TrunkBase(nn.Module):
    def forward(self, z):
        return torch.relu(z)


class DiffusionTrunk(TrunkBase):
    """Inherits forward: listed under its own name (nsys names ranges after the subclass)."""


class TrunkWithoutForward(nn.Module):
    """Matches the pattern but has no forward of its own or inherited: left out."""


class TrunkConfig:
    """Matches the pattern but is not an nn.Module: left out."""

    depth = 2


class Embedding(nn.Module):
    """A Module that does not match the pattern."""

    def forward(self, x):
        return x
