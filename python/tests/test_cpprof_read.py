# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""cpprof_read on the bundled real export (tests/data/real/cpwork-train): the readout that the built
cpprof writes, read through the typed accessors and as pandas DataFrames."""
import json
import lzma
import os
import shutil
import sqlite3
import sys

import pytest

import cpprof_read
from built_cpprof import CPPROF, REPO, needs_cpprof

EXPORT_XZ = os.path.join(REPO, "tests", "data", "real", "cpwork-train", "cpwork-train.sqlite.xz")


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    path = tmp_path_factory.mktemp("cpprof_read") / "cpwork-train.sqlite"
    with lzma.open(EXPORT_XZ) as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return str(path)


@pytest.fixture(scope="module")
def readout(export):
    if CPPROF is None:
        pytest.skip("no built cpprof (build/cpprof or $CPPROF_BIN): build first")
    return cpprof_read.load(export, cpprof=CPPROF)


@needs_cpprof
def test_typed_accessors_hold_the_readouts_invariants(readout):
    assert readout.schema == cpprof_read.SCHEMA
    assert readout.world_size == 2 and [r.rank for r in readout.ranks] == [0, 1]
    for r in readout.ranks:
        assert r.compute_only_ns + r.comm_only_ns + r.both_ns == r.busy_ns
        assert r.busy_ns + r.idle_ns == r.span_ns
        assert r.comm_ns == r.comm_only_ns + r.both_ns
    # The bundled export's truth (README): rank 1 is the straggler; the first of 3 iterations is warm-up.
    assert readout.straggler_rank == 1
    assert [(i.warmup, i.in_window) for i in readout.iterations] == [(True, False), (False, True), (False, True)]
    assert readout.iterations[1].duration_ns > 0
    assert readout.verdict.startswith("Per steady-state iteration")
    assert readout.rank(1).launch_bound is True
    trimul = readout.module("TriMulRing.forward")
    assert trimul.path == "trunk/Trunk.forward/PairformerBlock.forward/TriMulRing.forward"
    assert trimul.cp_distributed and trimul.straggler_rank == 1
    assert {c.kind for c in readout.collectives} == {"SendRecv", "AllGather", "ReduceScatter", "AllReduce"}
    with pytest.raises(KeyError):
        readout.rank(7)


@needs_cpprof
def test_saved_json_reads_the_same(readout, export, tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(readout.raw))
    again = cpprof_read.load(str(path))
    assert again.raw == readout.raw
    assert again.ranks == readout.ranks


@needs_cpprof
def test_args_go_to_cpprof_report(export):
    whole = cpprof_read.load(export, cpprof=CPPROF, args=["--window", "all"])
    assert whole.window["kind"] == "all" and whole.window["whole_capture"] is True


@needs_cpprof
def test_to_frames(readout):
    pd = pytest.importorskip("pandas")
    f = readout.to_frames()
    assert set(f) == {"ranks", "modules", "comm_by_kind", "collectives", "iterations"}
    assert all(isinstance(df, pd.DataFrame) for df in f.values())
    ranks = f["ranks"].set_index("rank")
    assert ranks.loc[0, "busy_ns"] == readout.rank(0).busy_ns
    assert (ranks["compute_only_ns"] + ranks["comm_only_ns"] + ranks["both_ns"] == ranks["busy_ns"]).all()
    assert len(f["modules"]) == len(readout.modules) * readout.world_size
    top = f["modules"][(f["modules"]["parent"] == -1) & (f["modules"]["rank"] == 0)]
    assert top["busy_ns"].sum() == readout.rank(0).busy_ns  # top-level rows add up to busy
    comm = f["comm_by_kind"]
    assert set(comm["kind"]) == {"SendRecv", "AllGather", "ReduceScatter", "AllReduce"}
    coll = f["collectives"]
    caused = coll.groupby("rank")["caused_wait_ns"].sum()
    assert caused.idxmax() == readout.straggler_rank
    assert list(f["iterations"]["warmup"]) == [True, False, False]


def test_not_a_readout(tmp_path):
    p = tmp_path / "other.json"
    p.write_text(json.dumps({"schema": "something/1"}))
    with pytest.raises(cpprof_read.SchemaError, match="cpprof report RUN.sqlite --format json"):
        cpprof_read.load(str(p))
    t = tmp_path / "notes.txt"
    t.write_text("hello")
    with pytest.raises(cpprof_read.SchemaError, match="neither"):
        cpprof_read.load(str(t))


def test_no_cpprof_says_how_to_get_one(tmp_path, monkeypatch):
    db = tmp_path / "x.sqlite"
    sqlite3.connect(db).execute("CREATE TABLE t (x)").connection.commit()
    monkeypatch.delenv("CPPROF", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="CPPROF=/path/to/cpprof"):
        cpprof_read.load(str(db))


@needs_cpprof
def test_cpprof_error_is_raised_with_its_message(tmp_path):
    db = tmp_path / "x.sqlite"
    sqlite3.connect(db).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(RuntimeError, match="not an nsys export"):
        cpprof_read.load(str(db), cpprof=CPPROF)


@needs_cpprof
def test_without_pandas_the_hint(readout, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="python3-pandas"):
        readout.to_frames()
