# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""cpprof_workload: seeds, small weights, control counts, contract inputs, iteration lines."""
import io
import json
import os

import pytest
import torch

import cpprof_workload as cw
from workload_ranks import run_ranks

HERE = os.path.dirname(os.path.abspath(__file__))
CONTRACT = os.path.join(HERE, "toy_user_model", "contract.json")


def test_seed_all_makes_the_same_draws():
    cw.seed_all(7)
    a = torch.rand(4)
    cw.seed_all(7)
    assert torch.equal(a, torch.rand(4))


def test_init_small_glorot_times_gain_zero_bias_identity_norm():
    m = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.LayerNorm(32), torch.nn.Linear(32, 16, bias=False))
    with torch.no_grad():
        m[1].weight.fill_(3.0)
        m[1].bias.fill_(2.0)
    cw.seed_all(0)
    cw.init_small_(m, gain=0.1)
    bound = 0.1 * (6.0 / (64 + 32)) ** 0.5  # Glorot-uniform x gain
    assert float(m[0].weight.abs().max()) <= bound + 1e-7
    assert float(m[0].weight.abs().max()) > bound / 2
    assert float(m[0].bias.abs().max()) == 0.0
    assert torch.equal(m[1].weight, torch.ones(32)) and torch.equal(m[1].bias, torch.zeros(32))


def test_broadcast_counts_without_a_process_group_is_identity():
    assert cw.broadcast_counts(recycles=3, steps=10) == {"recycles": 3, "steps": 10}
    with pytest.raises(TypeError, match="recycles=2.5 is not an int"):
        cw.broadcast_counts(recycles=2.5)


def test_broadcast_counts_gives_rank0s_values_on_two_gloo_ranks():
    script = (
        "import os, json, torch.distributed as dist, cpprof_workload as cw\n"
        "dist.init_process_group('gloo')\n"
        "r = dist.get_rank()\n"
        "print('counts: ' + json.dumps(cw.broadcast_counts(recycles=3 + r, steps=10 * (r + 1))))\n"
        "dist.destroy_process_group()\n")
    res = run_ranks(["-c", script])
    for rc, out, err in res:
        assert rc == 0, err
        assert 'counts: {"recycles": 3, "steps": 10}' in out


def test_synthetic_inputs_satisfy_the_contract_and_repeat_per_seed():
    b = cw.synthetic_inputs(CONTRACT, n_token=12, seed=3)
    assert b["pair_feat"].shape == (12, 12, 8) and b["pair_feat"].dtype == torch.float32
    assert b["atom_to_token"].shape == (36,) and b["atom_to_token"].dtype == torch.int64
    assert b["token_mask"].dtype == torch.bool and bool(b["token_mask"][0])
    assert torch.equal(b["restype"].sum(-1), torch.ones(12))
    assert cw.validate_inputs(b, CONTRACT) == {"N_token": 12, "N_atom": 36, "N_msa": 16}
    again = cw.synthetic_inputs(CONTRACT, n_token=12, seed=3)
    assert all(torch.equal(b[k], again[k]) for k in b)
    assert not torch.equal(b["token_feat"], cw.synthetic_inputs(CONTRACT, n_token=12, seed=4)["token_feat"])
    assert cw.synthetic_inputs(CONTRACT, n_token=5, seed=0, N_atom=4)["atom_to_token"].shape == (4,)


def test_validate_inputs_says_what_is_wrong():
    b = cw.synthetic_inputs(CONTRACT, n_token=8, seed=0)
    b["pair_feat"] = b["pair_feat"][:, :7]
    b["residue_index"] = b["residue_index"].to(torch.int32)
    b["restype"][2, :] = 0
    b["atom_to_token"] = b["atom_to_token"].flip(0)
    b["token_mask"] = torch.zeros(8, dtype=torch.bool)
    del b["pair_mask"]
    b["extra"] = torch.zeros(1)
    with pytest.raises(cw.InputError) as e:
        cw.validate_inputs(b, CONTRACT)
    msg = str(e.value)
    assert "input 'pair_mask' is missing" in msg
    assert "inputs not in the contract: extra" in msg
    assert "input 'pair_feat': shape (8, 7, 8), but the contract says ['N_token', 'N_token', 8] = (8, 8, 8)" in msg
    assert "input 'residue_index': dtype int32, but the contract says int64" in msg
    assert "input 'restype': not one-hot along its last axis (1 rows" in msg
    assert "input 'atom_to_token': not sorted" in msg
    assert "input 'token_mask': the mask is all zero" in msg
    assert len(e.value.problems) == 7


