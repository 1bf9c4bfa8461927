# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""cpfold is built on the workload kit (issue 34): seeding (cpprof_workload.seed_all), control
counts (broadcast_counts under comm.broadcast_ints), the schedule and the iteration marks
(`cpprof-iter:` lines, NVTX ranges cpfold:warmupK / cpfold:iterK), with cpfold's numerics
unchanged."""
import contextlib
import hashlib
import json
import os
import subprocess
import sys

import pytest
import torch

import cpprof_workload as cw
from conftest import PY_DIR, run_module

# Computed with cpfold before it used the kit (torch.manual_seed(3) in cpfold.run), tiny preset,
# N=24, one CPU thread: sha256 (16 hex digits) of the weights and of the inputs, the global RNG's
# next draw after the model was built, [sum, norm] of each e2e output, and the training loss.
BEFORE = {
    "weights": "1bfc44f110f69e8b",
    "rng_after_build": 0.08892154693603516,
    "inputs": "97d2264e0d931fd0",
    "e2e": {
        "coords": [40.59461706876755, 25483.423622283775],
        "pae_logits": [73.85735068982467, 10.165926145781253],
        "pde_logits": [320.1267074778443, 11.596385345832838],
        "plddt_logits": [15.767352091148496, 8.099458901250497],
        "s_trunk": [0.19749464036431164, 2.7852359974254077],
        "z_trunk": [41.84159839990389, 15.462724129774253],
    },
    "loss": 3.0699729919433594,
}


def _digest(tensors):
    h = hashlib.sha256()
    for k in sorted(tensors):
        h.update(k.encode())
        h.update(tensors[k].detach().contiguous().cpu().view(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()[:16]


def test_seed_all_leaves_torch_in_the_state_manual_seed_does():
    for seed in (0, 3, 12345):
        torch.manual_seed(seed)
        want = torch.get_rng_state()
        torch.manual_seed(seed + 1)
        cw.seed_all(seed)
        assert torch.equal(torch.get_rng_state(), want)


def test_cpfold_weights_inputs_and_outputs_are_as_before_the_kit():
    from cpfold.config import get_preset
    from cpfold.cp import CPGrid
    from cpfold.features import cast_features
    from cpfold.run import seeded_model_and_inputs
    from cpfold.wrapper import ContextParallel
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        preset = get_preset("tiny")
        cfg, rt = preset.model, preset.runtime
        model, loaded, feats = seeded_model_and_inputs(cfg, 3, 24, 10, rt.msa_depth)
        assert not loaded
        assert _digest(model.state_dict()) == BEFORE["weights"]
        assert float(torch.rand(1)) == BEFORE["rng_after_build"]
        assert _digest(feats) == BEFORE["inputs"]
        cp = ContextParallel(model, CPGrid(1, 1))
        feats = cast_features(feats)
        with torch.no_grad():
            out = cp(feats, mode="e2e", recycles=rt.recycles, diffusion_steps=rt.diffusion_steps,
                     samples=rt.samples, generator=torch.Generator().manual_seed(4))
        assert sorted(out) == sorted(BEFORE["e2e"])
        for k, (s, n) in BEFORE["e2e"].items():
            v = out[k].double()
            assert float(v.norm()) == pytest.approx(n, rel=1e-4), k
            assert float(v.sum()) == pytest.approx(s, rel=1e-3, abs=1e-4 * n * v.numel() ** 0.5), k
        loss, _ = cp.training_loss(feats, recycles=rt.recycles, samples=rt.samples,
                                   generator=torch.Generator().manual_seed(4))
        assert float(loss) == pytest.approx(BEFORE["loss"], rel=1e-4)
    finally:
        torch.set_num_threads(threads)


def _iter_lines(stdout):
    return cw.parse_iteration_lines(stdout)


def test_run_prints_only_the_kits_iteration_lines():
    p = run_module("cpfold.run", ["--mode", "trunk", "--n-token", "16", "--preset", "tiny",
                                  "--iters", "2", "--warmup", "1"], timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "cpfold-iter" not in p.stdout
    lines = _iter_lines(p.stdout)
    assert [(l["iter"], l["warmup"]) for l in lines] == [(0, True), (1, False), (2, False)]
    for l in lines:
        # cpfold's fields (rank, iter, warmup, wall_s, peak_mem_bytes) and the kit's additions
        assert set(l) == {"rank", "iter", "warmup", "wall_s", "wall_ms", "peak_mem_bytes",
                          "peak_mem_kind", "planned"}
        assert l["rank"] == 0 and l["planned"] == 3 and l["peak_mem_kind"] == "cpu_max_rss"
        assert l["wall_s"] > 0 and l["peak_mem_bytes"] > 0
    res = json.loads(p.stdout.strip().splitlines()[-1][len("cpfold: "):])
    # the summary holds the same numbers the lines do
    assert res["per_rank"][0]["warmup_wall_s"] == [lines[0]["wall_s"]]
    assert res["per_rank"][0]["iter_wall_s"] == [l["wall_s"] for l in lines[1:]]
    assert res["per_rank"][0]["peak_mem_bytes"] == max(l["peak_mem_bytes"] for l in lines[1:])


def test_run_under_the_probe_cap_runs_the_first_iterations_and_says_how_many_were_planned():
    env = dict(os.environ, PYTHONPATH=PY_DIR, **{cw.PROBE_ITERS_ENV: "1"})
    p = subprocess.run([sys.executable, "-m", "cpfold.run", "--mode", "trunk", "--n-token", "16",
                        "--preset", "tiny", "--iters", "3", "--warmup", "1"], cwd=PY_DIR, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = _iter_lines(p.stdout)
    assert [(l["iter"], l["warmup"], l["planned"]) for l in lines] == [(0, True, 4)]
    res = json.loads(p.stdout.strip().splitlines()[-1][len("cpfold: "):])
    assert res["median_iter_s"] is None and res["comm_counts_rank0"] == {}


# cpfold.run in one process with CUDA pretended (torch.cuda.is_available -> True, nothing
# initialised, the NVTX calls recorded) and --device cpu: the ranges the kit opens for cpfold.
_NVTX_SCRIPT = r"""
import json, sys, torch
names = []
torch.cuda.is_available = lambda: True
torch.cuda.is_initialized = lambda: False
torch.cuda.nvtx.range_push = lambda n: names.append(n)
torch.cuda.nvtx.range_pop = lambda: None
from cpfold import run
rc = run.main(["--device", "cpu", "--mode", "trunk", "--n-token", "8", "--preset", "tiny",
               "--iters", "2", "--warmup", "1"])
