"""A sequence tagger assembled from parts: ``Tagger(embedder, encoder, decoder)``."""
from __future__ import annotations

import torch
from torch import nn

from seqlab.data.batching import Batch, Encoded
from seqlab.modules.window import WindowEncoder
from seqlab.modules.window_fast import WindowTables, Workspace, type_inputs

#: The largest per-type input table (:meth:`Tagger.input_table`) decoding builds; a larger data set is decoded from
#: per-batch look-ups (2 ** 28 bytes: about 380,000 word types of a 175-wide input).
MAX_INPUT_TABLE_BYTES = 1 << 28


class Tagger(nn.Module):
    """Embedder → dropout → encoder → dropout → linear → decoder (CRF or softmax).

    The BiLSTM-CRF of Lample et al. (2016) and Ghaddar & Langlais (2018) §4, with
    dropout on the encoder's input and output: ``dropout`` is a rate (standard dropout)
    or a module such as :class:`seqlab.modules.dropout.LockedDropout`; ``output_dropout``,
    when given, replaces it on the encoder's output (0 gives Lample et al.'s input-only dropout).
    """

    def __init__(self, embedder: nn.Module, encoder: nn.Module, decoder: nn.Module, projection: nn.Module,
                 dropout: float | nn.Module = 0.5, output_dropout: float | nn.Module | None = None) -> None:
        super().__init__()
        if embedder.output_dim != encoder.input_dim:
            raise ValueError(
                f"embedder output_dim must match encoder input_dim, but got {embedder.output_dim} and {encoder.input_dim}"
            )
        self.embedder = embedder
        self.encoder = encoder
        self.decoder = decoder
        self.dropout = _as_module(dropout)
        self.output_dropout = self.dropout if output_dropout is None else _as_module(output_dropout)
        # the output layer O: linear, or e.g. a QuadraticLayer (Turian et al. 2009 §3), encoder states -> label scores
        self.projection = projection

    def emissions(self, batch: Batch) -> torch.Tensor:
        return self.encode(self.embedder(batch), batch.mask)  # shape: (B, T, K)

    def encode(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Label scores (B, T, K) from the embedder's token vectors (B, T, D): everything after the embedder."""
        tokens = self.dropout(tokens)  # shape: (B, T, D)
        encoded = self.output_dropout(self.encoder(tokens, mask))  # shape: (B, T, H_out)
        return self.projection(encoded)  # shape: (B, T, K)

    def loss(self, batch: Batch) -> torch.Tensor:
        """The decoder's loss on the batch's tags, or, for a batch with ``targets`` (a teacher's distributions),
        its soft loss on those."""
        if batch.targets is not None:
            return self.decoder.soft_loss(self.emissions(batch), batch.targets, batch.mask)
        if batch.tags is None:
            raise ValueError("a batch without tags has no loss")
        return self.decoder.loss(self.emissions(batch), batch.tags, batch.mask)

    def decode(self, batch: Batch) -> torch.Tensor:
        """Best label ids, shape (B, T); 0 at padding."""
        return self.decoder.decode(self.emissions(batch), batch.mask)

    @property
    def spells(self) -> bool:
        """Whether the tagger reads words' spelling (a character BiLSTM), whose vectors can be kept per type."""
        return self.embedder.chars is not None

    def spelling_table(self, data: Encoded, rows: torch.Tensor | None = None) -> torch.Tensor | None:
        """Spelling vectors of the word types of ``data`` (all, or those at ``rows``), computed once per type for
        decoding (shape: (n_types or len(rows), C_dim)); None for a tagger without a character BiLSTM."""
        chars = self.embedder.chars
        if chars is None:
            return None
        device = next(self.parameters()).device
        type_chars, lengths = data.type_chars, data.type_char_lengths
        if rows is not None:
            type_chars, lengths = type_chars[rows], lengths[rows]
        return chars.encode_types(type_chars.to(device), lengths.to(device))

    def input_table(self, data: Encoded, table: torch.Tensor | None) -> torch.Tensor | None:
        """The embedder's vector of every word type of ``data`` (shape: (n_types, D)), for decoding: a token's
        input is then one row copy, not look-ups, a spelling-vector gather and a concatenation per batch. ``table``:
        the types' spelling vectors. None where a token's vector is not a function of its type (a contextual
        embedder) or the table would pass :data:`MAX_INPUT_TABLE_BYTES`."""
        if getattr(self.embedder, "contextual", None) is not None:
            return None
        if data.type_char_lengths.shape[0] * self.embedder.output_dim * 4 > MAX_INPUT_TABLE_BYTES:
            return None
        return type_inputs(self.embedder, data, table, next(self.parameters()).device)

    def window_tables(self, data: Encoded, table: torch.Tensor | None, workspace: Workspace) -> WindowTables | None:
        """A windowed tagger's first window layer as per-type tables for decoding ``data`` (same scores,
        several times faster; :mod:`seqlab.modules.window_fast`); None for other encoders."""
        if not isinstance(self.encoder, WindowEncoder) or getattr(self.embedder, "contextual", None) is not None:
            return None  # contextual vectors are not a function of the word type
        return WindowTables(self, data, table, workspace=workspace)


def _as_module(dropout: float | nn.Module) -> nn.Module:
    return dropout if isinstance(dropout, nn.Module) else nn.Dropout(dropout)
