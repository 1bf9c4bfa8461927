# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""cpprof_read: the cpprof readout (``cpprof report --format json``, schema ``cpprof.report/2``) in
Python, for notebooks and scripts.

    import cpprof_read
    r = cpprof_read.load("run.sqlite")          # runs `cpprof report --format json run.sqlite`
    r = cpprof_read.load("run.json")            # or reads a saved readout
    r.ranks[0].busy_ns, r.straggler_rank, r.modules[0].name
    frames = r.to_frames()                      # pandas DataFrames (pandas optional)
    frames["ranks"], frames["modules"], frames["comm_by_kind"], frames["collectives"], frames["iterations"]

Only the standard library is needed; ``to_frames()`` needs pandas (Debian: python3-pandas). Times are
integer nanoseconds, as in the JSON (docs/report-json.md describes every field); each typed object
keeps its whole JSON object in ``.raw`` for fields not lifted into attributes.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

__all__ = ["load", "loads", "Readout", "Rank", "Module", "Collective", "CollectiveRank", "Iteration",
           "SchemaError", "SCHEMA"]

SCHEMA = "cpprof.report/2"


class SchemaError(ValueError):
    """The JSON is not a cpprof readout this reader understands."""


@dataclass(frozen=True)
class Rank:
    rank: int
    device: int
    pid: int
    process: str
    span_ns: int
    busy_ns: int
    compute_only_ns: int
    comm_only_ns: int
    both_ns: int
    idle_ns: int
    comm_ns: int
    compute_ns: int
    wait_ns: int
    transfer_ns: int
    exposed_transfer_ns: int
    launch_gap_ns: int
    launch_bound: bool
    peak_mem_bytes: Optional[int]
    comm_by_kind: Dict[str, Dict[str, int]]
    raw: Dict[str, Any] = field(repr=False)

    @staticmethod
    def from_json(j: Dict[str, Any]) -> "Rank":
        return Rank(rank=j["rank"], device=j["device"], pid=j["pid"], process=j["process"], span_ns=j["span_ns"],
                    busy_ns=j["busy_ns"], compute_only_ns=j["compute_only_ns"], comm_only_ns=j["comm_only_ns"],
                    both_ns=j["both_ns"], idle_ns=j["idle_ns"], comm_ns=j["comm_ns"], compute_ns=j["compute_ns"],
                    wait_ns=j["wait_ns"], transfer_ns=j["transfer_ns"],
                    exposed_transfer_ns=j["exposed_transfer_ns"], launch_gap_ns=j["launch_gap_ns"],
                    launch_bound=j["launch_bound"], peak_mem_bytes=j.get("peak_mem_bytes"),
                    comm_by_kind=j.get("comm_by_kind", {}), raw=j)


@dataclass(frozen=True)
class Module:
    index: int
    name: str
    range: str
    parent: int            # index into Readout.modules; -1 for top-level rows
    depth: int
    group: bool
    cp_distributed: bool
    mean_busy_ns: int
    max_busy_ns: int
    straggler_rank: int    # -1: none
    path: str              # the names from the top-level row down, joined by '/'
    per_rank: List[Dict[str, Any]]
    raw: Dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class CollectiveRank:
    rank: int
    ops: int
    time_ns: int
    wait_ns: int
    transfer_ns: int
    exposed_transfer_ns: int
    last_arrivals: int
    caused_wait_ns: int
    raw: Dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class Collective:
    kind: str
    instances: int
    per_rank: List[CollectiveRank]
    raw: Dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class Iteration:
    index: int
    name: str
    start_ns: int
    end_ns: int
    warmup: bool
    in_window: bool

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


