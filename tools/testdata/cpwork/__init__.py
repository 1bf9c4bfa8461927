# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""cpwork: a tiny context-parallel job used only to make cpprof's real test exports.

It is not the reference workload (that is python/cpfold); it is small on purpose so the
exports stay small, and it exercises every kind of GPU work the report must classify:
a send/recv ring (Cannon-style shift), an all-gather at the CP boundary, a reduce-scatter
and an all-reduce in the backward pass, GEMMs, norms, softmax, elementwise, memcpy, memset.
"""
