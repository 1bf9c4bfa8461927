# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""A module that cannot be imported."""
import tracepkg_dependency_that_is_not_installed  # noqa: F401


class Trunk:
    def forward(self, x):
        return x
