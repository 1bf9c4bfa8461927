# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Functions-trace spec for Nsight Systems: which cpfold functions to annotate.

``trace_spec.json`` maps each defining module (import path) to the
``Class.method`` / ``function`` names to trace, e.g.
{"cpfold.model.pairformer": ["TriangleMultiplicationOutgoing.forward", ...]}.
It lists every nn.Module class of cpfold whose class body defines ``forward``
(each is a distinct function object, so ranges are named apart), a few
non-forward stages, and the CP communication kernels' Python entry points.

    python -m cpfold.trace_spec --check            # verify every entry resolves
    python -m cpfold.trace_spec --write            # regenerate trace_spec.json
    python -m cpfold.trace_spec --nsys OUT.json    # nsys --python-functions-trace format
"""
from __future__ import annotations

import importlib
import inspect
import json
import os
import sys

SPEC_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trace_spec.json")

MODEL_MODULES = ("cpfold.model.common", "cpfold.model.embedder", "cpfold.model.atom_attention",
                 "cpfold.model.msa", "cpfold.model.pairformer", "cpfold.model.diffusion",
                 "cpfold.model.confidence", "cpfold.model.fold", "cpfold.wrapper")
# tiny helpers called thousands of times per run: ranges would cost more than they tell
SKIP_CLASSES = ("AdaLN", "FourierEmbedding", "PairBiasProjection")
EXTRA_METHODS = {
    "cpfold.model.fold": ["CPFoldModel.trunk", "CPFoldModel.training_loss"],
    "cpfold.model.diffusion": ["DiffusionModule.prepare", "DiffusionConditioning.pair_conditioning",
                               "EDMSampler.sample"],
    "cpfold.model.atom_attention": ["AtomAttentionEncoder.conditioning"],
    "cpfold.wrapper": ["ContextParallel.training_loss", "ContextParallel.sync_grads"],
    "cpfold.cp.cannon": ["cannon_matmul", "ring_rows_matmul"],
    "cpfold.cp.comm": ["all_gather_cat", "reduce_scatter_cat", "batch_p2p", "broadcast_ints"],
}


def build_spec() -> dict:
    import torch.nn as nn
    spec = {}
    for modname in MODEL_MODULES:
        mod = importlib.import_module(modname)
        names = []
        for cname, cls in inspect.getmembers(mod, inspect.isclass):
            if cname in SKIP_CLASSES:
                continue
            if cls.__module__ == modname and issubclass(cls, nn.Module) and "forward" in cls.__dict__:
                names.append(f"{cname}.forward")
        names += EXTRA_METHODS.get(modname, [])
        spec[modname] = sorted(names)
    for modname in ("cpfold.cp.cannon", "cpfold.cp.comm"):
        spec[modname] = sorted(EXTRA_METHODS[modname])
    return spec


def resolve(modname: str, name: str):
    obj = importlib.import_module(modname)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def check(spec: dict) -> list:
    """Problems found (empty list = every entry resolves to a function)."""
    problems = []
    for modname, names in spec.items():
        for name in names:
            try:
                obj = resolve(modname, name)
            except (ImportError, AttributeError) as e:
                problems.append(f"{modname}:{name}: {e}")
                continue
            if not callable(obj):
                problems.append(f"{modname}:{name}: not callable")
            if "." in name:
                cls_name, meth = name.split(".", 1)
                cls = resolve(modname, cls_name)
                if meth not in cls.__dict__:
                    problems.append(f"{modname}:{name}: method inherited, not defined by the class")
    return problems


def to_nsys(spec: dict, domain: str = "cpfold") -> list:
    return [{"domain": domain, "module": m, "functions": f} for m, f in spec.items()]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--write" in argv:
        with open(SPEC_PATH, "w") as fh:
            json.dump(build_spec(), fh, indent=1, sort_keys=True)
            fh.write("\n")
        print(f"wrote {SPEC_PATH}")
        return 0
    with open(SPEC_PATH) as fh:
        spec = json.load(fh)
    if "--nsys" in argv:
        out = argv[argv.index("--nsys") + 1]
        with open(out, "w") as fh:
            json.dump(to_nsys(spec), fh, indent=1)
        print(f"wrote {out}")
        return 0
    problems = check(spec)
    for p in problems:
        print(p)
    print(f"{sum(len(v) for v in spec.values())} entries, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
