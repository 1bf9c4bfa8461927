# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""The input contract of a user's model: what each input tensor is, declared in JSON, so that
random but *valid* inputs can be made (``synthetic_inputs``) and a batch checked
(``validate_inputs``).

A contract (schema ``cpprof.contract/1``; docs/workload-kit.md)::

    {"schema": "cpprof.contract/1",
     "dims": {"N_atom": "4*N_token", "N_msa": 16},
     "inputs": [
       {"name": "token_feat", "shape": ["N_token", 32], "dtype": "float32", "kind": "float"},
       {"name": "token_mask", "shape": ["N_token"], "dtype": "bool", "kind": "mask"},
       {"name": "restype", "shape": ["N_token", 21], "dtype": "float32", "kind": "one-hot"},
       {"name": "residue_index", "shape": ["N_token"], "dtype": "int64", "kind": "index",
        "high": "N_token"},
       {"name": "atom_to_token", "shape": ["N_atom"], "dtype": "int64", "kind": "atom_to_token"}]}

A shape entry is an integer or an expression of the dimensions (``N_token``, ``N_atom``,
``N_msa`` and any named in ``dims``) with + - * // and integers.
"""
from __future__ import annotations

import ast
import json
import os
from typing import Any, Dict, List, Mapping, Optional, Union

import torch

SCHEMA = "cpprof.contract/1"
KINDS = ("float", "index", "mask", "one-hot", "atom_to_token")
DEFAULT_DIMS = {"N_atom": "4*N_token", "N_msa": 16}
_DTYPES = {
    "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
    "float64": torch.float64, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool,
}
_FLOATS = ("float16", "bfloat16", "float32", "float64")
_INTS = ("int8", "int16", "int32", "int64", "uint8")


class ContractError(ValueError):
    """The contract itself is malformed (not a batch that breaks it)."""


class _UnknownName(ContractError):
    """An expression names a dimension not (yet) resolved."""


# Bounds on what a contract may ask for, checked before any tensor is made: sizes are 64-bit
# integers (as torch's are), an expression is short, the dims are few.
_MAX_INT = 2 ** 63 - 1
_MAX_EXPR_CHARS = 256
_MAX_DIMS = 256


class InputError(ValueError):
    """A batch breaks its contract; ``problems`` lists every broken rule, one sentence each."""

    def __init__(self, problems: List[str]):
        self.problems = list(problems)
        super().__init__("the inputs break their contract:\n  " + "\n  ".join(self.problems))


# ---- expressions of the dimensions -------------------------------------------------------

def _eval_dim(expr: Union[int, str], dims: Mapping[str, int], where: str) -> int:
    if isinstance(expr, bool):
        raise ContractError(f"{where}: {expr!r} is not a size")
    if isinstance(expr, int):
        if abs(expr) > _MAX_INT:
            raise ContractError(f"{where}: {expr} does not fit 64 bits")
        return expr
    if not isinstance(expr, str):
        raise ContractError(f"{where}: {expr!r} is not a size (an integer or an expression of "
                            f"{', '.join(sorted(dims))})")
    if len(expr) > _MAX_EXPR_CHARS:
        raise ContractError(f"{where}: an expression of {len(expr)} characters (at most {_MAX_EXPR_CHARS})")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise ContractError(f"{where}: cannot read {expr!r}: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise ContractError(f"{where}: cannot read {expr!r}: nested too deep") from None

    def fits(v):
        if abs(v) > _MAX_INT:
            raise ContractError(f"{where}: {expr!r} overflows 64 bits for these sizes")
        return v

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return fits(node.value)
        if isinstance(node, ast.Name):
            if node.id not in dims:
                raise _UnknownName(f"{where}: {expr!r} names {node.id!r}, which is not a dimension "
                                    f"(known: {', '.join(sorted(dims))}; add it to \"dims\")")
            return dims[node.id]
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Add):
                return fits(a + b)
            if isinstance(node.op, ast.Sub):
                return fits(a - b)
            if isinstance(node.op, ast.Mult):
                return fits(a * b)
            if b == 0:
                raise ContractError(f"{where}: {expr!r} divides by zero")
            return a // b
        raise ContractError(f"{where}: {expr!r}: only integers, dimension names and + - * // are allowed")

    try:
        return ev(tree)
    except RecursionError:
        raise ContractError(f"{where}: cannot read {expr!r}: nested too deep") from None


def resolve_dims(contract: Mapping[str, Any], n_token: int, **overrides: int) -> Dict[str, int]:
    """The sizes of N_token, N_atom, N_msa and the contract's own dims for this N_token."""
    dims: Dict[str, int] = {"N_token": _eval_dim(int(n_token), {}, "N_token")}
    spec = dict(DEFAULT_DIMS)
    spec.update(contract.get("dims", {}))
    if len(spec) > _MAX_DIMS:
        raise ContractError(f"\"dims\" names {len(spec)} dimensions (at most {_MAX_DIMS})")
    pending = dict(spec)
    for name, value in overrides.items():
        dims[name] = _eval_dim(int(value), {}, name)
        pending.pop(name, None)
    # dims may refer to each other in any order: resolve until nothing changes
    while pending:
        progressed = False
        for name in list(pending):
            try:
                dims[name] = _eval_dim(pending[name], dims, f"dims.{name}")
            except _UnknownName:
                continue
            del pending[name]
            progressed = True
        if not progressed:
            name = sorted(pending)[0]
            _eval_dim(pending[name], dims, f"dims.{name}")  # raises with the reason
    for name, v in dims.items():
        if v < 1:
            raise ContractError(f"dimension {name} = {v} for N_token={n_token}: sizes must be at least 1")
    return dims


