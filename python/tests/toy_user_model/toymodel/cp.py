# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for the user's CP wrapper (`--cp-wrapper toymodel.cp:wrap_cp`): marks the model
and hands it back (a real one would shard the pair representation over the ranks)."""


def wrap_cp(model):
    model.cp_wrapped = True
    return model
