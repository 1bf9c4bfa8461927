# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Input feature contract: inventory, random generator, validator.

All features are *unbatched* tensors (the model adds a batch dimension of 1).
Symbolic dimensions: N = tokens (padded), A = atoms (padded), S = MSA rows.

Padding rules (checked by :func:`validate_inputs`):
  * valid tokens form a prefix of the token axis (``token_pad_mask`` = 1...1 0...0),
    valid atoms form a prefix of the atom axis;
  * valid atoms map to valid tokens through ``atom_to_token``; over valid atoms the
    map starts at token 0, is non-decreasing and never skips a token (tokens are
    contiguous), and every valid token owns at least one atom;
  * padding atoms may map to any in-range token (0 by convention) and are ignored.

Why cpfold does not use the workload kit's input contract (``cpprof_workload``:
``load_contract`` / ``validate_inputs`` / ``synthetic_inputs``, docs/workload-kit.md) although
it uses the kit's seeding, control counts and iteration marks: the contract (schema
``cpprof.contract/1``) has no notion of padding, and cpfold's inputs are padded.

  * one-hot features (``res_type``, ``msa``, ``ref_element``, ``ref_atom_name_chars``) have
    all-zero rows on padding tokens, atoms and MSA entries; the kit's ``one-hot`` kind wants
    exactly one 1 in every row, and its ``float`` kind would check nothing but finiteness;
  * ``atom_to_token`` maps padding atoms to token 0 after the valid atoms, and padding tokens
    own no atom; the kit's ``atom_to_token`` kind wants the whole axis sorted and every token
    owning an atom;
  * the prefix rules of the masks, ``msa_mask`` being 0 on padding tokens, the id rules checked
    on valid tokens only, ``deletion_value`` in [0, 1) and the optional ``atom_coords`` have no
    counterpart in the contract; the atom count is drawn per token (padded to a multiple of 32),
    not an expression of N_token;
  * ``synthetic_inputs`` would draw different (and structureless) inputs than
    :func:`make_inputs`, whose chains, MSA and coordinates the model's numerics depend on.

So :func:`make_inputs` and :func:`validate_inputs` below stay cpfold's own; a test
(python/tests/test_cpfold_kit.py) keeps these reasons true: the kit's ``validate_inputs`` rejects
cpfold's valid padded inputs when they are declared with the kit's kinds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import torch

from .config import ATOM_NAME_LEN, NUM_ELEMENTS, NUM_NAME_CHARS, NUM_RES_TYPES

GAP_INDEX = NUM_RES_TYPES - 1      # MSA gap symbol
NUM_AMINO_ACIDS = 20


@dataclass(frozen=True)
class FeatureSpec:
    name: str
    shape: Tuple            # ints or symbolic dims "N", "A", "S"
    dtype: torch.dtype
    level: str              # token | atom | msa | target
    meaning: str
    required: bool = True


