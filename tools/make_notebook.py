#!/usr/bin/env python3
# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Writes docs/examples/cpprof_read.ipynb (the cells, without outputs): a notebook that reads a real
4-rank export through cpprof_read and looks at it with pandas. tests/cli/notebook_test.sh executes it
(jupyter nbconvert --execute, Debian's python3 with pandas), checks it against the committed outputs
and renders it to HTML in headless Chromium. To refresh the committed outputs after a change:

    tests/cli/notebook_test.sh build/cpprof tests/data /tmp/nb --update
"""
import sys

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

cells = [
    new_markdown_cell(
        "# A CP readout in pandas: `cpprof_read` on a real 4-rank export\n\n"
        "`cpprof_read` (in `python/`, installed with cpprof under `share/cpprof/python`) loads the JSON readout "
        "of `cpprof report` (or runs it on an `.sqlite`) and gives typed objects and pandas DataFrames. "
        "The export here is `tests/data/real/cpfold-trunk-2x2`: cpfold's Pairformer trunk on a 2 x 2 CP grid "
        "(Cannon's algorithm for triangle multiplication), 4 x H200, nsys 2025.3.1.\n\n"
        "Run it yourself: `CPPROF=build/cpprof CPPROF_EXPORT=run.sqlite jupyter nbconvert --to notebook "
        "--execute docs/examples/cpprof_read.ipynb` (Debian: `apt install jupyter-nbconvert python3-ipykernel "
        "python3-pandas`)."),
    new_code_cell(
        "import os, sys\n"
        "sys.path.insert(0, os.environ.get('CPPROF_PYTHON', '../../python'))  # where cpprof_read lives\n"
        "import pandas as pd\n"
        "import cpprof_read\n\n"
        "r = cpprof_read.load(os.environ.get('CPPROF_EXPORT', 'cpfold-trunk-2x2.sqlite'))\n"
        "print(r)\n"
        "print(r.window['description'])\n"
        "print('straggler: rank', r.straggler_rank)"),
    new_markdown_cell(
        "## Ranks\n\nWhere each rank's span went (compute-only, communication-only, both, idle add up to the "
        "span), and how much of its NCCL time was waiting for peers rather than moving data."),
    new_code_cell(
        "f = r.to_frames()\n"
        "ranks = f['ranks'].set_index('rank')\n"
        "ms = lambda s: (s / 1e6).round(2)\n"
        "view = ranks[['span_ns', 'compute_only_ns', 'comm_only_ns', 'both_ns', 'idle_ns', 'wait_ns', 'transfer_ns']]"
        ".apply(ms)\n"
        "view.columns = [c.replace('_ns', ' ms') for c in view.columns]\n"
        "assert (ranks.compute_only_ns + ranks.comm_only_ns + ranks.both_ns + ranks.idle_ns == ranks.span_ns).all()\n"
        "view"),
    new_markdown_cell(
        "## Modules\n\nGPU time per group (input embedder, MSA, trunk, ...) and rank, then the modules "
        "of the trunk's Pairformer block (a row's time includes its children's; the groups and `[unattributed]` "
        "add up to the rank's busy time). Rank 3 spends a sixth of the others' time in the trunk: it waits least, "
        "the others wait for it."),
    new_code_cell(
        "mods = f['modules']\n"
        "groups = mods[mods.depth == 0].pivot_table(index='module', columns='rank', values='busy_ns', aggfunc='sum')\n"
        "(groups / 1e6).round(2).sort_values(0, ascending=False)"),
    new_code_cell(
        "block = mods[mods.path.str.startswith('trunk/') & (mods.depth == 4)]\n"
        "(block.pivot_table(index='module', columns='rank', values='busy_ns', aggfunc='sum') / 1e6).round(2)"
        ".sort_values(0, ascending=False)"),
    new_markdown_cell(
        "## Communication\n\nPer NCCL kind: how many instances were matched across ranks, the waiting each rank "
        "did and the waiting it caused the others (the straggler is the rank the others wait for)."),
    new_code_cell(
        "coll = f['collectives']\n"
        "coll.assign(wait_ms=(coll.wait_ns / 1e6).round(2), caused_wait_ms=(coll.caused_wait_ns / 1e6).round(2))"
        "[['kind', 'rank', 'ops', 'wait_ms', 'caused_wait_ms', 'last_arrivals']]"),
    new_markdown_cell("## Iterations\n\nThe readout's numbers cover the steady state: warm-up is left out."),
    new_code_cell(
        "it = f['iterations']\n"
        "it.assign(duration_ms=(it.duration_ns / 1e6).round(2))[['index', 'name', 'duration_ms', 'warmup', "
        "'in_window']]"),
]
nb = new_notebook(cells=cells, metadata={
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"}})
nbformat.write(nb, sys.argv[1] if len(sys.argv) > 1 else "docs/examples/cpprof_read.ipynb")
