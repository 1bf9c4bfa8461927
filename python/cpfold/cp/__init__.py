# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Context parallelism primitives for cpfold: process grid, pair layout, Cannon/ring
triangle-multiplication matmul, communication.  This package sits below
``cpfold.model`` (which imports the layout) and imports nothing of the model; the
``ContextParallel`` wrapper that puts a model on a grid is ``cpfold.wrapper``."""
from .layout import LOCAL, CPGrid, PairLayout, check_grid_shape

__all__ = ["LOCAL", "CPGrid", "PairLayout", "check_grid_shape"]
