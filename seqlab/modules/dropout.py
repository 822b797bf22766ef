"""Locked ("variational") dropout: one mask per sequence, shared by all of its positions.

Gal & Ghahramani (2016) drop the same input and output units of an LSTM at every time step;
Merity et al. (2018) call this locked dropout, and flair's sequence taggers use it. Standard
dropout draws a fresh mask for every token; Reimers & Gurevych (2017) found the variational
form better for BiLSTM-CRF NER.
"""
from __future__ import annotations

import torch
from torch import nn


class LockedDropout(nn.Module):
    """Dropout of whole feature channels of a (B, T, D) tensor: the mask is drawn per sentence, not per token."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout rate must be in [0, 1), got {p}")
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        if x.dim() != 3:
            raise ValueError(f"expected a (batch, time, features) tensor, got shape {tuple(x.shape)}")
        keep = 1.0 - self.p
        mask = x.new_empty((x.shape[0], 1, x.shape[2])).bernoulli_(keep).div_(keep)  # shape: (B, 1, D)
        return x * mask

    def extra_repr(self) -> str:
        return f"p={self.p}"
