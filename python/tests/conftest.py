# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Shared helpers.  The cpfold package lives in python/ (this file's parent's parent); pytest
puts it on sys.path (``pythonpath`` in python/pyproject.toml), child processes get PYTHONPATH."""
import json
import os
import subprocess
import sys

import pytest

PY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_module(module, args, timeout=240):
    """Run ``python -m module args`` from python/; return CompletedProcess (text)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PY_DIR + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=PY_DIR, env=env,
                          capture_output=True, text=True, timeout=timeout)


def parse_prefixed(stdout, prefix):
    for line in stdout.splitlines():
        if line.startswith(prefix):
            return json.loads(line[len(prefix):])
    raise AssertionError(f"no line starting with {prefix!r} in:\n{stdout[-2000:]}")


_PARITY_CACHE = {}


def parity(*args, timeout=240):
    """Run cpfold.parity once per argument tuple (cached for the session)."""
    key = tuple(args)
    if key not in _PARITY_CACHE:
        p = run_module("cpfold.parity", list(args) + ["--json"], timeout=timeout)
        _PARITY_CACHE[key] = p
    return _PARITY_CACHE[key]


@pytest.fixture
def parity_run():
    return parity
