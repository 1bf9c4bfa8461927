# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""cpfold: a reference context-parallel protein-folding workload (AF3/Boltz-like).

See README.md in this directory for the input contract, the model, the CP
scheme, the entry points and the profile "what to expect" table.
"""
__version__ = "0.1.0"