def test_validate_inputs_nan_and_index_range():
    b = cw.synthetic_inputs(CONTRACT, n_token=6, seed=0)
    b["token_feat"][0, 0] = float("nan")
    b["residue_index"][1] = 6
    b["atom_to_token"] = torch.zeros(18, dtype=torch.int64)
    with pytest.raises(cw.InputError) as e:
        cw.validate_inputs(b, CONTRACT)
    assert "input 'token_feat': 1 of 96 values are NaN or infinite" in str(e.value)
    assert "input 'residue_index': indices run from" in str(e.value) and "outside [0, 6)" in str(e.value)
    assert "input 'atom_to_token': 5 of 6 tokens have no atom" in str(e.value)


@pytest.mark.parametrize("contract,message", [
    ({"inputs": []}, "no \"inputs\" list"),
    ({"inputs": [{"name": "x", "shape": [4], "dtype": "float32", "kind": "blob"}]}, "kind 'blob' is not one of"),
    ({"inputs": [{"name": "x", "shape": ["N_tok"], "dtype": "float32", "kind": "float"}]},
     "names 'N_tok', which is not a dimension"),
    ({"inputs": [{"name": "x", "shape": [4], "dtype": "int64", "kind": "float"}]}, "kind float needs a floating"),
    ({"inputs": [{"name": "x", "shape": ["N_token"], "dtype": "float32", "kind": "atom_to_token"}]},
     "needs an integer dtype"),
    ({"schema": "other/2", "inputs": [{}]}, "this cpprof_workload reads"),
    ({"inputs": [{"name": "x", "shape": ["N_token**2"], "dtype": "float32", "kind": "float"}]},
     "only integers, dimension names"),
])
def test_contract_errors_say_what_is_wrong(contract, message):
    with pytest.raises(cw.ContractError, match=message.replace("*", r"\*")):
        cw.load_contract(contract)