INVENTORY = (
    # ---- token level --------------------------------------------------------
    FeatureSpec("res_type", ("N", NUM_RES_TYPES), torch.float32, "token",
                "residue/token type one-hot (33 classes; 0-19 amino acids, 20 UNK, "
                "21-30 nucleotides, 31 reserved, 32 gap); all-zero rows allowed for padding"),
    FeatureSpec("token_index", ("N",), torch.int64, "token",
                "global token index, strictly increasing over valid tokens"),
    FeatureSpec("residue_index", ("N",), torch.int64, "token",
                "residue number within its chain (restarts at 0 per chain)"),
    FeatureSpec("asym_id", ("N",), torch.int64, "token", "chain id (unique per chain)"),
    FeatureSpec("entity_id", ("N",), torch.int64, "token",
                "entity id (chains with identical sequence share it)"),
    FeatureSpec("sym_id", ("N",), torch.int64, "token",
                "copy number of the chain within its entity"),
    FeatureSpec("token_pad_mask", ("N",), torch.float32, "token",
                "1 for valid tokens, 0 for padding (valid tokens are a prefix)"),
    FeatureSpec("profile", ("N", NUM_RES_TYPES), torch.float32, "token",
                "MSA residue-type distribution per column"),
    FeatureSpec("deletion_mean", ("N",), torch.float32, "token",
                "mean MSA deletion count per column"),
    # ---- atom level ----------------------------------------------------------
    FeatureSpec("ref_pos", ("A", 3), torch.float32, "atom",
                "reference conformer position (Angstrom, residue-local frame)"),
    FeatureSpec("ref_element", ("A", NUM_ELEMENTS), torch.float32, "atom",
                "element one-hot (index = atomic number)"),
    FeatureSpec("ref_charge", ("A",), torch.float32, "atom", "formal charge"),
    FeatureSpec("ref_atom_name_chars", ("A", ATOM_NAME_LEN, NUM_NAME_CHARS), torch.float32,
                "atom", "atom-name characters, one-hot of ord(c) - 32, 4 characters"),
    FeatureSpec("atom_to_token", ("A",), torch.int64, "atom",
                "index of the token that owns the atom (see padding rules)"),
    FeatureSpec("atom_pad_mask", ("A",), torch.float32, "atom",
                "1 for valid atoms, 0 for padding (valid atoms are a prefix)"),
    # ---- MSA -----------------------------------------------------------------
    FeatureSpec("msa", ("S", "N", NUM_RES_TYPES), torch.float32, "msa",
                "MSA rows, residue-type one-hot (row 0 is the query)"),
    FeatureSpec("has_deletion", ("S", "N"), torch.float32, "msa",
                "1 where the MSA row has a deletion left of the column"),
    FeatureSpec("deletion_value", ("S", "N"), torch.float32, "msa",
                "2/pi * arctan(deletions / 3), in [0, 1)"),
    FeatureSpec("msa_mask", ("S", "N"), torch.float32, "msa",
                "1 for valid MSA entries, 0 elsewhere (0 on padding tokens)"),
    # ---- training target (optional) ------------------------------------------
    FeatureSpec("atom_coords", ("A", 3), torch.float32, "target",
                "ground-truth atom coordinates (Angstrom), used by --mode train",
                required=False),
)

SPECS = {spec.name: spec for spec in INVENTORY}


class InputValidationError(ValueError):
    """Raised by :func:`validate_inputs` with a message naming the feature."""


def _fail(msg: str):
    raise InputValidationError(msg)


def _check_binary(name, t):
    bad = ~((t == 0) | (t == 1))
    if bool(bad.any()):
        idx = tuple(int(i) for i in bad.nonzero()[0])
        _fail(f"{name}: values must be 0 or 1 (found {float(t[idx])} at index {idx})")


def _check_prefix(name, mask, what):
    valid = mask > 0
    n_valid = int(valid.sum())
    if n_valid == 0:
        _fail(f"{name}: no valid {what}")
    if not bool(valid[:n_valid].all()):
        first_pad = int((~valid).nonzero()[0])
        later = int(valid[first_pad:].nonzero()[0]) + first_pad
        _fail(f"{name}: valid {what}s must form a prefix ({what} {later} is valid "
              f"after padding {what} {first_pad})")
    return n_valid


def _check_one_hot(name, t, rows_mask):
    """Rows (over the last dim) selected by rows_mask must be exactly one-hot."""
    _check_binary(name, t)
    sums = t.sum(-1)
    bad = (rows_mask > 0) & (sums != 1)
    if bool(bad.any()):
        idx = tuple(int(i) for i in bad.nonzero()[0])
        _fail(f"{name}: row {idx} is not one-hot (sums to {float(sums[idx])})")


