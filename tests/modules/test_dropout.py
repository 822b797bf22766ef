"""seqlab.modules.dropout: one mask per sentence, shared over time; identity in eval mode."""
from __future__ import annotations

import pytest
import torch

from seqlab.modules.dropout import LockedDropout


def test_the_mask_is_shared_by_every_position_of_a_sentence():
    torch.manual_seed(0)
    drop = LockedDropout(0.5).train()
    out = drop(torch.ones(4, 7, 32))
    assert torch.equal(out, out[:, :1].expand_as(out))  # every time step has its sentence's mask
    assert set(out.unique().tolist()) == {0.0, 2.0}  # kept units are scaled by 1 / (1 - p)
    assert not torch.equal(out[0], out[1])  # sentences draw their own masks


def test_expected_value_is_kept():
    torch.manual_seed(1)
    out = LockedDropout(0.3).train()(torch.full((2000, 3, 50), 2.0))
    assert out.mean().item() == pytest.approx(2.0, rel=0.02)
    assert (out[:, 0] == 0).float().mean().item() == pytest.approx(0.3, abs=0.01)


def test_eval_mode_and_rate_zero_are_the_identity():
    x = torch.randn(2, 5, 4)
    assert LockedDropout(0.5).eval()(x) is x
    assert LockedDropout(0.0).train()(x) is x


def test_bad_rate_and_shape_are_refused():
    with pytest.raises(ValueError, match=r"dropout rate must be in \[0, 1\), got 1.0"):
        LockedDropout(1.0)
    with pytest.raises(ValueError, match=r"expected a \(batch, time, features\) tensor, got shape \(5, 4\)"):
        LockedDropout(0.5).train()(torch.randn(5, 4))


def test_gradients_flow_through_kept_units_only():
    torch.manual_seed(2)
    x = torch.ones(3, 4, 6, requires_grad=True)
    out = LockedDropout(0.5).train()(x)
    out.sum().backward()
    assert torch.equal(x.grad, out.detach())  # d(x * mask) / dx = mask
