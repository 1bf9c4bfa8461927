# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""The toy model: TokenEncoder (token features, one-hot residue types, masks) and PairBlock (pair
features, mixed with the tokens), then atoms pooled onto tokens through atom_to_token. Its
`infer` method runs `recycles` passes, each ending in an all-reduce when a process group is up
(a stand-in for CP communication), so that control counts decide the collectives."""
import torch
from torch import nn


class TokenEncoder(nn.Module):
    def __init__(self, c_tok=16, n_types=21, c=32):
        super().__init__()
        self.proj = nn.Linear(c_tok + n_types, c)
        self.norm = nn.LayerNorm(c)

    def forward(self, token_feat, restype, token_mask):
        x = self.proj(torch.cat([token_feat, restype.to(token_feat.dtype)], -1))
        return self.norm(x) * token_mask.unsqueeze(-1).to(x.dtype)


class PairBlock(nn.Module):
    def __init__(self, c_pair=8, c=32):
        super().__init__()
        self.pair_in = nn.Linear(c_pair, c)
        self.out = nn.Linear(c, c)

    def forward(self, s, pair_feat, pair_mask):
        z = self.pair_in(pair_feat) + s.unsqueeze(0) + s.unsqueeze(1)
        z = z * pair_mask.unsqueeze(-1).to(z.dtype)
        return self.out(torch.relu(z)).mean(1)


class ToyFold(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = TokenEncoder()
        self.pair = PairBlock()

    def forward(self, batch):
        s = self.encoder(batch["token_feat"], batch["restype"], batch["token_mask"])
        s = s + self.pair(s, batch["pair_feat"], batch["pair_mask"])
        atoms = s.index_select(0, batch["atom_to_token"])  # atom_to_token gathers token states
        return s, atoms

    def infer(self, batch, recycles=2):
        import torch.distributed as dist
        s = None
        for _ in range(recycles):
            s, atoms = self(batch)
            if dist.is_available() and dist.is_initialized():
                dist.all_reduce(s)  # one collective per recycle
        return s


class DivergentToyFold(ToyFold):
    """Each rank takes its own recycle count: rank r runs 1 + r passes, so the ranks issue
    different numbers of all-reduces (what a count drawn per rank without a broadcast does)."""

    def infer(self, batch, recycles=2):
        import torch.distributed as dist
        r = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
        return super().infer(batch, recycles=1 + r)
