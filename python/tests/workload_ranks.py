# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Start a script on N local gloo ranks the way torchrun would (RANK, LOCAL_RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT in the environment): torchrun itself is broken on Debian's Python 3.11."""
import os
import socket
import subprocess
import sys

PY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(argv, world=2, cwd=None, env_extra=None, timeout=180, pythonpath=None):
    """Runs ``python argv`` once per rank; returns [(returncode, stdout, stderr)] by rank.
    ``pythonpath``: the ranks' whole PYTHONPATH (default: python/ before the caller's)."""
    port = str(free_port())
    procs = []
    for r in range(world):
        env = dict(os.environ)
        env.update(RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(world),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        pp = [PY_DIR] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        env["PYTHONPATH"] = os.pathsep.join(pp) if pythonpath is None else os.pathsep.join(pythonpath)
        env.pop("CPPROF_PROBE_ITERS", None)
        env.update(env_extra or {})
        procs.append(subprocess.Popen([sys.executable, *argv], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    results = []
    try:
        for p in procs:
            try:
                out, err = p.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
                err += f"\nrun_ranks: killed after {timeout} s"
            results.append((p.returncode, out, err))
    finally:
        for p in procs:  # only the processes started here
            if p.poll() is None:
                p.kill()
                p.wait()
    return results
