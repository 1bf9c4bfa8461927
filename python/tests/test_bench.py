# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
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
        "--parity-preset", "tiny", "--parity-n-token", "32", "--memory-n", "32", "--memory-blocks", "2",
        "--budget-min", "5"], timeout=400)
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
    assert [(m["grid"], m["N"], m["blocks"]) for m in res["memory"]] == [("1x1", 32, 2), ("1x2", 32, 2)]
    assert all(m["peak_mem_bytes_per_rank"][0] > 0 for m in res["memory"])
    md = open(os.path.join(out, "bench.md")).read()
    assert "| TriangleMultiplicationOutgoing | 32 |" in md and "## Largest N" in md
    assert "## Peak memory of a multi-block Pairformer forward" in md


def test_bench_baseline_and_two_dtypes(tmp_path):
    # --baseline runs the timing worker of another cpfold package (here: this one) beside this code
    out = str(tmp_path / "bench")
    base = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = run_module("cpfold.bench", [
        "--out", out, "--device", "cpu", "--preset", "tiny", "--dtype", "fp32,bf16", "--sizes", "32",
        "--grids", "1x1", "--iters", "1", "--warmup", "0", "--skip-parity", "--skip-largest",
        "--memory-n", "0", "--baseline", base, "--budget-min", "4"], timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.load(open(os.path.join(out, "bench.json")))
    runs = {(r["grid"], r["dtype"], r["code"]): r["records"] for r in res["runs"]}
    assert sorted(runs) == [("1x1", "bf16", "base"), ("1x1", "bf16", "new"),
                            ("1x1", "fp32", "base"), ("1x1", "fp32", "new")]
    assert all(len(recs) == 1 for recs in runs.values())
    assert res["timing"]["1x1"] == runs[("1x1", "fp32", "new")]
    md = open(os.path.join(out, "bench.md")).read()
    assert "## This code vs the baseline" in md and "## bf16 vs fp32" in md
    checks = [t["check"] for t in res["targets"]]
    assert "PairformerBlock 1x1 bf16 speedup over fp32 at N=1024" not in checks   # only the sizes run


def test_bench_rejects_bad_dtype_and_baseline(tmp_path):
    p = run_module("cpfold.bench", ["--out", str(tmp_path), "--device", "cpu", "--dtype", "fp16"])
    assert p.returncode == 2 and "use bf16, fp32 or a comma list" in p.stderr
    p = run_module("cpfold.bench", ["--out", str(tmp_path), "--device", "cpu", "--baseline", str(tmp_path)])
    assert p.returncode == 2 and "no cpfold/bench.py there" in p.stderr
