"""Scaling word embeddings before using them as features (Turian, Ratinov & Bengio 2010, section 7.2)."""
from __future__ import annotations

import math

import numpy as np

#: Turian et al.'s (2010) target standard deviation for embedding features.
DEFAULT_SIGMA = 0.1


def scale_embeddings(E: np.ndarray, sigma: float = DEFAULT_SIGMA) -> np.ndarray:
    """``E ← σ · E / std(E)``: the whole matrix rescaled to standard deviation ``sigma``.

    Turian et al. (2010, section 7.2) found embedding features work best in a linear
    model at a fixed small scale (σ = 0.1). The standard deviation is taken over all
    entries of the matrix at once (population std, ``ddof=0``) and the matrix is not
    centred, so the result has std exactly ``sigma`` and scaling twice changes nothing.
    Returns a new array: float32 for float32 input, float64 otherwise.
    """
    if isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or not math.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"sigma must be a positive finite number, but got {sigma!r}")
    E = np.asarray(E)
    if E.ndim != 2 or E.size == 0:
        raise ValueError(f"E must be a non-empty 2-D matrix (words × dims), but got shape {E.shape}")
    if not np.issubdtype(E.dtype, np.number) or np.issubdtype(E.dtype, np.complexfloating):
        raise ValueError(f"E must hold real numbers, but got dtype {E.dtype}")
    dtype = np.float32 if E.dtype == np.float32 else np.float64
    if not np.isfinite(E).all():
        raise ValueError("E must hold finite numbers, but it has nan or inf")
    std = float(E.std(dtype=np.float64))
    if std == 0.0:
        raise ValueError("E has standard deviation 0 (all entries equal), so it cannot be scaled")
    return np.multiply(E, sigma / std, dtype=dtype)
