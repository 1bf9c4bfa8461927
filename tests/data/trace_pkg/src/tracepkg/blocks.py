# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Plain classes (no torch), for --function validation."""

SCALE = 2.0


class Trunk:
    def forward(self, x):
        return x * SCALE

    def recycle(self, x, n=1):
        for _ in range(n):
            x = self.forward(x)
        return x


class PairformerBlock:
    def forward(self, x):
        return x + 1


def helper(x):
    return x
