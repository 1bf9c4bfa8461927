# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Entry point cpfold.run: flags safe under torchrun, machine-readable output, modes."""
import json
import math
import os

from conftest import parse_prefixed, run_module
from cpfold.local_ranks import launch
from cpfold.run import RUN_FLAGS, build_parser

# torchrun options of torch 2.x (dash and underscore spellings); the installed
# torch's own parser is added at test time.
TORCHRUN_2X = """--nnodes --nproc-per-node --nproc_per_node --rdzv-backend --rdzv_backend
--rdzv-endpoint --rdzv_endpoint --rdzv-id --rdzv_id --rdzv-conf --rdzv_conf --standalone
--max-restarts --max_restarts --monitor-interval --monitor_interval --start-method
--start_method --event-log-handler --event_log_handler --role --module --no-python
--no_python --run-path --run_path --log-dir --log_dir --redirects --tee --local-ranks-filter
--local_ranks_filter --node-rank --node_rank --master-addr --master_addr --master-port
--master_port --local-addr --local_addr --logs-specs --logs_specs --numa-binding
--numa_binding --signals-to-handle --signals_to_handle --virtual-local-rank
--virtual_local_rank --duplicate-stdout-filters --duplicate-stderr-filters --help""".split()


def _torchrun_options():
    opts = set(TORCHRUN_2X)
    try:
        from torch.distributed.run import get_args_parser
        for a in get_args_parser()._actions:
            opts.update(s for s in a.option_strings if s.startswith("--"))
    except Exception:
        pass
    return opts


def test_run_flags_do_not_prefix_torchrun_options():
    ours = {s for a in build_parser()._actions for s in a.option_strings if s.startswith("--")}
    assert set(RUN_FLAGS) <= ours
    ours.discard("--help")
    for flag in sorted(ours):
        clash = [o for o in _torchrun_options() if o.startswith(flag)]
        assert not clash, f"{flag} is a prefix of torchrun option(s) {clash}"
    assert "--n-token" in ours and "--n" not in ours


def test_run_single_process_e2e():
    p = run_module("cpfold.run", ["--mode", "e2e", "--n-token", "24", "--preset", "tiny",
                                  "--iters", "2", "--warmup", "1"], timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    last = p.stdout.strip().splitlines()[-1]
    assert last.startswith("cpfold: ")
    res = json.loads(last[len("cpfold: "):])
    assert res["mode"] == "e2e" and res["world"] == 1 and res["iters"] == 2
    assert len(res["per_rank"]) == 1 and len(res["per_rank"][0]["iter_wall_s"]) == 2
    assert res["per_rank"][0]["peak_mem_bytes"] > 0 and res["median_iter_s"] > 0
    # cpfold's iteration lines are the workload kit's (cpprof-iter:), the only kind it prints
    iters = [json.loads(l[len("cpprof-iter: "):]) for l in p.stdout.splitlines()
             if l.startswith("cpprof-iter: ")]
    assert [i["iter"] for i in iters] == [0, 1, 2] and iters[0]["warmup"]
    assert "cpfold-iter" not in p.stdout
    # The config line carries the model's sizes (cpprof report's cost model reads them).
    cfg = [json.loads(l[len("cpfold-config: "):]) for l in p.stdout.splitlines()
           if l.startswith("cpfold-config: ")]
    assert len(cfg) == 1 and cfg[0]["n_token"] == 24 and cfg[0]["grid"] == [1, 1]
    from cpfold.config import get_preset
    assert cfg[0]["model"] == get_preset("tiny").model.to_dict()
    assert cfg[0]["model"]["c_z"] == 16 and cfg[0]["model"]["pairformer_blocks"] == 2


def test_run_two_ranks_train_with_checkpoint(tmp_path):
    ck = str(tmp_path / "ck")
    args = ["--mode", "train", "--n-token", "24", "--cp0", "1", "--cp1", "2", "--preset", "tiny",
            "--iters", "2", "--warmup", "0", "--checkpoint", ck]
    r = launch("cpfold.run", args, 2, timeout=180)
    assert r.ok, r.logs
    res = parse_prefixed(r.logs[0], "cpfold: ")
    assert res["grid"] == [1, 2] and len(res["per_rank"]) == 2
    assert math.isfinite(res["loss"])
    assert res["comm_counts_rank0"]["sync_grads"] == {"all_reduce": 1}
    assert os.path.isfile(os.path.join(ck, "cpfold_weights.pt"))
    # second run loads the checkpoint it wrote
    r2 = launch("cpfold.run", args, 2, timeout=180)
    assert r2.ok, r2.logs
    cfg = parse_prefixed(r2.logs[0], "cpfold-config: ")
    assert cfg["checkpoint_loaded"] is True


def test_run_rejects_non_square_grid():
    r = launch("cpfold.run", ["--n-token", "24", "--cp0", "2", "--cp1", "3", "--preset", "tiny"], 6,
               timeout=120)
    assert not r.ok
    assert any("unsupported CP grid 2x3" in log for log in r.logs)


def test_run_rejects_world_mismatch():
    r = launch("cpfold.run", ["--n-token", "24", "--cp0", "2", "--cp1", "2", "--preset", "tiny"], 2,
               timeout=120)
    assert not r.ok
    assert any("CP grid 2x2 needs 4 ranks, but the world size is 2" in log for log in r.logs)
