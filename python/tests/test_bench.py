"""CPU smoke test of the GPU benchmark: one command, JSON + markdown written."""
import json
import os

from conftest import run_module


def test_bench_cpu_smoke(tmp_path):
    out = str(tmp_path / "bench")
    p = run_module("cpfold.bench", [
        "--out", out, "--device", "cpu", "--preset", "tiny", "--dtype", "fp32", "--sizes", "32",
        "--grids", "1x2", "--iters", "1", "--warmup", "1", "--largest-start", "32",
        "--largest-step", "32", "--largest-max", "64", "--largest-refine", "1",
        "--parity-preset", "tiny", "--parity-n-token", "32", "--budget-min", "3"], timeout=240)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.load(open(os.path.join(out, "bench.json")))
    assert res["grids"] == ["1x1", "1x2"]
    assert res["parity"]["1x2"]["exit_code"] == 0
    for g in ("1x1", "1x2"):
        (rec,) = res["timing"][g]
        assert rec["N"] == 32
        blk = rec["modules"]["PairformerBlock"]
        assert blk["median_s"] > 0 and len(blk["peak_mem_bytes_per_rank"]) == int(g[-1])
        assert res["largest"][g]["largest_n"] == 64
    assert 0.0 <= res["timing"]["1x2"][0]["trimul_overlap"]["hidden_fraction"] <= 1.0
    md = open(os.path.join(out, "bench.md")).read()
    assert "| TriangleMultiplicationOutgoing | 32 |" in md and "## Largest N" in md
