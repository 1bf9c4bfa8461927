# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""The __main__ trap: the model class is defined in the module that is launched with -m, so it
runs as __main__ and nsys's --python-functions-trace records nothing for 'cpwork.inline_main'."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn


class InlineBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.lin = nn.Linear(c, c)

    def forward(self, x):
        return torch.relu(self.lin(x))


def main():
    rank = int(os.environ.get("RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    local = int(os.environ.get("LOCAL_RANK", 0))
    dev = torch.device("cuda", local)
    torch.cuda.set_device(dev)
    if world > 1:
        dist.init_process_group("nccl")
    torch.manual_seed(0)
    blk = InlineBlock(64).to(dev)
    x = torch.randn(256, 64, device=dev)
    with torch.no_grad():
        for _ in range(3):
            y = blk(x)
            if world > 1:
                g = torch.empty(world * 256, 64, device=dev)
                dist.all_gather_into_tensor(g, y)
    torch.cuda.synchronize()
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
