# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Model classes of the test job. They live in an importable module (not the entry module)
so that nsys's --python-functions-trace can annotate them."""
import torch
import torch.distributed as dist
import torch.nn as nn


def _world():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


class RingShift:
    """Batched isend/irecv of one block to the next rank of a 1-D ring."""

    @staticmethod
    def start(cur):
        rank, world = _world()
        nxt = torch.empty_like(cur)
        ops = [dist.P2POp(dist.isend, cur, (rank + 1) % world),
               dist.P2POp(dist.irecv, nxt, (rank - 1 + world) % world)]
        return nxt, dist.batch_isend_irecv(ops)


class TriMulRing(nn.Module):
    """Triangle-multiplication-like update, z_ij += sum_k a_ik b_kj per channel, with the pair
    tensor row-sharded over ranks and the b blocks passed around a ring (Cannon on a 1 x q grid)."""

    def __init__(self, c):
        super().__init__()
        self.norm = nn.LayerNorm(c)
        self.proj_a = nn.Linear(c, c)
        self.proj_b = nn.Linear(c, c)
        self.gate = nn.Linear(c, c)
        self.out = nn.Linear(c, c)

    def forward(self, z):  # z: [n_local, N, c], rows of this rank
        rank, world = _world()
        nl = z.shape[0]
        x = self.norm(z)
        a = self.proj_a(x).permute(2, 0, 1)            # [c, nl, N]
        b = self.proj_b(x).permute(2, 0, 1).contiguous()  # [c, nl, N]: rows k of this rank
        acc = torch.zeros(a.shape[0], nl, z.shape[1], device=z.device, dtype=z.dtype)
        cur = b.detach() if world > 1 else b
        for step in range(world):
            reqs = None
            if step < world - 1:
                nxt, reqs = RingShift.start(cur)           # overlaps the product below
            src = (rank - step + world) % world            # owner of the rows in cur
            acc = acc + torch.bmm(a[:, :, src * nl:(src + 1) * nl], cur)
            if reqs is not None:
                for r in reqs:
                    r.wait()
                cur = nxt
        upd = acc.permute(1, 2, 0)
        return z + torch.sigmoid(self.gate(x)) * self.out(upd)


class PairTransition(nn.Module):
    def __init__(self, c, mult=2):
        super().__init__()
        self.norm = nn.LayerNorm(c)
        self.up = nn.Linear(c, mult * c)
        self.down = nn.Linear(mult * c, c)

    def forward(self, z):
        return z + self.down(torch.relu(self.up(self.norm(z))))


class PairformerBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.trimul = TriMulRing(c)
        self.transition = PairTransition(c)

    def forward(self, z):
        return self.transition(self.trimul(z))


class Trunk(nn.Module):
    def __init__(self, c, blocks):
        super().__init__()
        self.blocks = nn.ModuleList(PairformerBlock(c) for _ in range(blocks))

    def forward(self, z):
        for blk in self.blocks:
            z = blk(z)
        return z


class GatherRows(torch.autograd.Function):
    """All-gather of the row blocks at the CP boundary; its backward is a reduce-scatter.
    A custom autograd.Function, so --pytorch=autograd-nvtx names it even under no_grad."""

    @staticmethod
    def forward(ctx, local):
        rank, world = _world()
        if world == 1:
            return local
        out = torch.empty((world * local.shape[0],) + tuple(local.shape[1:]),
                          device=local.device, dtype=local.dtype)
        dist.all_gather_into_tensor(out, local.contiguous())
        return out

    @staticmethod
    def backward(ctx, grad):
        rank, world = _world()
        if world == 1:
            return grad
        out = torch.empty((grad.shape[0] // world,) + tuple(grad.shape[1:]),
                          device=grad.device, dtype=grad.dtype)
        dist.reduce_scatter_tensor(out, grad.contiguous())
        return out


class ConfidenceHead(nn.Module):
    """Serial part: every rank computes it on the gathered tensor (no communication)."""

    def __init__(self, c, bins=16):
        super().__init__()
        self.norm = nn.LayerNorm(c)
        self.proj = nn.Linear(c, bins)

    def forward(self, z_full):
        return torch.softmax(self.proj(self.norm(z_full)), dim=-1)


class TinyFold(nn.Module):
    def __init__(self, c, blocks):
        super().__init__()
        self.trunk = Trunk(c, blocks)
        self.head = ConfidenceHead(c)

    def forward(self, z_local):
        z = self.trunk(z_local)
        return self.head(GatherRows.apply(z))
