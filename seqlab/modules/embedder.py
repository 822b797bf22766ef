"""Token representations: word embedding ⊕ character BiLSTM ⊕ capitalization ⊕ fixed features.

As in Lample et al. (2016) §4 and Ghaddar & Langlais (2018) §4: pretrained word
embeddings fine-tuned in training, a character BiLSTM whose final forward and
backward states describe a word's spelling, a small capitalization embedding,
and a slot for fixed per-token vectors (LS, scaled C&W/HLBL, Brown prefixes)
that are inputs only and are never trained; and, optionally, a pretrained
transformer's contextual vectors (:mod:`seqlab.modules.transformer`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import torch
from torch import nn

from seqlab.data.batching import Batch
from seqlab.modules.rnn import BiLSTM

if TYPE_CHECKING:
    from seqlab.modules.transformer import TransformerEmbedder


class CharBiLSTM(nn.Module):
    """A word's spelling as the final states of a BiLSTM over its characters (Lample et al. 2016 §4.1)."""

    def __init__(self, num_chars: int, dim: int = 25, hidden: int = 50, dropout: float = 0.0) -> None:
        super().__init__()
        self.embedding = nn.Embedding(num_chars, dim, padding_idx=0)
        self.dropout = nn.Dropout(dropout)  # on the character embeddings (Ma & Hovy 2016 §3.1); off in eval
        self.lstm = BiLSTM(dim, hidden)
        self.output_dim = 2 * hidden

    def forward(self, chars: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        embedded = self.dropout(self.embedding(chars))  # shape: (U, C, dim)
        _, final = self.lstm(embedded, lengths)  # shape: (U, 2 * hidden)
        return final

    def encode_types(self, chars: torch.Tensor, lengths: torch.Tensor, chunk: int = 4096) -> torch.Tensor:
        """Spelling vectors for a whole table of word types (for decoding), run in groups of words of one
        length, at most ``chunk`` at a time: no cell is padding, so every group takes the fused unpacked
        LSTM kernels (oneDNN on the CPU), about twice as fast as length-sorted chunks with packing."""
        order = torch.argsort(lengths, stable=True)  # shape: (U,)
        sizes = torch.bincount(lengths[order]).tolist()  # how many words have each length
        out = torch.empty(chars.shape[0], self.output_dim, device=chars.device)  # shape: (U, output_dim)
        for width, group in enumerate(order.split(sizes)):
            for part in group.split(chunk) if len(group) else ():
                out[part] = self(chars[part, :width], lengths[part])  # shape: (part, output_dim)
        return out


class TokenEmbedder(nn.Module):
    """Concatenates the token representations a tagger is configured with."""

    def __init__(
        self,
        words: nn.Embedding | None,
        chars: CharBiLSTM | None = None,
        caps: nn.Embedding | None = None,
        feature_dim: int = 0,
        discrete: Sequence[nn.Embedding] = (),
        contextual: "TransformerEmbedder | None" = None,
    ) -> None:
        super().__init__()
        self.words = words
        self.chars = chars
        self.caps = caps
        self.feature_dim = feature_dim
        self.discrete = nn.ModuleList(discrete)
        self.contextual = contextual
        self.output_dim = (
            (words.embedding_dim if words is not None else 0)
            + (chars.output_dim if chars is not None else 0)
            + (caps.embedding_dim if caps is not None else 0)
            + feature_dim
            + sum(table.embedding_dim for table in self.discrete)
            + (contextual.output_dim if contextual is not None else 0)
        )
        if self.output_dim == 0:
            raise ValueError("a token embedder needs at least one input: word embeddings, chars, caps or features")

    def forward(self, batch: Batch) -> torch.Tensor:
        parts = [] if self.words is None else [self.words(batch.words)]  # shape: (B, T, word_dim)
        if batch.char_vectors is not None:
            parts.append(batch.char_vectors)  # shape: (B, T, char_dim), precomputed per word type
        elif self.chars is not None:
            per_type = self.chars(batch.chars, batch.char_lengths)  # shape: (U, char_dim)
            parts.append(per_type[batch.type_index])  # shape: (B, T, char_dim)
        if self.caps is not None:
            parts.append(self.caps(batch.caps))  # shape: (B, T, caps_dim)
        if self.feature_dim:
            if batch.features is None or batch.features.shape[-1] != self.feature_dim:
                got = None if batch.features is None else batch.features.shape[-1]
                raise ValueError(f"feature vectors must have dim {self.feature_dim}, but got {got}")
            parts.append(batch.features)  # shape: (B, T, feature_dim)
        if len(self.discrete):
            if batch.feature_ids is None or batch.feature_ids.shape[-1] != len(self.discrete):
                got = None if batch.feature_ids is None else batch.feature_ids.shape[-1]
                raise ValueError(f"discrete feature ids must have {len(self.discrete)} columns, but got {got}")
            for j, table in enumerate(self.discrete):
                parts.append(table(batch.feature_ids[..., j]))  # shape: (B, T, table_dim)
        if self.contextual is not None:
            if batch.tokens is None:
                raise ValueError("a contextual embedder needs the batch's tokens, but got none")
            parts.append(self.contextual(batch.tokens, width=batch.mask.shape[1]))  # shape: (B, T, transformer_dim)
        return torch.cat(parts, dim=-1)  # shape: (B, T, output_dim)