# ---- the contract ---------------------------------------------------------------------------

def load_contract(contract: Union[str, os.PathLike, Mapping[str, Any]]) -> Dict[str, Any]:
    """The contract from a JSON file path or a dict, checked; raises ContractError saying what is wrong."""
    if isinstance(contract, (str, os.PathLike)):
        path = os.fspath(contract)
        if os.path.isdir(path):
            raise ContractError(f"the contract {path!r} is a folder: give the contract's JSON file")
        try:
            with open(path, encoding="utf-8") as fh:
                c = json.load(fh)
        except OSError as exc:
            raise ContractError(f"cannot read the contract {path!r}: {exc.strerror}") from None
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise ContractError(f"{path}: not JSON: {exc}") from None
    elif isinstance(contract, Mapping):
        c = dict(contract)
    else:
        raise ContractError(f"a contract is a JSON file's path or a dict, not {type(contract).__name__}")
    if not isinstance(c, dict):
        raise ContractError("a contract is a JSON object with an \"inputs\" list")
    if c.get("schema", SCHEMA) != SCHEMA:
        raise ContractError(f"schema {c.get('schema')!r}: this cpprof_workload reads {SCHEMA!r}")
    inputs = c.get("inputs")
    if not isinstance(inputs, list) or not inputs:
        raise ContractError("the contract has no \"inputs\" list (one object per input tensor)")
    if len(inputs) > _MAX_DIMS * 16:
        raise ContractError(f"the contract lists {len(inputs)} inputs (at most {_MAX_DIMS * 16})")
    if not isinstance(c.get("dims", {}), dict):
        raise ContractError("\"dims\" must be an object such as {\"N_atom\": \"4*N_token\"}")
    seen = set()
    for i, spec in enumerate(inputs):
        where = f"inputs[{i}]"
        if not isinstance(spec, dict):
            raise ContractError(f"{where}: an input is an object with name, shape, dtype and kind")
        name = spec.get("name")
        if not isinstance(name, str) or not name:
            raise ContractError(f"{where}: no \"name\"")
        where = f"input {name!r}"
        if name in seen:
            raise ContractError(f"{where}: named twice")
        seen.add(name)
        for key in ("shape", "dtype", "kind"):
            if key not in spec:
                raise ContractError(f"{where}: no {key!r}")
        if not isinstance(spec["kind"], str) or spec["kind"] not in KINDS:
            raise ContractError(f"{where}: kind {spec['kind']!r} is not one of {', '.join(KINDS)}")
        if not isinstance(spec["dtype"], str) or spec["dtype"] not in _DTYPES:
            raise ContractError(f"{where}: dtype {spec['dtype']!r} is not one of {', '.join(_DTYPES)}")
        if not isinstance(spec["shape"], list):
            raise ContractError(f"{where}: shape must be a list such as [\"N_token\", 32]")
        kind, dtype = spec["kind"], spec["dtype"]
        if kind == "float" and dtype not in _FLOATS:
            raise ContractError(f"{where}: kind float needs a floating dtype ({', '.join(_FLOATS)}), not {dtype}")
        if kind in ("index", "atom_to_token") and dtype not in _INTS:
            raise ContractError(f"{where}: kind {kind} needs an integer dtype ({', '.join(_INTS)}), not {dtype}")
        if kind == "one-hot" and not spec["shape"]:
            raise ContractError(f"{where}: a one-hot input needs a last axis (the classes)")
        if kind == "atom_to_token" and len(spec["shape"]) != 1:
            raise ContractError(f"{where}: atom_to_token is one axis, [\"N_atom\"]")
    dims = resolve_dims(c, 8)  # the dims' expressions read
    for spec in inputs:  # the shapes' expressions read
        for j, d in enumerate(spec["shape"]):
            _eval_dim(d, dims, f"input {spec['name']!r} shape[{j}]")
    return c


