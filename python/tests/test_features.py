# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Input contract: the generator produces valid inputs; the validator names each error."""
import re

import pytest
import torch

from cpfold.features import (INVENTORY, InputValidationError, make_inputs, pad_tokens,
                             validate_inputs)


@pytest.mark.parametrize("n", [1, 7, 64, 130])
def test_generator_is_valid_for_any_n(n):
    f = make_inputs(n, msa_depth=4, seed=n)
    dims = validate_inputs(f)
    assert dims["N"] == n and dims["n_valid_tokens"] == n
    assert dims["A"] % 32 == 0
    assert 6 <= dims["n_valid_atoms"] / n <= 14          # about 10 atoms per token


def test_generator_padding_and_chains():
    f = make_inputs(50, n_valid=40, n_chains=2, seed=3)
    dims = validate_inputs(f)
    assert dims["n_valid_tokens"] == 40
    assert f["asym_id"][:40].unique().numel() == 2
    assert int(f["entity_id"][:40].max()) == 0 and int(f["sym_id"][:40].max()) == 1   # homodimer
    assert validate_inputs(pad_tokens(f, 64))["N"] == 64


def test_inventory_covers_generator():
    f = make_inputs(8)
    assert set(f) == {s.name for s in INVENTORY}


def _bad(mutate, n=16):
    f = make_inputs(n, msa_depth=3, seed=1)
    mutate(f)
    with pytest.raises(InputValidationError) as e:
        validate_inputs(f)
    return str(e.value)


def _set(f, name, idx, value):
    f[name] = f[name].clone()
    f[name][idx] = value


CASES = [
    ("missing", lambda f: f.pop("msa_mask"), r"^missing feature\(s\): msa_mask$"),
    ("unknown", lambda f: f.update(foo=torch.zeros(1)), r"^unknown feature\(s\): foo$"),
    ("dtype", lambda f: f.update(atom_to_token=f["atom_to_token"].int()),
     r"^atom_to_token: expected dtype torch.int64, got torch.int32$"),
    ("dtype-float", lambda f: f.update(ref_pos=f["ref_pos"].double()),
     r"^ref_pos: expected dtype torch.float32, got torch.float64$"),
    ("rank", lambda f: f.update(res_type=f["res_type"][None]), r"^res_type: expected 2 dims"),
    ("shape", lambda f: f.update(asym_id=f["asym_id"][:-1]),
     r"^asym_id: expected shape \(16,\) \('N',\), got \(15,\)$"),
    ("nan", lambda f: _set(f, "ref_pos", (0, 0), float("nan")), r"^ref_pos: contains NaN or Inf$"),
    ("mask-values", lambda f: _set(f, "token_pad_mask", 3, 0.5),
     r"^token_pad_mask: values must be 0 or 1 \(found 0.5 at index \(3,\)\)$"),
    ("mask-prefix", lambda f: _set(f, "token_pad_mask", 5, 0.0),
     r"^token_pad_mask: valid tokens must form a prefix \(token 6 is valid after padding token 5\)$"),
    ("mask-empty", lambda f: f.update(token_pad_mask=torch.zeros(16)), r"^token_pad_mask: no valid token$"),
    ("atom-mask-prefix", lambda f: _set(f, "atom_pad_mask", 0, 0.0),
     r"^atom_pad_mask: valid atoms must form a prefix \(atom 1 is valid after padding atom 0\)$"),
    ("a2t-range", lambda f: _set(f, "atom_to_token", 2, 99),
     r"^atom_to_token: atom 2 maps to token 99, outside \[0, 16\)$"),
    ("a2t-negative", lambda f: _set(f, "atom_to_token", 2, -1),
     r"^atom_to_token: atom 2 maps to token -1, outside \[0, 16\)$"),
    ("a2t-start", lambda f: _set(f, "atom_to_token", 0, 1),
     r"^atom_to_token: first valid atom must map to token 0, got 1$"),
    ("a2t-monotone", lambda f: _set(f, "atom_to_token", 20, 0),
     r"^atom_to_token: not monotone: atom 20 maps to token 0 after atom 19 mapped to token \d+$"),
    ("a2t-contiguous", lambda f: f.update(atom_to_token=torch.where(
        f["atom_to_token"] >= 3, f["atom_to_token"] + 1, f["atom_to_token"]).clamp(max=15)),
     r"^atom_to_token: tokens not contiguous: atom \d+ jumps from token 2 to token 4$"),
    ("res-onehot", lambda f: _set(f, "res_type", (4, 0), 1.0) if f["res_type"][4, 0] == 0
     else _set(f, "res_type", (4, 1), 1.0), r"^res_type: row \(4,\) is not one-hot \(sums to 2.0\)$"),
    ("msa-mask-pad", None, r"^msa_mask: must be 0 at padding tokens \(row 0, token 12\)$"),
    ("deletion", lambda f: _set(f, "deletion_value", (1, 1), 1.5), r"^deletion_value: values must lie in \[0, 1\)$"),
    ("token-index", lambda f: _set(f, "token_index", 5, 0),
     r"^token_index: must be strictly increasing over valid tokens \(token 5\)$"),
]


@pytest.mark.parametrize("name,mutate,pattern", CASES, ids=[c[0] for c in CASES])
def test_validator_messages(name, mutate, pattern):
    if name == "msa-mask-pad":
        f = make_inputs(16, n_valid=12, msa_depth=3, seed=1)
        _set(f, "msa_mask", (0, 12), 1.0)
        with pytest.raises(InputValidationError) as e:
            validate_inputs(f)
        msg = str(e.value)
    else:
        msg = _bad(mutate)
    assert re.search(pattern, msg), msg


def test_valid_token_without_atoms():
    f = make_inputs(16, seed=1)
    a2t = f["atom_to_token"].clone()
    n = int(f["atom_pad_mask"].sum())
    a2t[:n] = a2t[:n].clamp(max=14)          # token 15 loses its atoms
    f["atom_to_token"] = a2t
    with pytest.raises(InputValidationError, match=r"^atom_to_token: token 15 has no atoms \(valid tokens: 16\)$"):
        validate_inputs(f)


def test_atom_on_padding_token():
    f = make_inputs(16, n_valid=15, seed=1)
    a2t = f["atom_to_token"].clone()
    n = int(f["atom_pad_mask"].sum())
    a2t[n - 1] = 15
    f["atom_to_token"] = a2t
    with pytest.raises(InputValidationError, match=rf"^atom_to_token: valid atom {n - 1} maps to padding token 15$"):
        validate_inputs(f)
