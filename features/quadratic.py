"""Quadratic filters: a layer whose units add the norm of a few linear filters to a linear score.

Turian, Bergstra & Bengio (2009, section 3), after Bergstra et al. (2009): each unit ``k`` of
a layer computes

    q_k(x) = b_k + W_k x + sqrt(sum_j (V_kj x)^2)        (J filters V_k1 ... V_kJ per unit)

The square root is the paper's footnote; ``sqrt=False`` gives Bergstra et al.'s form
``b_k + W_k x + sum_j (V_kj x)^2``. With ``J = 0`` the layer is plain affine. A hidden layer of
the windowed taggers is ``softsign(q(x))``; the output layer is ``q(x)`` itself (linear plus
filters), so "I-O with quadratic filters" is logistic regression with quadratic filters.

This module imports torch (it is a torch layer), but ``import features`` does not import this
module, so the rest of ``features/`` stays usable without torch::

    from features.quadratic import QuadraticLayer
    layer = QuadraticLayer(204, 23, filters=4)      # (..., 204) -> (..., 23)
"""
from __future__ import annotations

import math

try:
    import torch
    from torch import nn
except ImportError as err:  # features/ itself never needs torch; this layer does
    raise ImportError("features.quadratic needs PyTorch: pip install torch (or pip install -e . for seqlab)") from err

#: Added under the square root: ``d sqrt(s)/ds`` is infinite at ``s = 0``, so at ``Vx = 0``
#: (e.g. an all-zero input, or the zero-initialised padding vector) the gradient would be 0/0 = nan.
#: ``sqrt(s + EPS)`` has a finite gradient everywhere and changes q by at most ``sqrt(EPS)``.
EPS = 1e-6


class QuadraticLayer(nn.Module):
    """``q(x) = b + Wx + sqrt(sum_j (V_j x)^2)`` per output unit (Turian, Bergstra & Bengio 2009, section 3).

    ``filters`` is J, the number of quadratic filters of each output unit; ``sqrt=False`` drops
    the square root (Bergstra et al. 2009). ``forward`` maps ``(..., in_dim)`` to ``(..., out_dim)``.
    """

    def __init__(self, in_dim: int, out_dim: int, filters: int = 0, *, sqrt: bool = True, eps: float = EPS) -> None:
        super().__init__()
        for name, value in (("in_dim", in_dim), ("out_dim", out_dim)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, but got {value!r}")
        if isinstance(filters, bool) or not isinstance(filters, int) or filters < 0:
            raise ValueError(f"filters must be an int >= 0, but got {filters!r}")
        if not eps > 0:
            raise ValueError(f"eps must be positive, but got {eps!r}")
        self.in_dim, self.out_dim, self.filters, self.sqrt, self.eps = in_dim, out_dim, filters, sqrt, eps
        self.linear = nn.Linear(in_dim, out_dim)
        # all J filters of all units as one matrix, so a forward pass is two matrix products
        self.quadratic = nn.Linear(in_dim, out_dim * filters, bias=False) if filters else None
        if self.quadratic is not None:
            bound = 1.0 / math.sqrt(in_dim)  # the scale nn.Linear gives W
            nn.init.uniform_(self.quadratic.weight, -bound, bound)

    def extra_repr(self) -> str:
        return f"in_dim={self.in_dim}, out_dim={self.out_dim}, filters={self.filters}, sqrt={self.sqrt}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.in_dim:
            raise ValueError(f"input's last dim must match in_dim {self.in_dim}, but got {x.shape[-1]}")
        out = self.linear(x)  # shape: (..., out_dim)
        if self.quadratic is None:
            return out
        projections = self.quadratic(x).unflatten(-1, (self.out_dim, self.filters))  # shape: (..., out_dim, J)
        energy = projections.square().sum(dim=-1)  # shape: (..., out_dim)
        return out + (torch.sqrt(energy + self.eps) if self.sqrt else energy)  # shape: (..., out_dim)

    def filter_weights(self) -> torch.Tensor | None:
        """The filters as a ``(out_dim, J, in_dim)`` tensor (a view), or None when ``J = 0``."""
        if self.quadratic is None:
            return None
        return self.quadratic.weight.view(self.out_dim, self.filters, self.in_dim)  # shape: (out_dim, J, in_dim)


def softsign_layer(in_dim: int, out_dim: int, filters: int = 0, *, sqrt: bool = True) -> nn.Sequential:
    """A hidden layer of Turian et al. (2009): ``softsign(q(x))``."""
    return nn.Sequential(QuadraticLayer(in_dim, out_dim, filters, sqrt=sqrt), nn.Softsign())
