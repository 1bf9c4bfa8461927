# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Single-process model properties: shapes, chunking invariance, masking,
checkpoint round trip, grid validation, Glorot init."""
import math

import pytest
import torch

from cpfold.checkpoint import build_model, load_checkpoint, save_checkpoint
from cpfold.config import get_preset
from cpfold.cp.layout import check_grid_shape
from cpfold.features import make_inputs, pad_tokens
from cpfold.model import CPFoldModel


def _model(**over):
    torch.manual_seed(0)
    cfg = get_preset("tiny").model
    for k, v in over.items():
        setattr(cfg, k, v)
    return CPFoldModel(cfg)


def test_e2e_shapes():
    m = _model()
    f = make_inputs(20, msa_depth=4)
    with torch.no_grad():
        out = m(f, mode="e2e", recycles=0, diffusion_steps=2, samples=3,
                generator=torch.Generator().manual_seed(0))
    A = f["ref_pos"].shape[0]
    cfg = m.cfg
    assert out["s_trunk"].shape == (1, 20, cfg.c_s)
    assert out["z_trunk"].shape == (1, 20, 20, cfg.c_z)
    assert out["coords"].shape == (3, A, 3)
    assert out["plddt_logits"].shape == (3, A, cfg.plddt_bins)
    assert out["pae_logits"].shape == (3, 20, 20, cfg.pae_bins)
    assert all(torch.isfinite(v).all() for v in out.values())


def test_chunking_does_not_change_results():
    f = make_inputs(24, msa_depth=4)
    outs = []
    for chunk in (1 << 28, 512):           # 512 elements forces many chunks everywhere
        m = _model(chunk_elems=chunk)
        with torch.no_grad():
            outs.append(m(f, mode="trunk", recycles=1))
    for k in ("s_trunk", "z_trunk"):
        torch.testing.assert_close(outs[0][k], outs[1][k], rtol=1e-5, atol=1e-6)


def test_padding_tokens_do_not_change_valid_outputs():
    m = _model()
    f = make_inputs(20, msa_depth=4)
    with torch.no_grad():
        a = m(f, mode="trunk", recycles=1)
        b = m(pad_tokens(f, 27), mode="trunk", recycles=1)
    torch.testing.assert_close(a["z_trunk"], b["z_trunk"][:, :20, :20], rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(a["s_trunk"], b["s_trunk"][:, :20], rtol=1e-4, atol=1e-6)


def test_glorot_gain():
    m = _model()
    w = m.pairformer.blocks[0].tri_mul_out.linear_g.weight
    bound = 0.1 * math.sqrt(6.0 / (w.shape[0] + w.shape[1]))
    assert float(w.abs().max()) <= bound + 1e-7
    assert float(w.abs().max()) > 0.8 * bound


def test_checkpoint_round_trip(tmp_path):
    m = _model()
    save_checkpoint(m, str(tmp_path))
    cfg, state = load_checkpoint(str(tmp_path))
    assert cfg == m.cfg
    m2, loaded = build_model(get_preset("small").model, str(tmp_path))   # checkpoint config wins
    assert loaded and m2.cfg == m.cfg
    for (k, v), (k2, v2) in zip(m.state_dict().items(), m2.state_dict().items()):
        assert k == k2 and torch.equal(v, v2)
    with pytest.raises(FileNotFoundError, match="no cpfold checkpoint"):
        load_checkpoint(str(tmp_path / "nothing"))


@pytest.mark.parametrize("grid,kind", [((1, 1), "local"), ((3, 3), "square"), ((4, 1), "rows"),
                                       ((1, 8), "cols")])
def test_grid_kinds(grid, kind):
    assert check_grid_shape(*grid) == kind


def test_grid_rejected_with_message():
    with pytest.raises(ValueError, match=r"unsupported CP grid 2x4: .*square q x q grid.*1 x q / q x 1"):
        check_grid_shape(2, 4)
    with pytest.raises(ValueError, match=r"CP grid 2x2 needs 4 ranks, but the world size is 8"):
        check_grid_shape(2, 2, 8)
