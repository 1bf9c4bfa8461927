# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""cpprof's FLOP model (docs/cost-model.md) against PyTorch's own count on cpfold's modules, on
the CPU: tools/device/flop_check.py with torch.profiler's with_flops (torch 1.13) or
FlopCounterMode (torch >= 2.1), one rank and each rank of a CP grid, several N. Within 5 % for
every module."""
import os
import subprocess
import sys

import pytest

from built_cpprof import CPPROF, REPO, needs_cpprof


@needs_cpprof
@pytest.mark.parametrize("preset,sizes", [("tiny", "24,48"), ("small", "32")])
def test_flop_model_agrees_with_pytorch_on_cpu(preset, sizes):
    p = subprocess.run([sys.executable, os.path.join(REPO, "tools", "device", "flop_check.py"), "--cpprof", CPPROF,
                        "--n", sizes, "--preset", preset, "--device", "cpu"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    for key in ("TriangleMultiplicationOutgoing", "OuterProductMean", "DiffusionAttentionPairBias", "DiffusionTransition",
                "DiffusionTransformer", "ConfidenceModule", "DistogramHead"):
        assert key in p.stdout, p.stdout
    checked = [l for l in p.stdout.splitlines() if l.endswith("profiler(with_flops)") or l.endswith("FlopCounterMode")]
    assert len(checked) == 14 * len(sizes.split(",")), p.stdout
    assert "within 5.0 %" in p.stdout, p.stdout


@needs_cpprof
@pytest.mark.parametrize("grid,world", [("1x2", 2), ("2x2", 4)])
def test_flop_model_per_rank_under_cp_on_cpu(grid, world):
    """Each rank of a CP grid (gloo ranks, its block of the pair tensor) counts its own FLOPs: they are
    the model's share of one rank (matmul_flops_per_rank), on a square grid the triangle attention's
    keys, values and bias of the gathered rows included."""
    from workload_ranks import run_ranks
    results = run_ranks([os.path.join(REPO, "tools", "device", "flop_check.py"), "--cpprof", CPPROF, "--n", "32,64",
                         "--preset", "tiny", "--device", "cpu", "--grid", grid], world=world, timeout=600)
    assert [rc for rc, _, _ in results] == [0] * world, results
    out = results[0][1]
    assert f"grid {grid} ({world} ranks" in out, out
    checked = [l for l in out.splitlines() if l.endswith("profiler(with_flops)") or l.endswith("FlopCounterMode")]
    assert len(checked) == 14 * 2, out
    assert "28 of 28 module counts within 5.0 %" in out, out
    assert all(not r[1] for r in results[1:]), "only rank 0 prints"
