# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Vendored code that imports itself under its original root, `folding`."""
