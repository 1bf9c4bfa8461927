# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Entry point: torchrun --standalone --nproc_per_node=2 -m cpwork.run [--mode infer|train]."""
import argparse
import os
import threading

import torch
import torch.distributed as dist

from cpwork.layers import TinyFold


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["infer", "train"], default="infer")
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--n-token", type=int, default=256)
    p.add_argument("--channels", type=int, default=64)
    p.add_argument("--blocks", type=int, default=2)
    return p.parse_args()


def main():
    args = parse()
    rank = int(os.environ.get("RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    local = int(os.environ.get("LOCAL_RANK", 0))
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(dev)
    if world > 1:
        dist.init_process_group("nccl" if cuda else "gloo")
    torch.manual_seed(0)  # identical weights and inputs on every rank
    n, c = args.n_token, args.channels
    assert n % world == 0, "n-token must divide by the number of ranks"
    model = TinyFold(c, args.blocks).to(dev)
    z_full = torch.randn(n, n, c)                      # host tensor: HtoD copy below
    nl = n // world
    z_local = z_full[rank * nl:(rank + 1) * nl].to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    # a start/end range begun here and ended on another thread (nsys leaves it out of the
    # GPU projection), plus a mark in the default domain
    cross = torch.cuda.nvtx.range_start("cross-thread") if cuda else None
    for it in range(args.iters):
        if cuda:
            torch.cuda.nvtx.range_push(f"iteration {it}")
        if args.mode == "infer":
            with torch.no_grad():
                out = model(z_local)
        else:
            opt.zero_grad(set_to_none=False)           # memset of the grads
            out = model(z_local.requires_grad_(False))
            loss = (out * out).mean()
            loss.backward()
            for prm in model.parameters():            # data-parallel style grad sync
                if world > 1 and prm.grad is not None:  # proj_b gets none: the ring sends b detached
                    dist.all_reduce(prm.grad)
            opt.step()
        if cuda:
            torch.cuda.nvtx.range_pop()
            torch.cuda.nvtx.mark(f"done {it}")
    summary = out.float().sum().item()                 # DtoH copy
    if cuda:
        torch.cuda.synchronize()
        t = threading.Thread(target=torch.cuda.nvtx.range_end, args=(cross,))
        t.start()
        t.join()
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    if rank == 0:
        print(f"cpwork: mode={args.mode} ranks={world} n={n} c={c} out_sum={summary:.6g}", flush=True)


if __name__ == "__main__":
    main()