def _shape(spec, dims) -> List[int]:
    shape = [_eval_dim(d, dims, f"input {spec['name']!r} shape[{j}]") for j, d in enumerate(spec["shape"])]
    for j, v in enumerate(shape):
        if v < 0:
            raise ContractError(f"input {spec['name']!r} shape[{j}] = {v}: sizes must be at least 0")
    return shape


# Bytes per element while an input is made: its dtype's, or the float32/int64 it is made in first.
_MAKE_BYTES = {"float": 4, "index": 8, "mask": 4, "one-hot": 8, "atom_to_token": 8}


def input_bytes(contract, n_token: int, **dims: int) -> int:
    """The bytes the contract's inputs take while they are made for ``n_token`` tokens (each in the
    dtype it is made in first, float32 or int64, when that is wider than its own)."""
    c = load_contract(contract)
    d = resolve_dims(c, n_token, **dims)
    total = 0
    for spec in c["inputs"]:
        n = 1
        for v in _shape(spec, d):
            n *= v
        own = torch.empty((), dtype=_DTYPES[spec["dtype"]]).element_size()
        total += n * (own + _MAKE_BYTES[spec["kind"]])
    return total


def _memory_bytes(device) -> int:
    """What the inputs may take: the host's memory (they are made there), and the device's too."""
    limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    dev = torch.device(device) if device is not None else None
    if dev is not None and dev.type == "cuda" and torch.cuda.is_available():
        limit = min(limit, torch.cuda.get_device_properties(dev).total_memory)
    return limit


def _index_range(spec, dims):
    low = _eval_dim(spec.get("low", 0), dims, f"input {spec['name']!r} low")
    high = _eval_dim(spec.get("high", "N_token"), dims, f"input {spec['name']!r} high")
    return low, high


def _number(spec, key, default) -> float:
    v = spec.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or abs(v) == float("inf"):
        raise ContractError(f"input {spec['name']!r}: {key} {v!r} is not a finite number")
    return float(v)


# ---- synthetic inputs ---------------------------------------------------------------------

def _atom_to_token(n_atom: int, n_token: int, gen: torch.Generator) -> torch.Tensor:
    """Sorted token index per atom; every token gets an atom when there are enough atoms."""
    if n_atom >= n_token:
        extra = torch.randint(0, n_token, (n_atom - n_token,), generator=gen)
        owners = torch.cat([torch.arange(n_token), extra])
    else:
        owners = torch.randint(0, n_token, (n_atom,), generator=gen)
    return torch.sort(owners).values


def synthetic_inputs(contract, n_token: int, seed: int = 0, device=None, max_bytes: Optional[int] = None,
                     **dims: int) -> Dict[str, torch.Tensor]:
    """Random inputs that satisfy ``contract`` for ``n_token`` tokens; the same on every rank for
    the same seed (a private generator: the global RNG is left alone). ``dims`` overrides the
    contract's dimension sizes (``N_msa=32``). Inputs larger than ``max_bytes`` (default: the
    memory of the host, and of ``device``) are refused before any tensor is made."""
    c = load_contract(contract)
    d = resolve_dims(c, n_token, **dims)
    need, limit = input_bytes(c, n_token, **dims), (_memory_bytes(device) if max_bytes is None else max_bytes)
    if need > limit:
        raise ContractError(f"the inputs for N_token={n_token} take {need / 2**30:.1f} GiB while they are made, more "
                            f"than the {limit / 2**30:.1f} GiB of memory here: give a smaller --n-token or sizes")
    gen = torch.Generator().manual_seed(int(seed))
    out: Dict[str, torch.Tensor] = {}
    for spec in c["inputs"]:
        shape, kind, dtype = _shape(spec, d), spec["kind"], _DTYPES[spec["dtype"]]
        if kind == "float":
            t = torch.randn(shape, generator=gen) * _number(spec, "scale", 1.0)
        elif kind == "index":
            low, high = _index_range(spec, d)
            if high <= low or high - low > _MAX_INT:
                raise ContractError(f"input {spec['name']!r}: index range [{low}, {high}) is empty or wider than "
                                    "64 bits")
            t = torch.randint(low, high, shape, generator=gen)
        elif kind == "mask":
            frac = _number(spec, "valid_fraction", 1.0)
            t = torch.rand(shape, generator=gen) < frac
            if t.numel():
                t.view(-1)[0] = True  # at least one valid entry
        elif kind == "one-hot":
            classes = shape[-1] if shape else 0
            if classes < 1:
                raise ContractError(f"input {spec['name']!r}: a one-hot input needs at least one class, but its last "
                                    f"dimension is {classes} for N_token={n_token}")
            idx = torch.randint(0, classes, shape[:-1], generator=gen)
            t = torch.nn.functional.one_hot(idx, classes)
        else:  # atom_to_token
            t = _atom_to_token(shape[0], d["N_token"], gen)
        t = t.to(dtype)
        out[spec["name"]] = t.to(device) if device is not None else t
    return out


