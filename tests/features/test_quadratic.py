"""QuadraticLayer (Turian, Bergstra & Bengio 2009 §3): the formula, its gradient at 0, and its checks."""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from features.quadratic import EPS, QuadraticLayer, softsign_layer


def explicit(layer: QuadraticLayer, x: torch.Tensor) -> torch.Tensor:
    """q_k(x) = b_k + W_k x + sqrt(sum_j (V_kj x)^2), one unit and one filter at a time."""
    W, b, V = layer.linear.weight, layer.linear.bias, layer.filter_weights()
    out = torch.empty(x.shape[0], layer.out_dim, dtype=x.dtype)
    for n in range(x.shape[0]):
        for k in range(layer.out_dim):
            energy = sum((V[k, j] @ x[n]) ** 2 for j in range(layer.filters))
            quad = torch.sqrt(energy + layer.eps) if layer.sqrt else energy
            out[n, k] = b[k] + W[k] @ x[n] + quad
    return out


@pytest.mark.parametrize("sqrt", [True, False])
@pytest.mark.parametrize("filters", [1, 3])
def test_matches_the_formula_unit_by_unit(sqrt, filters):
    torch.manual_seed(0)
    layer = QuadraticLayer(5, 4, filters, sqrt=sqrt).double()
    x = torch.randn(6, 5, dtype=torch.float64)
    assert torch.allclose(layer(x), explicit(layer, x), atol=1e-12)


def test_no_filters_is_affine_and_batch_dims_are_kept():
    layer = QuadraticLayer(3, 2, 0)
    x = torch.randn(2, 4, 3)
    assert layer.filter_weights() is None
    assert torch.equal(layer(x), layer.linear(x))
    assert QuadraticLayer(3, 2, 2)(x).shape == (2, 4, 2)


def test_gradient_is_finite_where_every_filter_response_is_zero():
    layer = QuadraticLayer(4, 3, 2)
    x = torch.zeros(2, 4, requires_grad=True)  # V x = 0: d sqrt(s)/ds is infinite at s = 0 without EPS
    layer(x).sum().backward()
    assert torch.isfinite(x.grad).all() and torch.equal(x.grad, layer.linear.weight.sum(0).expand(2, -1))
    for param in layer.parameters():
        assert torch.isfinite(param.grad).all()
    assert torch.allclose(layer(torch.zeros(1, 4)), layer.linear.bias + EPS ** 0.5)


def test_gradcheck_away_from_zero_and_softsign_hidden_layer():
    torch.manual_seed(1)
    layer = QuadraticLayer(3, 2, 2).double()
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(layer, (x,))
    hidden = softsign_layer(3, 2, 2).double()
    assert torch.allclose(hidden(x), torch.nn.functional.softsign(hidden[0](x)))


@pytest.mark.parametrize("args, message", [
    ((0, 2, 1), "in_dim must be a positive int"),
    ((3, 2, -1), "filters must be an int >= 0"),
    ((3, True, 1), "out_dim must be a positive int"),
])
def test_bad_sizes_are_refused(args, message):
    with pytest.raises(ValueError, match=message):
        QuadraticLayer(*args)


def test_wrong_input_width_names_both_sizes():
    with pytest.raises(ValueError, match="must match in_dim 3, but got 4"):
        QuadraticLayer(3, 2, 1)(torch.zeros(1, 4))


def test_import_features_does_not_import_torch():
    code = "import sys, features, features.orthographic, features.labels; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
