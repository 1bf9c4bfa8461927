# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""A model module for cpprof profile's --trace-function tests: importable with the standard library."""


class Trunk:
    def forward(self, x):
        return x


def helper():
    return None