def validate_inputs(feats: Dict[str, torch.Tensor]) -> Dict[str, int]:
    """Check the feature dict against the contract; return {"N", "A", "S", ...}.

    Raises InputValidationError with a message that names the offending feature.
    """
    missing = [s.name for s in INVENTORY if s.required and s.name not in feats]
    if missing:
        _fail(f"missing feature(s): {', '.join(missing)}")
    unknown = sorted(set(feats) - set(SPECS))
    if unknown:
        _fail(f"unknown feature(s): {', '.join(unknown)}")
    # dtypes and ranks first, then resolve the symbolic dims
    for name, t in feats.items():
        spec = SPECS[name]
        if not isinstance(t, torch.Tensor):
            _fail(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
        if t.dtype != spec.dtype:
            _fail(f"{name}: expected dtype {spec.dtype}, got {t.dtype}")
        if t.dim() != len(spec.shape):
            _fail(f"{name}: expected {len(spec.shape)} dims {spec.shape}, got shape {tuple(t.shape)}")
    dims = {"N": feats["res_type"].shape[0], "A": feats["ref_pos"].shape[0],
            "S": feats["msa"].shape[0]}
    for name, t in feats.items():
        spec = SPECS[name]
        want = tuple(dims[d] if isinstance(d, str) else d for d in spec.shape)
        if tuple(t.shape) != want:
            _fail(f"{name}: expected shape {want} {spec.shape}, got {tuple(t.shape)}")
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            _fail(f"{name}: contains NaN or Inf")
    N, A = dims["N"], dims["A"]
    if dims["S"] < 1:
        _fail("msa: needs at least one row (the query)")

    # ---- masks -------------------------------------------------------------
    tok_mask, atom_mask = feats["token_pad_mask"], feats["atom_pad_mask"]
    _check_binary("token_pad_mask", tok_mask)
    _check_binary("atom_pad_mask", atom_mask)
    n_tok = _check_prefix("token_pad_mask", tok_mask, "token")
    n_atom = _check_prefix("atom_pad_mask", atom_mask, "atom")

    # ---- atom_to_token -----------------------------------------------------
    a2t = feats["atom_to_token"]
    out = (a2t < 0) | (a2t >= N)
    if bool(out.any()):
        l = int(out.nonzero()[0])
        _fail(f"atom_to_token: atom {l} maps to token {int(a2t[l])}, outside [0, {N})")
    v = a2t[:n_atom]
    if int(v[0]) != 0:
        _fail(f"atom_to_token: first valid atom must map to token 0, got {int(v[0])}")
    step = v[1:] - v[:-1]
    if bool((step < 0).any()):
        l = int((step < 0).nonzero()[0]) + 1
        _fail(f"atom_to_token: not monotone: atom {l} maps to token {int(v[l])} after "
              f"atom {l - 1} mapped to token {int(v[l - 1])}")
    if bool((step > 1).any()):
        l = int((step > 1).nonzero()[0]) + 1
        _fail(f"atom_to_token: tokens not contiguous: atom {l} jumps from token "
              f"{int(v[l - 1])} to token {int(v[l])}")
    last = int(v[-1])
    if last >= n_tok:
        l = int((v >= n_tok).nonzero()[0])
        _fail(f"atom_to_token: valid atom {l} maps to padding token {int(v[l])}")
    if last != n_tok - 1:
        _fail(f"atom_to_token: token {last + 1} has no atoms (valid tokens: {n_tok})")

    # ---- one-hots and ids --------------------------------------------------
    _check_one_hot("res_type", feats["res_type"], tok_mask)
    _check_one_hot("ref_element", feats["ref_element"], atom_mask)
    _check_one_hot("ref_atom_name_chars", feats["ref_atom_name_chars"],
                   atom_mask[:, None].expand(A, ATOM_NAME_LEN))
    msa_mask = feats["msa_mask"]
    _check_binary("msa_mask", msa_mask)
    pad_cols = (msa_mask[:, n_tok:] > 0)
    if bool(pad_cols.any()):
        s, t = (int(i) for i in pad_cols.nonzero()[0])
        _fail(f"msa_mask: must be 0 at padding tokens (row {s}, token {t + n_tok})")
    _check_one_hot("msa", feats["msa"], msa_mask)
    _check_binary("has_deletion", feats["has_deletion"])
    dv = feats["deletion_value"]
    if bool(((dv < 0) | (dv >= 1)).any()):
        _fail("deletion_value: values must lie in [0, 1)")
    for name in ("asym_id", "entity_id", "sym_id", "residue_index", "token_index"):
        if bool((feats[name][:n_tok] < 0).any()):
            _fail(f"{name}: negative id on a valid token")
    ti = feats["token_index"][:n_tok]
    if n_tok > 1 and bool((ti[1:] <= ti[:-1]).any()):
        t = int((ti[1:] <= ti[:-1]).nonzero()[0]) + 1
        _fail(f"token_index: must be strictly increasing over valid tokens (token {t})")
    return {"N": N, "A": A, "S": dims["S"], "n_valid_tokens": n_tok, "n_valid_atoms": n_atom}


# ---------------------------------------------------------------------------
# generator
# ---------------------------------------------------------------------------
_ELEMENTS = (6, 7, 8, 16)            # C, N, O, S
_ATOM_NAMES = ("N", "CA", "C", "O", "CB", "CG", "CD", "CE", "NZ", "OG", "SD", "CZ", "NE")


def _name_one_hot(name: str) -> torch.Tensor:
    t = torch.zeros(ATOM_NAME_LEN, NUM_NAME_CHARS)
    for i, ch in enumerate(name.ljust(ATOM_NAME_LEN)[:ATOM_NAME_LEN]):
        t[i, ord(ch) - 32] = 1.0
    return t


def make_inputs(n_token: int, *, n_valid: Optional[int] = None, atoms_per_token: int = 10,
                msa_depth: int = 16, n_chains: Optional[int] = None, seed: int = 0,
                atom_multiple: int = 32) -> Dict[str, torch.Tensor]:
    """Random features that satisfy the contract, for any ``n_token`` >= 1.

    ``n_valid`` (default ``n_token``) tokens are valid, the rest are padding.
    Each valid token gets a random number of atoms averaging ``atoms_per_token``;
    the atom axis is padded to a multiple of ``atom_multiple``.
    Deterministic in ``seed`` (independent of the global RNG).
    """
    if n_token < 1:
        raise ValueError("n_token must be >= 1")
    n_valid = n_token if n_valid is None else n_valid
    if not 1 <= n_valid <= n_token:
        raise ValueError(f"n_valid must be in [1, {n_token}]")
    g = torch.Generator().manual_seed(seed)
    N, V = n_token, n_valid

    # chains: equal-length contiguous chunks; odd chains copy the previous
    # sequence (homo-dimer) so that entity/sym ids are exercised.
    if n_chains is None:
        n_chains = 1 if V < 32 else 2
    n_chains = max(1, min(n_chains, V))
    bounds = [round(i * V / n_chains) for i in range(n_chains + 1)]
    aa = torch.randint(0, NUM_AMINO_ACIDS, (V,), generator=g)
    asym = torch.zeros(N, dtype=torch.int64)
    entity = torch.zeros(N, dtype=torch.int64)
    sym = torch.zeros(N, dtype=torch.int64)
    resid = torch.zeros(N, dtype=torch.int64)
    ent = -1
    for c in range(n_chains):
        lo, hi = bounds[c], bounds[c + 1]
        prev_len = bounds[c] - bounds[c - 1] if c > 0 else -1
        homo = c % 2 == 1 and prev_len == hi - lo
        if homo:
            aa[lo:hi] = aa[bounds[c - 1]:lo]
            sym[lo:hi] = 1
        else:
            ent += 1
        asym[lo:hi] = c
        entity[lo:hi] = ent
        resid[lo:hi] = torch.arange(hi - lo)
    tok_mask = torch.zeros(N)
    tok_mask[:V] = 1.0
    res_type = torch.zeros(N, NUM_RES_TYPES)
    res_type[torch.arange(V), aa] = 1.0

    # atoms
    spread = max(0, min(4, atoms_per_token - 1))
    counts = torch.randint(atoms_per_token - spread, atoms_per_token + spread + 1, (V,), generator=g)
    n_atom_valid = int(counts.sum())
    A = int(math.ceil(n_atom_valid / atom_multiple) * atom_multiple)
    a2t = torch.zeros(A, dtype=torch.int64)
    a2t[:n_atom_valid] = torch.repeat_interleave(torch.arange(V), counts)
    atom_mask = torch.zeros(A)
    atom_mask[:n_atom_valid] = 1.0
    ref_pos = torch.zeros(A, 3)
    ref_pos[:n_atom_valid] = 1.5 * torch.randn(n_atom_valid, 3, generator=g)
    elem_idx = torch.tensor(_ELEMENTS)[torch.randint(0, len(_ELEMENTS), (n_atom_valid,), generator=g)]
    ref_element = torch.zeros(A, NUM_ELEMENTS)
    ref_element[torch.arange(n_atom_valid), elem_idx] = 1.0
    ref_charge = torch.zeros(A)
    charged = torch.rand(n_atom_valid, generator=g) < 0.05
    ref_charge[:n_atom_valid][charged] = torch.where(
        torch.rand(int(charged.sum()), generator=g) < 0.5, -1.0, 1.0)
    names = torch.stack([_name_one_hot(n) for n in _ATOM_NAMES])
    name_idx = torch.randint(0, len(_ATOM_NAMES), (n_atom_valid,), generator=g)
    ref_names = torch.zeros(A, ATOM_NAME_LEN, NUM_NAME_CHARS)
    ref_names[:n_atom_valid] = names[name_idx]

    # ground truth: token centres on a 3.8 A random walk + residue-local offsets
    steps = torch.randn(V, 3, generator=g)
    steps = 3.8 * steps / steps.norm(dim=-1, keepdim=True).clamp_min(1e-6)
    centres = torch.cumsum(steps, 0)
    coords = torch.zeros(A, 3)
    coords[:n_atom_valid] = centres[a2t[:n_atom_valid]] + ref_pos[:n_atom_valid]

    # MSA: row 0 = query, other rows mutate ~15% of positions (some to gaps)
    S = max(1, msa_depth)
    msa_idx = aa[None].repeat(S, 1)
    if S > 1:
        mut = torch.rand(S - 1, V, generator=g) < 0.15
        repl = torch.randint(0, NUM_AMINO_ACIDS, (S - 1, V), generator=g)
        gap = torch.rand(S - 1, V, generator=g) < 0.2
        repl = torch.where(gap, torch.full_like(repl, GAP_INDEX), repl)
        msa_idx[1:] = torch.where(mut, repl, msa_idx[1:])
    msa = torch.zeros(S, N, NUM_RES_TYPES)
    msa[:, :V].scatter_(-1, msa_idx[..., None], 1.0)
    dels = torch.zeros(S, N)
    if S > 1:
        d = torch.randint(0, 4, (S - 1, V), generator=g).float()
        d = d * (torch.rand(S - 1, V, generator=g) < 0.1).float()
        dels[1:, :V] = d
    msa_mask = torch.zeros(S, N)
    msa_mask[:, :V] = 1.0
    profile = msa.sum(0) / S
    return {
        "res_type": res_type,
        "token_index": torch.arange(N, dtype=torch.int64),
        "residue_index": resid,
        "asym_id": asym,
        "entity_id": entity,
        "sym_id": sym,
        "token_pad_mask": tok_mask,
        "profile": profile,
        "deletion_mean": dels.mean(0),
        "ref_pos": ref_pos,
        "ref_element": ref_element,
        "ref_charge": ref_charge,
        "ref_atom_name_chars": ref_names,
        "atom_to_token": a2t,
        "atom_pad_mask": atom_mask,
        "msa": msa,
        "has_deletion": (dels > 0).float(),
        "deletion_value": (2.0 / math.pi) * torch.atan(dels / 3.0),
        "msa_mask": msa_mask,
        "atom_coords": coords,
    }


def pad_tokens(feats: Dict[str, torch.Tensor], n_total: int) -> Dict[str, torch.Tensor]:
    """Pad the token axis to ``n_total`` (padding tokens masked out; atoms unchanged)."""
    N = feats["res_type"].shape[0]
    if n_total == N:
        return dict(feats)
    if n_total < N:
        raise ValueError(f"cannot pad {N} tokens down to {n_total}")
    extra = n_total - N
    out = dict(feats)
    for name, t in feats.items():
        spec = SPECS[name]
        if "N" not in spec.shape:
            continue
        dim = spec.shape.index("N")
        shape = list(t.shape)
        shape[dim] = extra
        fill = torch.zeros(shape, dtype=t.dtype, device=t.device)
        if name == "token_index":
            fill = torch.arange(extra, dtype=t.dtype, device=t.device) + int(t.max()) + 1
        out[name] = torch.cat([t, fill], dim)
    return out


def cast_features(feats: Dict[str, torch.Tensor], device=None, dtype=None) -> Dict[str, torch.Tensor]:
    """Move to ``device``; cast floating features to ``dtype`` (ints untouched)."""
    out = {}
    for k, v in feats.items():
        if dtype is not None and v.is_floating_point():
            v = v.to(dtype)
        out[k] = v.to(device) if device is not None else v
    return out