# ---- validation ---------------------------------------------------------------------------

def validate_inputs(batch: Mapping[str, Any], contract, n_token: Optional[int] = None, **dims: int) -> Dict[str, int]:
    """Checks ``batch`` (name -> tensor) against ``contract``; returns the dimension sizes.
    N_token is read from the batch when not given. Raises InputError listing every problem."""
    c = load_contract(contract)
    problems: List[str] = []
    specs = c["inputs"]
    for spec in specs:
        if spec["name"] not in batch:
            problems.append(f"input {spec['name']!r} is missing (the batch has: {', '.join(sorted(batch)) or 'nothing'})")
    extra = sorted(set(batch) - {s["name"] for s in specs})
    if extra:
        problems.append(f"inputs not in the contract: {', '.join(extra)} (add them to the contract, or leave them out)")
    if n_token is None:
        for spec in specs:
            t = batch.get(spec["name"])
            if isinstance(t, torch.Tensor) and "N_token" in spec["shape"]:
                axis = spec["shape"].index("N_token")
                if axis < t.dim():
                    n_token = int(t.shape[axis])
                    break
    if n_token is None:
        raise InputError(problems + ["cannot tell N_token: no input with an N_token axis is present"])
    d = resolve_dims(c, n_token, **dims)
    n_tok = d["N_token"]
    for spec in specs:
        name, kind = spec["name"], spec["kind"]
        t = batch.get(name)
        if name not in batch:
            continue
        if not isinstance(t, torch.Tensor):
            problems.append(f"input {name!r} is a {type(t).__name__}, not a tensor")
            continue
        want = _shape(spec, d)
        if list(t.shape) != want:
            problems.append(f"input {name!r}: shape {tuple(t.shape)}, but the contract says {spec['shape']} = "
                            f"{tuple(want)} for {', '.join(f'{k}={v}' for k, v in sorted(d.items()))}")
            continue
        want_dtype = _DTYPES[spec["dtype"]]
        if t.dtype != want_dtype:
            problems.append(f"input {name!r}: dtype {str(t.dtype).replace('torch.', '')}, but the contract says "
                            f"{spec['dtype']}")
            continue
        if t.numel() == 0:
            continue
        x = t.detach().cpu()
        if kind == "float":
            bad = int((~torch.isfinite(x.float())).sum())
            if bad:
                problems.append(f"input {name!r}: {bad} of {x.numel()} values are NaN or infinite")
        elif kind == "index":
            low, high = _index_range(spec, d)
            lo, hi = int(x.min()), int(x.max())
            if lo < low or hi >= high:
                problems.append(f"input {name!r}: indices run from {lo} to {hi}, outside [{low}, {high})")
        elif kind == "mask":
            v = x.to(torch.float64)
            if not bool(((v == 0) | (v == 1)).all()):
                problems.append(f"input {name!r}: a mask holds only 0 and 1 (found other values)")
            elif not bool(v.any()):
                problems.append(f"input {name!r}: the mask is all zero: nothing is valid")
        elif kind == "one-hot":
            v = x.to(torch.float64)
            binary = bool(((v == 0) | (v == 1)).all())
            sums = v.sum(-1)
            if not binary or not bool((sums == 1).all()):
                rows = int((sums != 1).sum()) if binary else "some"
                problems.append(f"input {name!r}: not one-hot along its last axis ({rows} rows do not hold "
                                f"exactly one 1)")
        else:  # atom_to_token
            lo, hi = int(x.min()), int(x.max())
            if lo < 0 or hi >= n_tok:
                problems.append(f"input {name!r}: token indices run from {lo} to {hi}, outside [0, N_token={n_tok})")
            elif x.numel() > 1 and not bool((x[1:] >= x[:-1]).all()):
                problems.append(f"input {name!r}: not sorted: the atoms of a token must be contiguous "
                                f"(atom_to_token non-decreasing)")
            elif x.numel() >= n_tok and int(torch.unique(x).numel()) != n_tok:
                missing = n_tok - int(torch.unique(x).numel())
                problems.append(f"input {name!r}: {missing} of {n_tok} tokens have no atom")
    if problems:
        raise InputError(problems)
    return d
