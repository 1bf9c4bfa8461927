# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""A toy "user model" for cpprof's workload-kit tests: two modules (a token encoder, a pair
block), inputs by a contract (contract.json), a stand-in CP wrapper, and a variant whose control
flow diverges across ranks."""