print("NVTX " + json.dumps(names))
sys.exit(rc)
"""


def test_run_marks_iterations_with_cpfolds_nvtx_ranges():
    env = dict(os.environ, PYTHONPATH=PY_DIR)
    env.pop(cw.PROBE_ITERS_ENV, None)
    p = subprocess.run([sys.executable, "-c", _NVTX_SCRIPT], cwd=PY_DIR, env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    names = json.loads([l for l in p.stdout.splitlines() if l.startswith("NVTX ")][0][5:])
    assert names == ["cpfold:warmup0", "cpfold:iter1", "cpfold:iter2"]


def test_broadcast_ints_is_the_kits_broadcast_on_two_gloo_ranks():
    from workload_ranks import run_ranks
    script = (
        "import os, json, torch.distributed as dist\n"
        "from cpfold.cp import comm\n"
        "dist.init_process_group('gloo')\n"
        "r = dist.get_rank()\n"
        "got = comm.broadcast_ints([3 + r, 10 * (r + 1), 7])\n"
        "print('got: ' + json.dumps([got, comm.counts_by_tag()]))\n"
        "dist.destroy_process_group()\n")
    res = run_ranks(["-c", script], world=2)
    for rc, out, err in res:
        assert rc == 0, err
        got = json.loads([l for l in out.splitlines() if l.startswith("got: ")][0][5:])
        assert got == [[3, 10, 7], {"control": {"broadcast": 1}}]


def test_broadcast_ints_without_a_process_group_is_identity():
    from cpfold.cp import comm
    comm.reset_counts()
    assert comm.broadcast_ints([2, 5]) == [2, 5]
    assert comm.counts_by_tag() == {}


def _cpfold_inputs_as_a_kit_contract():
    """cpfold's INVENTORY in the kit's terms, each feature with the kind that says what it is."""
    from cpfold.features import INVENTORY
    dtypes = {torch.float32: "float32", torch.int64: "int64"}
    dims = {"N": "N_token", "A": "N_atom", "S": "N_msa"}
    one_hot = {"res_type", "ref_element", "ref_atom_name_chars", "msa"}
    masks = {"token_pad_mask", "atom_pad_mask", "msa_mask", "has_deletion"}

    def kind(s):
        if s.name in one_hot:
            return "one-hot"
        if s.name in masks:
            return "mask"
        if s.name == "atom_to_token":
            return "atom_to_token"
        return "index" if s.dtype == torch.int64 else "float"
    return cw.load_contract({"schema": cw.SCHEMA, "inputs": [
        {"name": s.name, "shape": [dims.get(d, d) for d in s.shape], "dtype": dtypes[s.dtype],
         "kind": kind(s)} for s in INVENTORY]})


def test_the_kits_contract_does_not_fit_cpfolds_padded_inputs():
    # The reasons cpfold keeps its own make_inputs / validate_inputs (cpfold/features.py's
    # docstring): valid cpfold inputs with padding break the kit's one-hot and atom_to_token rules.
    from cpfold.features import make_inputs, validate_inputs
    contract = _cpfold_inputs_as_a_kit_contract()
    f = make_inputs(16, n_valid=12, msa_depth=3, seed=1)
    validate_inputs(f)                                   # valid for cpfold
    with pytest.raises(cw.InputError) as e:
        cw.validate_inputs(f, contract, N_atom=f["ref_pos"].shape[0], N_msa=3)
    broken = {p.split("'")[1] for p in e.value.problems}
    assert broken == {"res_type", "msa", "ref_element", "ref_atom_name_chars", "atom_to_token"}
    assert any("not sorted" in p for p in e.value.problems)


@contextlib.contextmanager
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _tiny(seed=3, n_token=24):
    """(model, loaded, feats, runtime) of the tiny preset, as cpfold.run builds them."""
    from cpfold.config import get_preset
    from cpfold.run import seeded_model_and_inputs
    preset = get_preset("tiny")
    model, loaded, feats = seeded_model_and_inputs(preset.model, seed, n_token, 10, preset.runtime.msa_depth)
    return model, loaded, feats, preset.runtime


def test_prepare_once_prepares_the_features_in_the_first_forward_only():
    """--prepare-once (what a CUDA graph needs): the first forward's prepared features serve the
    next ones, and the trunk's outputs are the same as when every forward prepares them."""
    from cpfold.cp import CPGrid
    from cpfold.features import cast_features
    from cpfold.run import prepare_features_once
    from cpfold.wrapper import ContextParallel
    with _one_thread():
        model, _, feats, _ = _tiny()
        feats = cast_features(feats)
        cp = ContextParallel(model, CPGrid(1, 1))
        with torch.no_grad():
            want = cp(feats, mode="trunk", recycles=0)
        calls = []
        prepare = model.prepare_features
        model.prepare_features = lambda f: calls.append(1) or prepare(f)
        prepare_features_once(model)
        with torch.no_grad():
            got = [cp(feats, mode="trunk", recycles=0) for _ in range(3)]
        assert len(calls) == 1
        for out in got:
            for k in want:
                assert torch.equal(out[k], want[k]), k
