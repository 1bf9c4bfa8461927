# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""The communication schedule cpfold issues, as data ("what to expect").

``build_expect()`` returns the document written to ``expect.json`` (run
``python -m cpfold.expect --write`` after changing the schedule; a test keeps
the file and this generator in sync, and another test checks the counts
against the collectives the code really issues).

Counted operations (one forward call of a module, on one rank):
  p2p_batch   one dist.batch_isend_irecv  -> one ncclDevKernel_SendRecv on NCCL
  p2p_ops     isend + irecv inside those batches
  all_gather  one all-gather              -> one ncclDevKernel_AllGather
  broadcast   one broadcast               -> one ncclDevKernel_Broadcast
"""
from __future__ import annotations

import json
import os
import sys

EXPECT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expect.json")

GRIDS = ((1, 1), (1, 2), (2, 1), (2, 2), (1, 4), (4, 1), (3, 3), (1, 8), (8, 1))

NCCL_KERNELS = {
    "p2p_batch": ["ncclDevKernel_SendRecv", "ncclKernel_SendRecv"],
    "all_gather": ["ncclDevKernel_AllGather", "ncclKernel_AllGather"],
    "broadcast": ["ncclDevKernel_Broadcast", "ncclKernel_Broadcast"],
    "all_reduce": ["ncclDevKernel_AllReduce", "ncclKernel_AllReduce"],
    "reduce_scatter": ["ncclDevKernel_ReduceScatter", "ncclKernel_ReduceScatter"],
}

# Variables of calls_per_forward: passes = recycles + 1.
CALLS_PER_FORWARD = {
    "trunk": {
        "TriangleMultiplicationOutgoing": {"passes*pairformer_blocks": 1, "passes*msa_blocks": 1},
        "TriangleMultiplicationIncoming": {"passes*pairformer_blocks": 1, "passes*msa_blocks": 1},
        "TriangleAttentionStartingNode": {"passes*pairformer_blocks": 1, "passes*msa_blocks": 1},
        "TriangleAttentionEndingNode": {"passes*pairformer_blocks": 1, "passes*msa_blocks": 1},
        "PairTransition": {"passes*pairformer_blocks": 1, "passes*msa_blocks": 1},
        "AttentionPairBias": {"passes*pairformer_blocks": 1},
        "SingleTransition": {"passes*pairformer_blocks": 1},
        "PairformerBlock": {"passes*pairformer_blocks": 1},
        "PairformerModule": {"passes": 1},
        "MSAModule": {"passes": 1},
        "MSABlock": {"passes*msa_blocks": 1},
        "OuterProductMean": {"passes*msa_blocks": 1},
        "MSAPairWeightedAveraging": {"passes*msa_blocks": 1},
        "InputEmbedder": {"1": 1},
        "trunk_output": {"1": 1},
        "control": {"1": 1},
    },
}
_e2e = {k: dict(v) for k, v in CALLS_PER_FORWARD["trunk"].items()}
for _k in ("TriangleMultiplicationOutgoing", "TriangleMultiplicationIncoming",
           "TriangleAttentionStartingNode", "TriangleAttentionEndingNode", "PairTransition",
           "AttentionPairBias", "SingleTransition", "PairformerBlock"):
    _e2e[_k]["samples*confidence_blocks"] = 1
_e2e["PairformerModule"]["samples"] = 1
_e2e.update({
    "ConfidenceModule": {"samples": 1},          # tag of its per-sample AllGather
    "DiffusionModule": {"diffusion_steps": 1},
    "EDMSampler": {"1": 1},
})
CALLS_PER_FORWARD["e2e"] = _e2e

# module ranges (Class.forward / Class.method) a functions-trace profile must show
MODULE_RANGES = {
    "trunk": ["CPFoldModel.forward", "CPFoldModel.trunk", "InputEmbedder.forward",
              "AtomAttentionEncoder.forward", "MSAModule.forward", "MSABlock.forward",
              "OuterProductMean.forward", "MSAPairWeightedAveraging.forward",
              "PairformerModule.forward", "PairformerBlock.forward",
              "TriangleMultiplicationOutgoing.forward", "TriangleMultiplicationIncoming.forward",
              "TriangleAttentionStartingNode.forward", "TriangleAttentionEndingNode.forward",
              "PairTransition.forward", "AttentionPairBias.forward", "SingleTransition.forward"],
}
MODULE_RANGES["e2e"] = MODULE_RANGES["trunk"] + [
    "DiffusionModule.prepare", "DiffusionModule.forward", "DiffusionConditioning.forward",
    "DiffusionTransformer.forward", "AtomAttentionDecoder.forward", "EDMSampler.sample",
    "ConfidenceModule.forward"]
MODULE_RANGES["train"] = [r for r in MODULE_RANGES["trunk"] if r != "CPFoldModel.forward"] + [
    "CPFoldModel.training_loss", "DiffusionModule.prepare", "DiffusionModule.forward",
    "DiffusionTransformer.forward", "AtomAttentionDecoder.forward", "ContextParallel.sync_grads"]
# present under CP only (distributed TriMul product)
MODULE_RANGES_CP = {"square": ["cannon_matmul"], "rows": ["ring_rows_matmul"],
                    "cols": ["ring_rows_matmul"], "local": []}


def grid_kind(cp0: int, cp1: int) -> str:
    if cp0 == cp1 == 1:
        return "local"
    if cp0 == cp1:
        return "square"
    if cp1 == 1:
        return "rows"
    if cp0 == 1:
        return "cols"
    raise ValueError(f"unsupported grid {cp0}x{cp1}")


def per_call_ops(cls: str, cp0: int, cp1: int, rank: int) -> dict:
    """NCCL-level operations of ONE forward call of ``cls`` on ``rank``."""
    kind = grid_kind(cp0, cp1)
    if kind == "local":
        return {}
    I, J = divmod(rank, cp1)
    q = max(cp0, cp1)
    out = {}

    def add(op, n):
        if n:
            out[op] = out.get(op, 0) + n

    if cls in ("TriangleMultiplicationOutgoing", "TriangleMultiplicationIncoming"):
        if kind == "square":
            origin = (I, J) == (0, 0)
            # initial skew (one batch unless every block is already in place) + q-1 shifts
            add("p2p_batch", (q - 1) + (0 if origin else 1))
            skew_l = I != 0 if cls.endswith("Outgoing") else not origin
            skew_r = not origin if cls.endswith("Outgoing") else J != 0
            add("p2p_ops", 4 * (q - 1) + 2 * skew_l + 2 * skew_r)
        else:                                    # 1-D ring
            add("p2p_batch", q - 1)
            add("p2p_ops", 2 * (q - 1))
    elif cls in ("TriangleAttentionStartingNode", "TriangleAttentionEndingNode"):
        add("all_gather", 1)
        if kind == "square":
            if I != J:                           # bias exchange with the transposed block
                add("p2p_batch", 1)
                add("p2p_ops", 2)
        else:
            attended_axis_sharded = (kind == "cols") == cls.endswith("StartingNode")
            if attended_axis_sharded:            # all-to-all reshard there and back
                add("p2p_batch", 2)
                add("p2p_ops", 4 * (q - 1))
    elif cls in ("AttentionPairBias", "MSAPairWeightedAveraging", "trunk_output", "ConfidenceModule"):
        add("all_gather", 1)
    elif cls == "control":
        add("broadcast", 1)
    return out


def _eval_term(term: str, v: dict) -> int:
    n = 1
    for name in term.split("*"):
        n *= 1 if name == "1" else int(v[name])
    return n


def expected_counts(mode: str, cp0: int, cp1: int, rank: int, **variables) -> dict:
    """{tag: {op: n}} for one forward of ``mode`` ('trunk' | 'e2e') on ``rank``."""
    out = {}
    for cls, terms in CALLS_PER_FORWARD[mode].items():
        calls = sum(c * _eval_term(t, variables) for t, c in terms.items())
        for op, n in per_call_ops(cls, cp0, cp1, rank).items():
            if n * calls:
                out.setdefault(cls, {})[op] = n * calls
    return out


def build_expect() -> dict:
    per_call = {}
    classes = sorted({c for m in CALLS_PER_FORWARD.values() for c in m})
    for cp0, cp1 in GRIDS:
        g = {}
        for rank in range(cp0 * cp1):
            g[str(rank)] = {c: per_call_ops(c, cp0, cp1, rank) for c in classes
                            if per_call_ops(c, cp0, cp1, rank)}
        per_call[f"{cp0}x{cp1}"] = {"kind": grid_kind(cp0, cp1), "per_rank": g}
    return {
        "schema": 1,
        "about": ("cpfold communication schedule and profile oracle. per_call[grid].per_rank[r][tag] "
                  "= NCCL operations of ONE forward call of that module on rank r "
                  "(rank = i * cp1 + j at grid position (i, j)); multiply by calls_per_forward"
                  "[mode][tag] (terms are products of the named variables; passes = recycles + 1). "
                  "Inference only; training adds the backward schedule (see README)."),
        "ops_to_nccl_kernels": NCCL_KERNELS,
        "variables": ["passes", "pairformer_blocks", "msa_blocks", "confidence_blocks", "samples",
                      "diffusion_steps"],
        "calls_per_forward": CALLS_PER_FORWARD,
        "per_call": per_call,
        "formulas": {
            "TriangleMultiplication (q x q, Cannon)":
                "SendRecv batches = (q - 1) shifts + 1 skew (none on rank 0); each shift = 2 isend + 2 irecv",
            "TriangleMultiplication (1 x q / q x 1, ring)": "SendRecv batches = q - 1; each 1 isend + 1 irecv",
            "TriangleAttention (q x q)": "1 AllGather over the row (start) / column (end) peers + "
                                        "1 SendRecv bias exchange on off-diagonal ranks",
            "TriangleAttention (1-D)": "1 AllGather of the bias; if the attended axis is the sharded one "
                                      "(start on 1 x q, end on q x 1) + 2 SendRecv all-to-all reshards",
            "AttentionPairBias / MSAPairWeightedAveraging": "1 AllGather of the pair bias (world)",
            "boundaries": "1 AllGather of the trunk output (trunk -> diffusion/confidence); "
                          "1 AllGather per confidence sample; 1 Broadcast of the control counts per forward",
            "cpfold.run per iteration": "1 barrier (AllReduce on NCCL) before each iteration",
        },
        "module_ranges": MODULE_RANGES,
        "module_ranges_cp": MODULE_RANGES_CP,
        "kernel_hints": {
            "TriangleMultiplication": "q batched GEMMs per call under q x q CP (1 without CP, q per ring); "
                                      "look for gemm/cutlass/nvjet kernels overlapping ncclDevKernel_SendRecv",
            "TriangleAttention": "fused attention (SDPA: fmha / efficient_attention / flash) per row chunk",
            "Transitions": "GEMMs + SiLU/mul elementwise, no communication",
        },
    }


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    doc = json.dumps(build_expect(), indent=1, sort_keys=True) + "\n"
    if "--write" in argv:
        with open(EXPECT_PATH, "w") as fh:
            fh.write(doc)
        print(f"wrote {EXPECT_PATH}")
    else:
        sys.stdout.write(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
