# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""cpprof_workload: what a user's own CP model needs to be profiled like cpfold (docs/workload-kit.md).

    import cpprof_workload as cw
    cw.seed_all(0)                                   # same weights and inputs on every rank
    cw.load_checkpoint_or_init(model, args.checkpoint)   # or cw.init_small_(model, gain=0.1)
    batch = cw.synthetic_inputs("contract.json", n_token=256, seed=0)
    cw.validate_inputs(batch, "contract.json")
    counts = cw.broadcast_counts(recycles=3, steps=20)  # rank 0's values everywhere
    for i, warm in cw.schedule(iters=3, warmup=1):
        with cw.iteration(i, warmup=warm), torch.no_grad():
            model(**batch)

Standard library and torch only. `cpprof scaffold` writes such a module for a model.
"""
from .contract import (KINDS, SCHEMA, ContractError, InputError, input_bytes, load_contract, resolve_dims,
                       synthetic_inputs, validate_inputs)
from .runtime import (ITER_TAG, PROBE_ITERS_ENV, broadcast_counts, init_small_, iteration, load_checkpoint_or_init,
                      parse_iteration_lines, rank, schedule, seed_all)

__all__ = [
    "KINDS", "SCHEMA", "ContractError", "InputError", "input_bytes", "load_contract", "resolve_dims",
    "synthetic_inputs", "validate_inputs", "ITER_TAG", "PROBE_ITERS_ENV", "broadcast_counts", "init_small_", "iteration",
    "load_checkpoint_or_init", "parse_iteration_lines", "rank", "schedule", "seed_all",
]
