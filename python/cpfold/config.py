# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Model configuration and size presets.

``ModelConfig`` holds every size of the network.  The defaults are the
AlphaFold 3 / Boltz-1 sizes (c_s 384, c_z 128, 48 Pairformer blocks, ...);
``PRESETS`` adds small configurations for tests and quick GPU runs.
``RuntimeDefaults`` are the control-flow counts (recycles, diffusion steps,
samples) that a preset suggests; the entry points may override them.
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
from dataclasses import dataclass, field

NUM_RES_TYPES = 33      # residue/token vocabulary (Boltz: 20 aa + UNK + 4 RNA + 4 DNA + ... + gap)
NUM_ELEMENTS = 128      # element one-hot (index = atomic number)
NUM_NAME_CHARS = 64     # atom-name character vocabulary (ord(c) - 32)
ATOM_NAME_LEN = 4       # characters per atom name


@dataclass
class ModelConfig:
    # --- trunk (AF3 / Boltz defaults) -------------------------------------
    c_s: int = 384                  # single representation channels
    c_z: int = 128                  # pair representation channels
    pairformer_blocks: int = 48     # Pairformer trunk depth
    tri_mul_hidden: int = 128       # TriangleMultiplication hidden channels
    tri_att_heads: int = 4          # TriangleAttention heads
    tri_att_head_dim: int = 32      # TriangleAttention channels per head
    single_att_heads: int = 16      # AttentionPairBias heads (head dim c_s / heads)
    transition_n: int = 4           # Transition expansion factor
    relpos_r_max: int = 32          # relative residue/token index clip
    relpos_s_max: int = 2           # relative chain (sym) index clip
    # --- MSA module ---------------------------------------------------------
    c_m: int = 64
    msa_blocks: int = 4
    msa_heads: int = 8              # MSAPairWeightedAveraging heads
    msa_head_dim: int = 8
    c_opm: int = 32                 # OuterProductMean hidden channels
    # --- atoms / diffusion ----------------------------------------------------
    c_atom: int = 128
    c_atompair: int = 16
    atom_heads: int = 4
    atom_encoder_blocks: int = 3
    atom_decoder_blocks: int = 3
    atom_window_queries: int = 32   # sequence-local atom attention: queries per window
    atom_window_keys: int = 128     # ... and keys per window
    c_token_diffusion: int = 768    # DiffusionTransformer width
    diffusion_blocks: int = 24
    diffusion_heads: int = 16
    sigma_data: float = 16.0
    # --- confidence -------------------------------------------------------------
    confidence_blocks: int = 4
    plddt_bins: int = 50
    pae_bins: int = 64
    pde_bins: int = 64
    distogram_bins: int = 64
    confidence_distance_bins: int = 39
    # --- numerics / memory ------------------------------------------------------
    init_gain: float = 0.1          # Glorot-uniform gain for every Linear
    chunk_elems: int = 1 << 28      # max elements of an attention-score / expanded chunk

    @property
    def c_s_inputs(self) -> int:
        # atom-encoder token features (c_s) + res_type + profile + deletion_mean
        return self.c_s + 2 * NUM_RES_TYPES + 1

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"unknown ModelConfig fields: {sorted(unknown)}")
        return cls(**d)


@dataclass
class RuntimeDefaults:
    recycles: int = 3               # extra trunk passes (total passes = recycles + 1)
    diffusion_steps: int = 200
    samples: int = 5
    msa_depth: int = 64


@dataclass
class Preset:
    model: ModelConfig
    runtime: RuntimeDefaults = field(default_factory=RuntimeDefaults)


def _tiny() -> Preset:
    return Preset(
        ModelConfig(
            c_s=32, c_z=16, pairformer_blocks=2, tri_mul_hidden=16, tri_att_heads=2,
            tri_att_head_dim=8, single_att_heads=4, transition_n=2, c_m=8, msa_blocks=1,
            msa_heads=2, msa_head_dim=4, c_opm=4, c_atom=16, c_atompair=8, atom_heads=2,
            atom_encoder_blocks=1, atom_decoder_blocks=1, c_token_diffusion=32,
            diffusion_blocks=1, diffusion_heads=2, confidence_blocks=1, plddt_bins=8,
            pae_bins=8, pde_bins=8, distogram_bins=8, confidence_distance_bins=8),
        RuntimeDefaults(recycles=1, diffusion_steps=3, samples=2, msa_depth=8))


def _small() -> Preset:
    return Preset(
        ModelConfig(
            c_s=128, c_z=64, pairformer_blocks=8, tri_mul_hidden=64, tri_att_heads=4,
            tri_att_head_dim=16, single_att_heads=8, c_m=32, msa_blocks=1, msa_heads=4,
            c_opm=16, c_atom=64, c_atompair=16, atom_heads=4, atom_encoder_blocks=1,
            atom_decoder_blocks=1, c_token_diffusion=256, diffusion_blocks=4,
            diffusion_heads=8, confidence_blocks=2),
        RuntimeDefaults(recycles=1, diffusion_steps=10, samples=2, msa_depth=32))


def _af3() -> Preset:
    return Preset(ModelConfig(), RuntimeDefaults())


PRESETS = {"tiny": _tiny, "small": _small, "af3": _af3}
DEFAULT_PRESET = "small"        # what cpfold.run uses without --preset
PRESETS_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "presets.json")


def presets_json() -> dict:
    """The presets' runtime defaults as plain data.  ``presets.json`` beside this file holds
    it (``python -m cpfold.config --write``); cpprof reads it instead of copying the numbers
    (e.g. the diffusion steps a probe run shortens)."""
    return {"default_preset": DEFAULT_PRESET,
            "presets": {name: dataclasses.asdict(make().runtime) for name, make in PRESETS.items()}}


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    text = json.dumps(presets_json(), indent=1, sort_keys=True) + "\n"
    if argv == ["--write"]:
        with open(PRESETS_JSON, "w") as fh:
            fh.write(text)
        print(f"wrote {PRESETS_JSON}")
        return 0
    if argv == ["--check"]:
        with open(PRESETS_JSON) as fh:
            if fh.read() != text:
                print(f"{PRESETS_JSON} is out of date: run python -m cpfold.config --write", file=sys.stderr)
                return 1
        return 0
    print(text, end="")
    return 0


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]()
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}") from None


if __name__ == "__main__":
    sys.exit(main())
