"""Output layers. Every decoder has ``loss``, ``soft_loss`` (against a distribution per token), ``decode``,
``marginals`` and ``log_likelihood`` over emission scores.

The CRF (:class:`seqlab.modules.crf.CRF`) and :class:`SoftmaxDecoder` are
interchangeable in a :class:`~seqlab.models.tagger.Tagger`.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from seqlab.modules.viterbi import penalty, viterbi


class SoftmaxDecoder(nn.Module):
    """Independent per-token classification: each label chosen by its own softmax."""

    def __init__(self, num_tags: int) -> None:
        super().__init__()
        self.num_tags = num_tags

    def loss(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Summed token cross-entropy per sentence, averaged over sentences (the CRF's scale)."""
        token_loss = F.cross_entropy(emissions.transpose(1, 2), tags, reduction="none")  # shape: (B, T)
        return (token_loss * mask).sum() / emissions.shape[0]

    def soft_loss(self, emissions: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Summed token cross-entropy against ``targets`` (B, T, K), a distribution over the labels per token (a
        teacher's marginals), per sentence, averaged over sentences, as :meth:`loss`."""
        cross = (targets * emissions.log_softmax(dim=-1)).sum(-1)  # shape: (B, T)
        return -torch.where(mask, cross, 0.0).sum() / emissions.shape[0]

    def decode(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return emissions.argmax(dim=-1).masked_fill(~mask, 0)  # shape: (B, T)

    def marginals(self, emissions: torch.Tensor, mask: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
        """Per-token softmax probabilities of ``emissions / temperature``, 0 beyond each sentence."""
        return (emissions / temperature).softmax(dim=-1) * mask.unsqueeze(-1)  # shape: (B, T, K)

    def log_likelihood(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor,
                       temperature: float = 1.0) -> torch.Tensor:
        """log p(tags | emissions) for each sentence, shape (B,): the sum of its tokens' log-softmax of
        ``emissions / temperature`` at their tags (the labels are independent given the emissions)."""
        log_probs = (emissions / temperature).log_softmax(dim=-1)  # shape: (B, T, K)
        chosen = log_probs.gather(-1, tags.long().masked_fill(~mask, 0).unsqueeze(-1)).squeeze(-1)  # shape: (B, T)
        return torch.where(mask, chosen, 0.0).sum(dim=1)


class PostViterbiDecoder(SoftmaxDecoder):
    """Trained as :class:`SoftmaxDecoder`; decodes by Viterbi over the per-token log-probabilities.

    The "post-Viterbi" decoding of Turian, Bergstra & Bengio (2009, section 5): the labels are
    still predicted independently, but the best sequence is chosen among those the tag scheme
    allows (``allowed_transitions``: no ``I-NP`` after ``O`` in IOB2). The constraints are
    non-persistent buffers, so a model's weights load with either decoder.
    """

    def __init__(self, num_tags: int, allowed: torch.Tensor, allowed_start: torch.Tensor,
                 allowed_end: torch.Tensor) -> None:
        super().__init__(num_tags)
        self.register_buffer("transition_mask", penalty("allowed", allowed, (num_tags, num_tags)), persistent=False)
        self.register_buffer("start_mask", penalty("allowed_start", allowed_start, (num_tags,)), persistent=False)
        self.register_buffer("end_mask", penalty("allowed_end", allowed_end, (num_tags,)), persistent=False)

    def decode(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            log_probs = emissions.detach().log_softmax(dim=-1)  # shape: (B, T, K)
            return viterbi(log_probs, self.transition_mask, self.start_mask, self.end_mask, mask)  # shape: (B, T)
