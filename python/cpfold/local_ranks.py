# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Start local ranks as subprocesses (a minimal torchrun replacement).

Debian's torchrun is broken on the CPU machine, and parity/bench need a
launcher that can kill a hung job: each rank gets RANK / WORLD_SIZE /
LOCAL_RANK / MASTER_ADDR / MASTER_PORT, runs in its own session, and the whole
job is killed when any rank fails or the timeout expires.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import List, Optional, Sequence

PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LaunchResult:
    returncodes: List[Optional[int]]
    logs: List[str]
    timed_out: bool
    elapsed: float
    failed_rank: Optional[int] = None

    @property
    def ok(self) -> bool:
        return not self.timed_out and all(rc == 0 for rc in self.returncodes)


def _kill(procs) -> None:
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)    # the rank's own session (we started it)
            except (ProcessLookupError, PermissionError):
                p.kill()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def launch(module: str, args: Sequence[str], world: int, timeout: float,
           env: Optional[dict] = None, grace: float = 5.0, cwd: Optional[str] = None) -> LaunchResult:
    """Run ``python -m module args`` on ``world`` local ranks (in ``cwd``: ``-m`` puts the
    working directory first on sys.path).

    Returns when every rank exited, when one rank failed (the others get
    ``grace`` seconds, then are killed), or at ``timeout`` (all killed).
    """
    port = free_port()
    logdir = tempfile.mkdtemp(prefix="cpfold_launch_")
    procs, files = [], []
    base = dict(os.environ)
    base["PYTHONPATH"] = PKG_PARENT + (os.pathsep + base["PYTHONPATH"] if base.get("PYTHONPATH") else "")
    base.update(env or {})
    t0 = time.time()
    for rank in range(world):
        e = dict(base, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                 LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        fh = open(os.path.join(logdir, f"rank{rank}.log"), "w+")
        files.append(fh)
        procs.append(subprocess.Popen([sys.executable, "-m", module, *args], env=e, stdout=fh,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      start_new_session=True, cwd=cwd))
    timed_out, failed, fail_time = False, None, None
    while True:
        rcs = [p.poll() for p in procs]
        if all(rc is not None for rc in rcs):
            break
        if failed is None:
            for r, rc in enumerate(rcs):
                if rc not in (None, 0):
                    failed, fail_time = r, time.time()
                    break
        if failed is not None and time.time() - fail_time > grace:
            _kill(procs)
            break
        if time.time() - t0 > timeout:
            timed_out = True
            _kill(procs)
            break
        time.sleep(0.05)
    logs = []
    for fh in files:
        fh.flush()
        fh.seek(0)
        logs.append(fh.read())
        fh.close()
    return LaunchResult([p.poll() for p in procs], logs, timed_out, time.time() - t0, failed)


def init_from_env(backend: str, timeout_s: float = 600.0):
    """init_process_group from torchrun-style env vars (defaults: single rank)."""
    import datetime

    import torch.distributed as dist
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("LOCAL_RANK", "0")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if "MASTER_PORT" not in os.environ:
        os.environ["MASTER_PORT"] = str(free_port())
    local_rank = int(os.environ["LOCAL_RANK"])
    kwargs = {"timeout": datetime.timedelta(seconds=timeout_s)}
    if backend == "nccl":
        import torch
        torch.cuda.set_device(local_rank)
        kwargs["device_id"] = torch.device("cuda", local_rank)   # eager NCCL init (torch >= 2.3)
    try:
        dist.init_process_group(backend, **kwargs)
    except TypeError:                                            # older torch: no device_id
        kwargs.pop("device_id", None)
        dist.init_process_group(backend, **kwargs)
    return dist.get_rank(), dist.get_world_size(), local_rank
