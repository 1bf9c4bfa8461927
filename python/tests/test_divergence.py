# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Divergent control flow must end in a timeout (or a detected failure), never hang."""
import time

from conftest import parity


def test_divergent_control_flow_is_killed_by_timeout():
    # ranks != 0 ask for one more diffusion sample and the broadcast is off:
    # the extra confidence pass waits on p2p that rank 0 never posts.
    t0 = time.time()
    p = parity("--cp0", "1", "--cp1", "2", "--n-token", "32", "--mode", "e2e",
               "--diverge", "--skip-bcast", "--timeout", "15", timeout=120)
    elapsed = time.time() - t0
    assert p.returncode == 124, p.stdout + p.stderr
    assert "TIMEOUT after 15s" in p.stdout
    assert elapsed < 60


def test_broadcast_fixes_divergent_counts():
    p = parity("--cp0", "1", "--cp1", "2", "--n-token", "32", "--mode", "e2e", "--diverge",
               "--timeout", "120")
    assert p.returncode == 0, p.stdout + p.stderr


def test_mismatched_collectives_fail_fast():
    # one recycle less on rank 1: gloo detects the mismatched message and the
    # launcher stops the job (the surviving rank would otherwise wait forever)
    t0 = time.time()
    p = parity("--cp0", "1", "--cp1", "2", "--n-token", "32", "--mode", "trunk",
               "--diverge", "--skip-bcast", "--timeout", "60", timeout=120)
    assert p.returncode in (2, 124), p.stdout + p.stderr
    assert ("failed with exit code" in p.stdout) or ("TIMEOUT" in p.stdout)
    assert time.time() - t0 < 90