class Readout:
    """One cpprof readout. ``raw`` is the whole JSON document."""

    def __init__(self, doc: Dict[str, Any]):
        schema = doc.get("schema") if isinstance(doc, dict) else None
        if schema != SCHEMA:
            raise SchemaError(f"not a {SCHEMA} readout (schema: {schema!r}); make one with "
                              "'cpprof report RUN.sqlite --format json'")
        self.raw = doc
        self.ranks: List[Rank] = [Rank.from_json(r) for r in doc.get("per_rank", [])]
        self.modules: List[Module] = []
        rows = doc.get("modules", {}).get("rows", [])
        paths: List[str] = []
        for i, m in enumerate(rows):
            parent = m.get("parent", -1)
            paths.append(m["name"] if parent < 0 or parent >= i else paths[parent] + "/" + m["name"])
            self.modules.append(Module(index=i, name=m["name"], range=m.get("range", ""), parent=parent,
                                       depth=m.get("depth", 0), group=m.get("group", False),
                                       cp_distributed=m.get("cp_distributed", False),
                                       mean_busy_ns=m.get("mean_busy_ns", 0), max_busy_ns=m.get("max_busy_ns", 0),
                                       straggler_rank=m.get("straggler_rank", -1), path=paths[-1],
                                       per_rank=m.get("per_rank", []), raw=m))
        imb = doc.get("imbalance", {})
        self.collectives: List[Collective] = []
        for c in imb.get("collectives", []):
            per_rank = [CollectiveRank(rank=i, ops=p.get("ops", 0), time_ns=p.get("time_ns", 0),
                                       wait_ns=p.get("wait_ns", 0), transfer_ns=p.get("transfer_ns", 0),
                                       exposed_transfer_ns=p.get("exposed_transfer_ns", 0),
                                       last_arrivals=p.get("last_arrivals", 0),
                                       caused_wait_ns=p.get("caused_wait_ns", 0), raw=p)
                        for i, p in enumerate(c.get("per_rank", []))]
            self.collectives.append(Collective(kind=c["kind"], instances=c.get("instances", 0), per_rank=per_rank,
                                               raw=c))
        win = doc.get("window", {})
        self.iterations: List[Iteration] = [
            Iteration(index=i, name=it["name"], start_ns=it["start_ns"], end_ns=it["end_ns"],
                      warmup=it.get("warmup", False), in_window=it.get("in_window", False))
            for i, it in enumerate(win.get("iterations", []))]

    # ---- scalars -------------------------------------------------------------------------------
    @property
    def schema(self) -> str:
        return self.raw["schema"]

    @property
    def world_size(self) -> int:
        return self.raw.get("ranks", {}).get("world_size", len(self.ranks))

    @property
    def straggler_rank(self) -> int:
        """The rank the others wait for (-1: none)."""
        return self.raw.get("imbalance", {}).get("straggler_rank", -1)

    @property
    def verdict(self) -> str:
        return self.raw.get("verdict", {}).get("summary", "")

    @property
    def opportunities(self) -> List[str]:
        return list(self.raw.get("verdict", {}).get("opportunities", []))

    @property
    def window(self) -> Dict[str, Any]:
        return self.raw.get("window", {})

    @property
    def nsys_version(self) -> str:
        return self.raw.get("export", {}).get("nsys_version", "")

    def rank(self, r: int) -> Rank:
        for x in self.ranks:
            if x.rank == r:
                return x
        raise KeyError(f"no rank {r} (ranks: {[x.rank for x in self.ranks]})")

    def module(self, name: str) -> Module:
        """The first module row whose name or path is ``name``."""
        for m in self.modules:
            if m.name == name or m.path == name:
                return m
        raise KeyError(f"no module {name!r}")

    def __repr__(self) -> str:
        return (f"<cpprof_read.Readout {self.world_size} ranks, {len(self.modules)} module rows, "
                f"{len(self.collectives)} NCCL kinds, {len(self.iterations)} iterations>")

    # ---- pandas --------------------------------------------------------------------------------
    def to_frames(self) -> Dict[str, Any]:
        """DataFrames: ranks, modules (one row per module and rank), comm_by_kind (rank, kind),
        collectives (kind, rank) and iterations. Needs pandas."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the machine
            raise ImportError("to_frames() needs pandas (Debian/Ubuntu: apt install python3-pandas; "
                              "or pip install pandas); the typed accessors work without it") from e
        rank_cols = ["rank", "device", "pid", "process", "span_ns", "busy_ns", "compute_only_ns", "comm_only_ns",
                     "both_ns", "idle_ns", "comm_ns", "compute_ns", "wait_ns", "transfer_ns", "exposed_transfer_ns",
                     "launch_gap_ns", "launch_bound", "peak_mem_bytes"]
        ranks = pd.DataFrame([{c: getattr(r, c) for c in rank_cols} for r in self.ranks], columns=rank_cols)
        module_rows = []
        for m in self.modules:
            for rank, p in enumerate(m.per_rank):
                module_rows.append({"module": m.name, "path": m.path, "index": m.index, "parent": m.parent,
                                    "depth": m.depth, "group": m.group, "cp_distributed": m.cp_distributed,
                                    "straggler_rank": m.straggler_rank, "rank": rank,
                                    **{k: v for k, v in p.items() if k != "comm_by_kind"}})
        modules = pd.DataFrame(module_rows, columns=None if module_rows else
                               ["module", "path", "index", "parent", "depth", "group", "cp_distributed",
                                "straggler_rank", "rank", "busy_ns"])
        comm = pd.DataFrame([{"rank": r.rank, "kind": k, "union_ns": v.get("union_ns", 0),
                              "hidden_ns": v.get("hidden_ns", 0)}
                             for r in self.ranks for k, v in r.comm_by_kind.items()],
                            columns=["rank", "kind", "union_ns", "hidden_ns"])
        coll = pd.DataFrame([{"kind": c.kind, "instances": c.instances, "rank": p.rank, "ops": p.ops,
                              "time_ns": p.time_ns, "wait_ns": p.wait_ns, "transfer_ns": p.transfer_ns,
                              "exposed_transfer_ns": p.exposed_transfer_ns, "last_arrivals": p.last_arrivals,
                              "caused_wait_ns": p.caused_wait_ns}
                             for c in self.collectives for p in c.per_rank],
                            columns=["kind", "instances", "rank", "ops", "time_ns", "wait_ns", "transfer_ns",
                                     "exposed_transfer_ns", "last_arrivals", "caused_wait_ns"])
        iters = pd.DataFrame([{"index": i.index, "name": i.name, "start_ns": i.start_ns, "end_ns": i.end_ns,
                               "duration_ns": i.duration_ns, "warmup": i.warmup, "in_window": i.in_window}
                              for i in self.iterations],
                             columns=["index", "name", "start_ns", "end_ns", "duration_ns", "warmup", "in_window"])
        return {"ranks": ranks, "modules": modules, "comm_by_kind": comm, "collectives": coll, "iterations": iters}


def loads(text: str) -> Readout:
    """A readout from its JSON text."""
    return Readout(json.loads(text))


def _find_cpprof(cpprof: Optional[str]) -> str:
    exe = cpprof or os.environ.get("CPPROF") or shutil.which("cpprof")
    if not exe:
        raise FileNotFoundError("cpprof not found: put it on PATH, set CPPROF=/path/to/cpprof, or pass "
                                "cpprof=...; or load a saved readout (cpprof report RUN.sqlite --format json > R.json)")
    return exe


def load(path: str, *, cpprof: Optional[str] = None, args: Sequence[str] = (), timeout: float = 3600) -> Readout:
    """A readout from ``path``: a saved JSON readout, or an nsys SQLite export (then
    ``cpprof report PATH --format json ARGS...`` is run; ``cpprof`` names the binary, else $CPPROF,
    else the one on PATH). ``args`` are passed on, e.g. ``["--window", "all"]``."""
    with open(path, "rb") as f:
        head = f.read(16)
    if head.startswith(b"SQLite format 3"):
        cmd = [_find_cpprof(cpprof), "report", path, "--format", "json", *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
        return loads(p.stdout)
    if head.lstrip().startswith(b"{"):
        with open(path, encoding="utf-8") as f:
            return Readout(json.load(f))
    raise SchemaError(f"{path} is neither a cpprof JSON readout nor an nsys SQLite export (an .nsys-rep must be "
                      "exported first: nsys export --type sqlite REPORT.nsys-rep)")