def test_contract_file_errors(tmp_path):
    with pytest.raises(cw.ContractError, match="cannot read the contract"):
        cw.load_contract(str(tmp_path / "none.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(cw.ContractError, match="not JSON"):
        cw.load_contract(str(bad))


def test_contract_evaluation_is_bounded(tmp_path):
    """Issue 39: a contract with chained squared dims ran past 30 s and 2.4 GB; a folder given as
    the contract, or a scale that is not a number, ended in a traceback rather than a ContractError."""
    chained = {"dims": {"d0": "N_token*N_token"}, "inputs": [{"name": "x", "shape": ["d30"], "dtype": "float32",
                                                              "kind": "float"}]}
    for i in range(1, 31):
        chained["dims"][f"d{i}"] = f"d{i - 1}*d{i - 1}"
    with pytest.raises(cw.ContractError, match="overflows 64 bits"):
        cw.load_contract(chained)
    with pytest.raises(cw.ContractError, match="does not fit 64 bits"):
        cw.load_contract({"inputs": [{"name": "x", "shape": [2 ** 70], "dtype": "float32", "kind": "float"}]})
    with pytest.raises(cw.ContractError, match="is a folder"):
        cw.load_contract(str(tmp_path))
    scale = {"inputs": [{"name": "x", "shape": [4], "dtype": "float32", "kind": "float", "scale": "big"}]}
    with pytest.raises(cw.ContractError, match="scale 'big' is not a finite number"):
        cw.synthetic_inputs(scale, n_token=4)
    # Found by tests/fuzz/contract_fuzz.py: TypeErrors before.
    with pytest.raises(cw.ContractError, match="dtype \\['a'\\] is not one of"):
        cw.load_contract({"inputs": [{"name": "x", "shape": [4], "dtype": ["a"], "kind": "float"}]})
    with pytest.raises(cw.ContractError, match="not float"):
        cw.load_contract(1.5)
    negative = {"inputs": [{"name": "x", "shape": ["N_token-100"], "dtype": "float32", "kind": "float"}]}
    with pytest.raises(cw.ContractError, match="sizes must be at least 0"):
        cw.synthetic_inputs(negative, n_token=4)
    # Found by the 15-minute fuzz run of issue 39 (tests/fuzz/crashes/contract-1-19566.json): a
    # one-hot input with no classes ended in torch's "random_ expects 'from' to be less than 'to'".
    no_classes = {"inputs": [{"name": "restype", "shape": ["N_token", "N_token-N_token"], "dtype": "float32",
                              "kind": "one-hot"}]}
    with pytest.raises(cw.ContractError, match="'restype': a one-hot input needs at least one class, but its last "
                                               "dimension is 0 for N_token=4"):
        cw.synthetic_inputs(no_classes, n_token=4)


def test_inputs_larger_than_memory_are_refused_before_any_tensor():
    pair = {"inputs": [{"name": "pair", "shape": ["N_token", "N_token", 128], "dtype": "float32", "kind": "float"}]}
    # AF3 scale (5120 tokens, a 128-channel pair representation) fits an H200's 141 GB.
    assert cw.input_bytes(pair, n_token=5120) == 5120 * 5120 * 128 * 8
    assert cw.input_bytes(pair, n_token=5120) < 141 * 10 ** 9
    with pytest.raises(cw.ContractError, match="more than the 1.0 GiB of memory here"):
        cw.synthetic_inputs(pair, n_token=5120, max_bytes=2 ** 30)
    with pytest.raises(cw.ContractError, match="more than the"):
        cw.synthetic_inputs(pair, n_token=2 ** 20)  # 1 PB: no machine's memory


def test_iteration_prints_one_machine_readable_line(monkeypatch):
    monkeypatch.delenv(cw.PROBE_ITERS_ENV, raising=False)
    monkeypatch.setenv("RANK", "1")
    buf = io.StringIO()
    plan = cw.schedule(iters=2, warmup=1)
    assert plan == [(0, True), (1, False), (2, False)]
    for i, warm in plan:
        with cw.iteration(i, warmup=warm, out=buf):
            torch.ones(100).sum()
    lines = cw.parse_iteration_lines("[rank1]:" + buf.getvalue())
    assert [(l["iter"], l["warmup"], l["rank"], l["planned"]) for l in lines] == [
        (0, True, 1, 3), (1, False, 1, 3), (2, False, 1, 3)]
    assert lines[0]["wall_s"] >= 0 and lines[0]["peak_mem_bytes"] > 0
    assert lines[0]["peak_mem_kind"] in ("cpu_max_rss", "cuda_max_allocated")
    assert buf.getvalue().startswith("cpprof-iter: {")


def test_iteration_gives_its_numbers_and_names_its_range(monkeypatch):
    monkeypatch.delenv(cw.PROBE_ITERS_ENV, raising=False)
    names = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)      # CUDA pretended: NVTX only
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(torch.cuda.nvtx, "range_push", names.append)
    monkeypatch.setattr(torch.cuda.nvtx, "range_pop", lambda: None)
    buf = io.StringIO()
    with cw.iteration(0, warmup=True, out=buf, planned=2) as mark:
        assert mark == {}
    with cw.iteration(1, out=buf, prefix="cpfold") as mark1:
        pass
    assert names == ["cpprof:warmup0", "cpfold:iter1"]
    lines = cw.parse_iteration_lines(buf.getvalue())
    assert mark == lines[0] and mark1 == lines[1]          # the printed fields, for a summary
    assert mark["planned"] == 2 and mark["warmup"] is True
    with pytest.raises(ValueError, match="prefix"):
        with cw.iteration(2, out=buf, prefix=""):
            pass


def test_schedule_is_capped_under_the_probe(monkeypatch):
    monkeypatch.setenv(cw.PROBE_ITERS_ENV, "2")
    assert cw.schedule(iters=5, warmup=1) == [(0, True), (1, False)]
    buf = io.StringIO()
    with cw.iteration(0, warmup=True, out=buf):
        pass
    assert json.loads(buf.getvalue().split(":", 1)[1])["planned"] == 6  # the whole run's count


def test_no_iteration_line_when_the_body_raises():
    buf = io.StringIO()
    with pytest.raises(RuntimeError):
        with cw.iteration(0, out=buf):
            raise RuntimeError("boom")
    assert buf.getvalue() == ""  # an iteration that failed is not timed


def test_load_checkpoint_or_init(tmp_path):
    m = torch.nn.Linear(4, 3)
    assert cw.load_checkpoint_or_init(m, None, gain=0.1).startswith("initialised")
    src = torch.nn.Linear(4, 3)
    torch.save({"state_dict": src.state_dict()}, tmp_path / "w.pt")
    assert cw.load_checkpoint_or_init(m, str(tmp_path)) == f"loaded {tmp_path / 'w.pt'}"
    assert torch.equal(m.weight, src.weight)
    (tmp_path / "x.pt").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="holds 2 weight files"):
        cw.load_checkpoint_or_init(m, str(tmp_path))
    with pytest.raises(FileNotFoundError, match="no checkpoint at"):
        cw.load_checkpoint_or_init(m, str(tmp_path / "nope.pt"))


def test_contract_fuzzer_finds_nothing_in_its_ci_budget():
    """tests/fuzz/contract_fuzz.py: a fixed number of damaged contracts from a fixed seed (the same
    cases on every machine), each only ever a ContractError or InputError."""
    import subprocess
    import sys
    fuzzer = os.path.join(HERE, "..", "..", "tests", "fuzz", "contract_fuzz.py")
    crashes = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"contract-fuzz-{os.getpid()}")
    r = subprocess.run([sys.executable, fuzzer, "--runs", "300", "--seed", "1", "--crashes", crashes],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "300 cases from seed 1, no finding" in r.stdout
