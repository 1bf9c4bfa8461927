# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
def scale(x):
    return 3 * x
