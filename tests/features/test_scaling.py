"""features.scaling: E ← σ·E/std(E) (Turian et al. 2010, section 7.2), checked with numbers worked by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest

from features.scaling import scale_embeddings


@pytest.mark.parametrize(
    "E, sigma, expected",
    [
        # std over all four entries is 1, so the result is sigma * E
        ([[1, -1], [-1, 1]], 0.1, [[0.1, -0.1], [-0.1, 0.1]]),
        ([[1, -1], [-1, 1]], 0.5, [[0.5, -0.5], [-0.5, 0.5]]),
        # mean 3, deviations -3 -1 1 3, variance (9+1+1+9)/4 = 5: E * 0.1/sqrt(5), not centred
        ([[0, 2], [4, 6]], 0.1, [[0, 0.2 / math.sqrt(5)], [0.4 / math.sqrt(5), 0.6 / math.sqrt(5)]]),
        # mean 3.5, variance (3 * 0.25 + 2.25)/4 = 0.75
        ([[3, 3], [3, 5]], 0.1, [[0.3 / math.sqrt(0.75)] * 2, [0.3 / math.sqrt(0.75), 0.5 / math.sqrt(0.75)]]),
        # one row: the std is over the whole matrix, not per row or column
        ([[2, 4, 6, 8]], 1.0, [[2 / math.sqrt(5), 4 / math.sqrt(5), 6 / math.sqrt(5), 8 / math.sqrt(5)]]),
    ],
)
def test_exact_numbers(E, sigma, expected):
    out = scale_embeddings(np.array(E), sigma=sigma)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-15)
    assert out.std() == pytest.approx(sigma, rel=1e-12)


def test_default_sigma_dtype_and_idempotence():
    E = np.random.default_rng(0).normal(scale=3.0, size=(50, 8)).astype(np.float32)
    copy = E.copy()
    out = scale_embeddings(E)
    assert out.dtype == np.float32 and out.shape == E.shape
    assert float(out.std(dtype=np.float64)) == pytest.approx(0.1, rel=1e-5)
    np.testing.assert_array_equal(E, copy)  # the input is left alone
    np.testing.assert_allclose(scale_embeddings(out), out, rtol=1e-5)  # scaling twice changes nothing


@pytest.mark.parametrize(
    "E, sigma, message",
    [
        ([[1.0, 2.0]], 0, "sigma must be a positive finite number, but got 0"),
        ([[1.0, 2.0]], -0.1, "but got -0.1"),
        ([[1.0, 2.0]], float("nan"), "but got nan"),
        ([[1.0, 2.0]], True, "but got True"),
        ([1.0, 2.0], 0.1, r"non-empty 2-D matrix \(words × dims\), but got shape \(2,\)"),
        (np.zeros((0, 3)), 0.1, r"but got shape \(0, 3\)"),
        ([[1.0, 1.0], [1.0, 1.0]], 0.1, "standard deviation 0"),
        ([[1.0, float("inf")]], 0.1, "must hold finite numbers"),
        ([["a", "b"]], 0.1, "must hold real numbers, but got dtype <U1"),
        ([[1j, 2j]], 0.1, "must hold real numbers"),
    ],
)
def test_errors(E, sigma, message):
    with pytest.raises(ValueError, match=message):
        scale_embeddings(np.asarray(E), sigma=sigma)
