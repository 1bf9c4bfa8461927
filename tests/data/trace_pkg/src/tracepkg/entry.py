# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""The entry module: launched as `-m tracepkg.entry`, it runs as __main__, so nsys cannot annotate
the classes defined here."""
import sys


class EntryTrunk:
    def forward(self, x):
        return x


def main():
    print(EntryTrunk().forward(1))


if __name__ == "__main__":
    main()
    sys.exit(0)
