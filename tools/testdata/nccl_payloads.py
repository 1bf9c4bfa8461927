# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""A few NCCL collectives on one rank (or more), for checking what nsys exports of NCCL's NVTX
payloads (communicator id, ranks, message size): tools/testdata/make_cpfold_exports.sh's
`backtrace` step runs it under nsys and exports with and without --include-json."""
import os

import torch
import torch.distributed as dist


def main():
    rank = int(os.environ.get("RANK", "0"))
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl")
    x = torch.ones(1 << 20, device="cuda")
    sub = dist.new_group(list(range(dist.get_world_size())))
    for i in range(3):
        torch.cuda.nvtx.range_push(f"step {i}")
        dist.all_reduce(x)
        dist.broadcast(x, src=0)
        dist.all_reduce(x[: 1 << 10], group=sub)
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"nccl-payloads: rank {rank} of {dist.get_world_size()} done, x[0]={x[0].item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
