# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""cpfold model classes (importable; the entry modules only wire them up)."""
from .atom_attention import AtomAttention, AtomAttentionDecoder, AtomAttentionEncoder, AtomTransformer
from .common import (AdaLN, AttentionPairBias, ConditionedTransitionBlock, PairBiasProjection,
                     Transition, glorot_init_, mark_pair_sharded, pair_sharded_parameters,
                     set_context_parallel)
from .confidence import ConfidenceModule, DistogramHead
from .diffusion import (DiffusionConditioning, DiffusionModule, DiffusionTransformer,
                        DiffusionTransformerBlock, EDMSampler, FourierEmbedding)
from .embedder import InputEmbedder, RelativePositionEncoding
from .fold import CPFoldModel
from .msa import MSABlock, MSAModule, MSAPairWeightedAveraging, OuterProductMean
from .pairformer import (PairformerBlock, PairformerModule, PairTransition, SingleTransition,
                         TriangleAttention, TriangleAttentionEndingNode, TriangleAttentionStartingNode,
                         TriangleMultiplication, TriangleMultiplicationIncoming,
                         TriangleMultiplicationOutgoing)

__all__ = [
    "AdaLN",
    "AtomAttention",
    "AtomAttentionDecoder",
    "AtomAttentionEncoder",
    "AtomTransformer",
    "AttentionPairBias",
    "CPFoldModel",
    "ConditionedTransitionBlock",
    "ConfidenceModule",
    "DiffusionConditioning",
    "DiffusionModule",
    "DiffusionTransformer",
    "DiffusionTransformerBlock",
    "DistogramHead",
    "EDMSampler",
    "FourierEmbedding",
    "InputEmbedder",
    "MSABlock",
    "MSAModule",
    "MSAPairWeightedAveraging",
    "OuterProductMean",
    "PairBiasProjection",
    "PairTransition",
    "PairformerBlock",
    "PairformerModule",
    "RelativePositionEncoding",
    "SingleTransition",
    "Transition",
    "TriangleAttention",
    "TriangleAttentionEndingNode",
    "TriangleAttentionStartingNode",
    "TriangleMultiplication",
    "TriangleMultiplicationIncoming",
    "TriangleMultiplicationOutgoing",
    "glorot_init_",
    "mark_pair_sharded",
    "pair_sharded_parameters",
    "set_context_parallel",
]
