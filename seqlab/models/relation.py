"""A relation classifier assembled from parts: ``RelationClassifier(embedder, encoder, attention, head)``.

With a :class:`SelfAttentiveBiLSTM` encoder and an :class:`EntityAwareAttention` it is the model of
Lee, Seo & Choi (2019): word embeddings → multi-head self-attention → BiLSTM → entity-aware
attention (with latent entity typing) → softmax over the 19 directed labels. Dropout follows the
word embeddings, the BiLSTM and the entity-aware attention (§4).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import nn

from seqlab.modules.attention import EntityAwareAttention, MultiHeadSelfAttention
from seqlab.modules.rnn import BiLSTM

if TYPE_CHECKING:
    from seqlab.modules.transformer import TransformerEmbedder


@dataclass
class RelationBatch:
    """Padded, left-aligned word ids with entity spans; ``labels`` is None for unlabelled input."""

    words: torch.Tensor  # shape: (B, T)
    lengths: torch.Tensor  # shape: (B,)
    e1: torch.Tensor  # shape: (B, 2), inclusive token span
    e2: torch.Tensor  # shape: (B, 2)
    labels: torch.Tensor | None = None  # shape: (B,)
    tokens: list[tuple[str, ...]] | None = None  # the words, for a contextual (transformer) embedder

    @property
    def mask(self) -> torch.Tensor:
        positions = torch.arange(self.words.shape[1], device=self.words.device)
        return positions.unsqueeze(0) < self.lengths.unsqueeze(1)  # shape: (B, T)

    def to(self, device: torch.device | str) -> "RelationBatch":
        labels = None if self.labels is None else self.labels.to(device)
        return RelationBatch(self.words.to(device), self.lengths.to(device), self.e1.to(device), self.e2.to(device),
                             labels, self.tokens)


class WordEmbedder(nn.Module):
    """Word embeddings (initialised from pretrained vectors), concatenated with a transformer's contextual
    vectors when there is one, followed by dropout."""

    def __init__(self, words: nn.Embedding, dropout: float, contextual: "TransformerEmbedder | None" = None
                 ) -> None:
        super().__init__()
        self.words = words
        self.contextual = contextual
        self.dropout = nn.Dropout(dropout)
        self.output_dim = words.embedding_dim + (contextual.output_dim if contextual is not None else 0)

    def forward(self, batch: RelationBatch) -> torch.Tensor:
        x = self.words(batch.words)  # shape: (B, T, word_dim)
        if self.contextual is not None:
            if batch.tokens is None:
                raise ValueError("a contextual embedder needs the batch's tokens, but got none")
            context = self.contextual(batch.tokens, width=x.shape[1])  # shape: (B, T, transformer_dim)
            x = torch.cat([x, context], dim=-1)  # shape: (B, T, D)
        return self.dropout(x)  # shape: (B, T, D)


class SelfAttentiveBiLSTM(nn.Module):
    """Optional multi-head self-attention (§3.2), then a BiLSTM (§3.3) and dropout on its outputs."""

    def __init__(self, self_attention: MultiHeadSelfAttention | None, lstm: BiLSTM, dropout: float) -> None:
        super().__init__()
        if self_attention is not None and self_attention.output_dim != lstm.input_dim:
            raise ValueError(f"self-attention output_dim must match the BiLSTM input_dim, but got "
                             f"{self_attention.output_dim} and {lstm.input_dim}")
        self.self_attention = self_attention
        self.lstm = lstm
        self.dropout = nn.Dropout(dropout)
        self.input_dim = lstm.input_dim
        self.output_dim = lstm.output_dim

    def forward(self, x: torch.Tensor, batch: RelationBatch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        extras: dict[str, torch.Tensor] = {}
        if self.self_attention is not None:
            x, extras["self_attention"] = self.self_attention(x, batch.mask)  # shape: (B, T, D), (B, h, T, T)
        states, _ = self.lstm(x, batch.lengths)  # shape: (B, T, 2H)
        return self.dropout(states), extras


class SoftmaxHead(nn.Module):
    """Dropout on the sentence representation, then a linear layer to label scores."""

    def __init__(self, dim: int, labels: int, dropout: float) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.linear = nn.Linear(dim, labels)
        self.input_dim = dim

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.linear(self.dropout(z))  # shape: (B, C)


class RelationClassifier(nn.Module):
    """``embedder → encoder → attention → head``; cross-entropy over the directed labels."""

    def __init__(self, embedder: WordEmbedder, encoder: SelfAttentiveBiLSTM, attention: EntityAwareAttention,
                 head: SoftmaxHead, label_weights: torch.Tensor | None = None) -> None:
        super().__init__()
        for left, right, a, b in ((embedder, encoder, "embedder", "encoder"), (encoder, attention, "encoder", "attention"),
                                  (attention, head, "attention", "head")):
            if left.output_dim != right.input_dim:
                raise ValueError(f"{a} output_dim must match {b} input_dim, but got {left.output_dim} and {right.input_dim}")
        self.embedder = embedder
        self.encoder = encoder
        self.attention = attention
        self.head = head
        # the loss weight of each label (down-weighting a frequent "no relation"); not saved: the config rebuilds it
        self.register_buffer("label_weights", label_weights, persistent=False)

    def forward(self, batch: RelationBatch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Label scores (B, C) and the attention weights / entity features for inspection."""
        x = self.embedder(batch)  # shape: (B, T, D)
        states, extras = self.encoder(x, batch)  # shape: (B, T, 2H)
        z, more = self.attention(states, batch.mask, batch.e1, batch.e2)  # shape: (B, 2H)
        extras.update(more)
        return self.head(z), extras  # shape: (B, C)

    def loss(self, batch: RelationBatch) -> torch.Tensor:
        if batch.labels is None:
            raise ValueError("a batch without labels has no loss")
        return nn.functional.cross_entropy(self(batch)[0], batch.labels, weight=self.label_weights)

    def probabilities(self, batch: RelationBatch, temperature: float = 1.0) -> torch.Tensor:
        """Label probabilities (B, C), the scores divided by ``temperature`` first (calibration: the most
        probable label is the same at any temperature)."""
        return (self(batch)[0] / temperature).softmax(dim=-1)
