"""Windowed encoders: each token described by a fixed window of its neighbours (Turian et al. 2009).

Turian, Bergstra & Bengio (2009, section 2) predict a token's label from a window of k = 7
token vectors (3 on each side, padded at the sentence edges): optional token layers ``T``
(one feature extractor shared by every position, i.e. a convolution of width 1), then the
concatenated window, then window layers ``W``. Every hidden layer is ``softsign(q(x))`` with
``q`` the quadratic-filter layer of :mod:`features.quadratic`; the output layer ``O`` is the
tagger's projection. The architecture is data (``I-T(150)-W(310)-W(310)-O``, see
:mod:`seqlab.modules.window_spec`), not a class.

Everything is vectorised: token layers run once per padded position (not k times), and the
windows are cut as ``size`` shifted slices, so there is no per-token Python.
"""
from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from features.quadratic import softsign_layer
from seqlab.modules.window_spec import LayerSpec, parse_architecture


def window_gather(tokens: torch.Tensor, mask: torch.Tensor, pad: torch.Tensor, size: int) -> torch.Tensor:
    """Concatenate each position's window of ``size`` vectors, ``pad`` beyond the sentence.

    ``tokens`` (B, T, D), ``mask`` (B, T) left-aligned, ``pad`` (D,), ``size`` odd; returns
    (B, T, size * D) with the window's vectors left to right. Positions beyond a sentence's
    length, within the batch, count as padding too, so batched and single sentences agree.
    """
    if size < 1 or size % 2 == 0:
        raise ValueError(f"window size must be a positive odd number, but got {size}")
    batch, length, dim = tokens.shape
    half = size // 2
    filled = torch.where(mask.unsqueeze(-1), tokens, pad)  # shape: (B, T, D)
    edge = pad.expand(batch, half, dim)  # shape: (B, half, D)
    padded = torch.cat([edge, filled, edge], dim=1)  # shape: (B, T + 2 * half, D)
    # shifted slices rather than Tensor.unfold: the same copy, and exportable to ONNX with a dynamic length
    return torch.cat([padded[:, p : p + length] for p in range(size)], dim=-1)  # shape: (B, T, size * D)


class WindowEncoder(nn.Module):
    """Token layers, a window of ``size`` positions, window layers (Turian, Bergstra & Bengio 2009, section 2).

    ``layers`` are the hidden layers of an architecture (its ``T`` and ``W`` parts, in order;
    the ``O`` part is the tagger's projection). ``filters`` is the default number of quadratic
    filters per unit, ``sqrt`` chooses the paper's square-root form. The padding vector that
    stands for positions beyond the sentence is learned, as Collobert & Weston (2008) do.
    ``dropout`` is applied between hidden layers (not in the paper, which trained without it; the
    tagger's own dropout covers the encoder's input and output).
    """

    def __init__(self, input_dim: int, layers: Sequence[LayerSpec], *, size: int = 7, filters: int = 0,
                 sqrt: bool = True, dropout: float = 0.0) -> None:
        super().__init__()
        if size < 1 or size % 2 == 0:
            raise ValueError(f"window size must be a positive odd number, but got {size}")
        if any(layer.kind == "O" for layer in layers):
            raise ValueError("layers must be the hidden (T and W) layers only; O is the tagger's projection")
        self.input_dim, self.size = input_dim, size
        self.pad = nn.Parameter(torch.zeros(input_dim))
        token_layers, window_layers = [], []
        dim = input_dim
        for layer in (spec for spec in layers if spec.kind == "T"):
            token_layers.append(softsign_layer(dim, layer.units, _filters(layer, filters), sqrt=sqrt))
            dim = layer.units
        dim *= size
        for layer in (spec for spec in layers if spec.kind == "W"):
            window_layers.append(softsign_layer(dim, layer.units, _filters(layer, filters), sqrt=sqrt))
            dim = layer.units
        self.token_layers = nn.Sequential(*token_layers)
        self.window_layers = nn.Sequential(*window_layers)
        self.output_dim = dim
        self.dropout = nn.Dropout(dropout)

    @classmethod
    def from_architecture(cls, input_dim: int, architecture: str, *, size: int = 7, filters: int = 0,
                          sqrt: bool = True, dropout: float = 0.0) -> "WindowEncoder":
        """Build from an architecture string such as ``I-T(150)-W(310)-O`` (its O layer is ignored here)."""
        hidden = [layer for layer in parse_architecture(architecture) if layer.kind != "O"]
        return cls(input_dim, hidden, size=size, filters=filters, sqrt=sqrt, dropout=dropout)

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if inputs.shape[-1] != self.input_dim:
            raise ValueError(f"encoder input dim must match {self.input_dim}, but got {inputs.shape[-1]}")
        pad = self.pad
        tokens = inputs
        if len(self.token_layers):
            both = torch.cat([inputs, pad.view(1, 1, -1).expand(inputs.shape[0], 1, -1)], dim=1)  # shape: (B, T + 1, D)
            for layer in self.token_layers:  # the padding goes through T like a token
                both = self.dropout(layer(both))  # shape: (B, T + 1, H_T)
            tokens, pad = both[:, :-1], both[0, -1]
        hidden = window_gather(tokens, mask, pad, self.size)  # shape: (B, T, size * H_T)
        for i, layer in enumerate(self.window_layers):
            hidden = layer(hidden)  # shape: (B, T, H_W)
            if i + 1 < len(self.window_layers):
                hidden = self.dropout(hidden)
        return hidden  # shape: (B, T, output_dim)


def _filters(layer: LayerSpec, default: int) -> int:
    return default if layer.filters is None else layer.filters


def output_filters(architecture: str, default: int) -> int:
    """The number of quadratic filters of an architecture's output layer ``O``."""
    return _filters(parse_architecture(architecture)[-1], default)
