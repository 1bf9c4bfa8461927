# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""The cpprof binary the Python tests drive: $CPPROF_BIN, else this checkout's build/cpprof
(tools/test.sh builds it before the Python tests). Tests that need it are skipped without it."""
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _find():
    for p in (os.environ.get("CPPROF_BIN"), os.path.join(REPO, "build", "cpprof")):
        if p and os.access(p, os.X_OK):
            return p
    return None


CPPROF = _find()
needs_cpprof = pytest.mark.skipif(CPPROF is None, reason="no built cpprof (build/cpprof or $CPPROF_BIN): build first")
