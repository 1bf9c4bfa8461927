# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""The workload kit end to end on CPU: a toy two-module user model (toy_user_model/) with an input
contract, its profile module written by the built `cpprof scaffold`, run on 2 gloo ranks started
as torchrun would (torchrun itself is broken on Debian's Python 3.11). The C++ side of the same
path (the probe reading these lines through `cpprof profile`) is
tests/cli/profile_test.cc:ProbeReadsAScaffoldedModuleOfAUserModel; the divergence flag on the
readout's NCCL counts is src/analysis/divergence_test.cc (it needs an nsys export of NCCL ops)."""
import json
import os
import subprocess

import pytest

import cpprof_workload as cw
from built_cpprof import CPPROF
from workload_ranks import run_ranks

HERE = os.path.dirname(os.path.abspath(__file__))
TOY = os.path.join(HERE, "toy_user_model")
REPO = os.path.dirname(os.path.dirname(HERE))


def cpprof_binary():
    if CPPROF is None:
        pytest.skip("no built cpprof (build/cpprof or $CPPROF_BIN): build first")
    return CPPROF


def scaffold(out, *extra, model="toymodel.model:ToyFold"):
    r = subprocess.run([cpprof_binary(), "scaffold", "--model", model, "--entry", "infer", "--cp-wrapper",
                        "toymodel.cp:wrap_cp", "--contract", "contract.json", "--count", "recycles=2",
                        "--n-token", "12", "--iters", "2", "-o", str(out), *extra],
                       cwd=TOY, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r


def test_scaffolded_module_runs_on_two_gloo_ranks(tmp_path):
    r = scaffold(tmp_path / "profile_toy.py")
    assert "torchrun --standalone --nproc_per_node=2 -m profile_toy --n-token 12" in r.stderr
    # Only the toy model on the path: the module finds cpprof_workload beside the cpprof that wrote it.
    res = run_ranks(["-m", "profile_toy"], cwd=str(tmp_path), pythonpath=[TOY])
    lines = []
    for rank, (rc, out, err) in enumerate(res):
        assert rc == 0, f"rank {rank}:\n{out}\n{err}"
        mine = cw.parse_iteration_lines(out)
        assert [(l["rank"], l["iter"], l["warmup"], l["planned"]) for l in mine] == [
            (rank, 0, True, 3), (rank, 1, False, 3), (rank, 2, False, 3)]
        assert all(l["wall_s"] > 0 and l["peak_mem_bytes"] > 0 for l in mine)
        lines += mine
    out0 = res[0][1]
    info = json.loads(out0.split("cpprof-workload: ", 1)[1].splitlines()[0])
    assert info["counts"] == {"recycles": 2} and info["world"] == 2 and info["n_token"] == 12
    assert info["weights"] == "initialised: Glorot-uniform x 0.1"
    assert ("cpprof-trace-json: cpprof trace-json --function toymodel.model:ToyFold.forward "
            "--function toymodel.model:TokenEncoder.forward --function toymodel.model:PairBlock.forward "
            "--entry-module profile_toy -o profile_toy.trace.json") in out0
    assert "cpprof-trace-json" not in res[1][1]  # rank 0 alone says it


def test_the_probe_runs_only_the_first_iterations(tmp_path):
    scaffold(tmp_path / "profile_toy.py")
    res = run_ranks(["-m", "profile_toy"], cwd=str(tmp_path), pythonpath=[TOY, os.path.join(REPO, "python")],
                    env_extra={cw.PROBE_ITERS_ENV: "2"})
    for rc, out, err in res:
        assert rc == 0, err
        assert [(l["iter"], l["planned"]) for l in cw.parse_iteration_lines(out)] == [(0, 3), (1, 3)]


def test_inputs_that_break_the_contract_stop_the_module(tmp_path):
    bad = json.load(open(os.path.join(TOY, "contract.json")))
    bad["inputs"][0]["shape"] = ["N_token", 15]  # the model's TokenEncoder wants 16 features
    (tmp_path / "contract.json").write_text(json.dumps(bad))
    scaffold(tmp_path / "profile_toy.py")
    res = run_ranks(["-m", "profile_toy", "--contract", str(tmp_path / "contract.json")], cwd=str(tmp_path),
                    pythonpath=[TOY], world=1)
    rc, out, err = res[0]
    assert rc != 0
    assert "mat1 and mat2 shapes cannot be multiplied" in err  # the synthetic inputs are valid, the model disagrees
    # validate_inputs catches a batch that breaks the contract before the model runs.
    batch = cw.synthetic_inputs(os.path.join(TOY, "contract.json"), n_token=12, seed=0)
    batch["atom_to_token"][0] = 40
    with pytest.raises(cw.InputError, match="'atom_to_token': token indices run from"):
        cw.validate_inputs(batch, os.path.join(TOY, "contract.json"))


def test_divergent_variant_does_not_complete(tmp_path):
    # Rank r runs 1 + r recycles, ignoring the broadcast count: the ranks issue different numbers
    # of all-reduces and the job cannot finish as written (gloo fails or the process-group timeout
    # stops it). On GPUs the readout flags it: src/analysis/divergence_test.cc.
    scaffold(tmp_path / "profile_div.py", model="toymodel.model:DivergentToyFold")
    res = run_ranks(["-m", "profile_div", "--pg-timeout", "10", "--iters", "2"], cwd=str(tmp_path),
                    pythonpath=[TOY], timeout=90)
    outs = [cw.parse_iteration_lines(out) for _, out, _ in res]
    finished = [rc == 0 and len(o) == 3 for (rc, _, _), o in zip(res, outs)]
    assert not all(finished), res


def test_checkpoint_weights_are_loaded(tmp_path, monkeypatch):
    import torch
    monkeypatch.syspath_prepend(TOY)
    from toymodel.model import ToyFold
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    torch.save(ToyFold().state_dict(), ckpt / "weights.pt")
    scaffold(tmp_path / "profile_toy.py", "--checkpoint", str(ckpt))
    res = run_ranks(["-m", "profile_toy", "--iters", "1"], cwd=str(tmp_path), pythonpath=[TOY], world=1)
    rc, out, err = res[0]
    assert rc == 0, err
    info = json.loads(out.split("cpprof-workload: ", 1)[1].splitlines()[0])
    assert info["weights"] == f"loaded {ckpt / 'weights.pt'}"
