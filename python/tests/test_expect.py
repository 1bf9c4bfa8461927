# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""expect.json / trace_spec.json / presets.json: in sync with their generators, resolvable, and
the communication oracle matches what the code really issues."""
import json

import pytest

from conftest import parity, parse_prefixed
from cpfold import config, expect, trace_spec


def _load(path):
    with open(path) as fh:
        return json.load(fh)


def test_expect_json_is_current():
    assert _load(expect.EXPECT_PATH) == json.loads(json.dumps(expect.build_expect()))


def test_presets_json_is_current():
    # cpprof reads the presets' diffusion steps from this file (src/profile/cpfold_presets.cc)
    assert _load(config.PRESETS_JSON) == config.presets_json()
    assert config.main(["--check"]) == 0
    assert _load(config.PRESETS_JSON)["presets"]["af3"]["diffusion_steps"] == 200


def test_trace_spec_is_current_and_resolves():
    spec = _load(trace_spec.SPEC_PATH)
    assert spec == trace_spec.build_spec()
    assert trace_spec.check(spec) == []
    names = {n for v in spec.values() for n in v}
    for n in ("TriangleMultiplicationOutgoing.forward", "TriangleMultiplicationIncoming.forward",
              "TriangleAttentionStartingNode.forward", "TriangleAttentionEndingNode.forward",
              "PairTransition.forward", "AttentionPairBias.forward", "SingleTransition.forward",
              "PairformerBlock.forward", "PairformerModule.forward", "MSAModule.forward",
              "InputEmbedder.forward", "DiffusionModule.forward", "ConfidenceModule.forward"):
        assert n in names
    assert "TriangleMultiplicationOutgoing.forward" in spec["cpfold.model.pairformer"]
    # every range the oracle promises is traceable
    doc = _load(expect.EXPECT_PATH)
    for mode, ranges in doc["module_ranges"].items():
        assert set(ranges) <= names, set(ranges) - names
    for ranges in doc["module_ranges_cp"].values():
        assert set(ranges) <= names


def test_trace_spec_functions_are_distinct():
    from cpfold.model import pairformer as pf
    assert pf.TriangleMultiplicationOutgoing.forward is not pf.TriangleMultiplicationIncoming.forward
    assert pf.TriangleAttentionStartingNode.forward is not pf.TriangleAttentionEndingNode.forward
    assert pf.PairTransition.forward is not pf.SingleTransition.forward


def _expected_from_json(doc, mode, grid, rank, variables):
    """What a C++ reader would do with expect.json."""
    per_call = doc["per_call"][f"{grid[0]}x{grid[1]}"]["per_rank"][str(rank)]
    out = {}
    for tag, terms in doc["calls_per_forward"][mode].items():
        calls = 0
        for term, coef in terms.items():
            v = 1
            for name in term.split("*"):
                v *= 1 if name == "1" else variables[name]
            calls += coef * v
        for op, n in per_call.get(tag, {}).items():
            out.setdefault(tag, {})[op] = n * calls
    return out


@pytest.mark.parametrize("grid", [(2, 2), (1, 2), (1, 1)], ids=["2x2", "1x2", "1x1"])
@pytest.mark.parametrize("mode", ["trunk", "e2e"])
def test_comm_schedule_matches_expect(grid, mode):
    p = parity("--cp0", str(grid[0]), "--cp1", str(grid[1]), "--mode", "all", "--n-token", "64")
    assert p.returncode == 0, p.stdout + p.stderr
    res = parse_prefixed(p.stdout, "parity: ")
    doc = _load(expect.EXPECT_PATH)
    # the tiny preset and the parity defaults (recycles 1, 2 samples, 3 steps)
    variables = dict(passes=2, pairformer_blocks=2, msa_blocks=1, confidence_blocks=1, samples=2,
                     diffusion_steps=3)
    for rank, measured in enumerate(res["comm_counts"]):
        want = _expected_from_json(doc, mode, grid, rank, variables)
        assert measured[mode] == want, f"rank {rank}"


def test_expect_cannon_sendrecv_counts():
    doc = _load(expect.EXPECT_PATH)
    for q in (2, 3):
        g = doc["per_call"][f"{q}x{q}"]["per_rank"]
        for rank in range(q * q):
            n = g[str(rank)]["TriangleMultiplicationOutgoing"]["p2p_batch"]
            assert n == (q - 1) + (0 if rank == 0 else 1)
    assert doc["per_call"]["1x4"]["per_rank"]["2"]["TriangleMultiplicationIncoming"] == \
        {"p2p_batch": 3, "p2p_ops": 6}
