"""Output layers. Every decoder has ``loss``, ``decode`` and ``marginals`` over emission scores.

The CRF (:class:`seqlab.modules.crf.CRF`) and :class:`SoftmaxDecoder` are
interchangeable in a :class:`~seqlab.models.tagger.Tagger`.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class SoftmaxDecoder(nn.Module):
    """Independent per-token classification: each label chosen by its own softmax."""

    def __init__(self, num_tags: int) -> None:
        super().__init__()
        self.num_tags = num_tags

    def loss(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Summed token cross-entropy per sentence, averaged over sentences (the CRF's scale)."""
        token_loss = F.cross_entropy(emissions.transpose(1, 2), tags, reduction="none")  # shape: (B, T)
        return (token_loss * mask).sum() / emissions.shape[0]

    def decode(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return emissions.argmax(dim=-1).masked_fill(~mask, 0)  # shape: (B, T)

    def marginals(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return emissions.softmax(dim=-1) * mask.unsqueeze(-1)  # shape: (B, T, K)
