"""cpprof's FLOP model (docs/cost-model.md) against PyTorch's own count on cpfold's modules, on
the CPU: tools/device/flop_check.py with torch.profiler's with_flops (torch 1.13) or
FlopCounterMode (torch >= 2.1), one rank, several N. Within 5 % for every module."""
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
