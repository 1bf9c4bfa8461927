# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Local checkpoints written and read by cpfold itself.

A checkpoint directory holds ``cpfold_config.json`` (the ModelConfig) and
``cpfold_weights.pt`` (the state dict, CPU tensors).

    python -m cpfold.checkpoint --preset small --out DIR [--seed 0]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Tuple

import torch

import cpprof_workload as cw

from .config import ModelConfig, get_preset

CONFIG_FILE = "cpfold_config.json"
WEIGHTS_FILE = "cpfold_weights.pt"


def has_checkpoint(directory: str) -> bool:
    return (os.path.isfile(os.path.join(directory, CONFIG_FILE))
            and os.path.isfile(os.path.join(directory, WEIGHTS_FILE)))


def save_checkpoint(model, directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, CONFIG_FILE), "w") as fh:
        json.dump(model.cfg.to_dict(), fh, indent=1, sort_keys=True)
    state = {k: v.detach().to("cpu", torch.float32) if v.is_floating_point() else v.detach().cpu()
             for k, v in model.state_dict().items()}
    torch.save(state, os.path.join(directory, WEIGHTS_FILE))


def load_checkpoint(directory: str) -> Tuple[ModelConfig, dict]:
    if not has_checkpoint(directory):
        raise FileNotFoundError(f"no cpfold checkpoint in {directory!r} "
                                f"(expected {CONFIG_FILE} and {WEIGHTS_FILE})")
    with open(os.path.join(directory, CONFIG_FILE)) as fh:
        cfg = ModelConfig.from_dict(json.load(fh))
    state = torch.load(os.path.join(directory, WEIGHTS_FILE), map_location="cpu")
    return cfg, state


def build_model(cfg: ModelConfig, checkpoint_dir: str = None):
    """Model from a checkpoint (its config wins) or fresh from ``cfg``."""
    from .model import CPFoldModel
    if checkpoint_dir and has_checkpoint(checkpoint_dir):
        cfg, state = load_checkpoint(checkpoint_dir)
        model = CPFoldModel(cfg)
        model.load_state_dict(state)
        return model, True
    return CPFoldModel(cfg), False


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m cpfold.checkpoint", allow_abbrev=False)
    p.add_argument("--preset", default="small")
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    from .model import CPFoldModel
    cw.seed_all(args.seed)          # the kit's seeding, as cpfold.run does
    model = CPFoldModel(get_preset(args.preset).model)
    save_checkpoint(model, args.out)
    n = sum(p.numel() for p in model.parameters())
    print(f"cpfold.checkpoint: wrote {args.preset} ({n} parameters) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
