"""Batched inference: label sequences (and span confidences) for encoded sentences."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from seqlab.data.batching import Encoded, iterate
from seqlab.data.schemes import Span, spans
from seqlab.data.vocab import Vocab
from seqlab.models.tagger import Tagger
from seqlab.modules.window import WindowEncoder
from seqlab.modules.window_fast import WindowTables


@dataclass(frozen=True)
class Prediction:
    """One sentence's labels (in the model's scheme) and its spans with confidences."""

    labels: list[str]
    spans: list[tuple[str, int, int, float]]  # (type, start, end exclusive, confidence)


def predict(
    model: Tagger,
    data: Encoded,
    labels: Vocab,
    *,
    batch_size: int = 100,
    device: torch.device | None = None,
    confidences: bool = False,
    tables: bool = True,
) -> list[Prediction]:
    """Decode every sentence of ``data`` (sorted by length into batches), in the original order.

    A span's confidence is the smallest posterior marginal p(y_t = predicted label | x)
    over its tokens, from the CRF's forward-backward (or the softmax). A windowed tagger reads its
    window through per-type tables (:class:`seqlab.modules.window_fast.WindowTables`, same scores,
    several times faster); ``tables=False`` runs the plain forward pass instead.
    """
    if len(data) == 0:
        return []
    device = device or next(model.parameters()).device
    model.eval()
    out: list[Prediction | None] = [None] * len(data)
    itos = labels.itos
    with torch.inference_mode():
        chars = model.embedder.chars
        table = None  # spelling vectors computed once per word type, not once per token
        if chars is not None:
            table = chars.encode_types(data.type_chars.to(device), data.type_char_lengths.to(device))
        # windowed taggers: the first layer that reads the window as per-type tables (seqlab.modules.window_fast)
        fast = WindowTables(model, data, table) if tables and isinstance(model.encoder, WindowEncoder) else None
        for batch in iterate(data, batch_size, shuffle=False, char_table=table):
            batch = batch.to(device)
            emissions = fast.emissions(batch) if fast is not None else model.emissions(batch)  # shape: (B, T, K)
            best = model.decoder.decode(emissions, batch.mask)  # shape: (B, T)
            chosen = None
            if confidences:
                marginals = model.decoder.marginals(emissions, batch.mask)  # shape: (B, T, K)
                chosen = marginals.gather(-1, best.unsqueeze(-1)).squeeze(-1).cpu()  # shape: (B, T)
            rows = best.cpu().tolist()
            lengths = batch.mask.sum(1).cpu().tolist()
            for row, (index, length) in enumerate(zip(batch.indices.tolist(), lengths)):
                seq = [itos[i] for i in rows[row][:length]]
                found = spans(seq)
                scored = _confident(found, chosen[row] if chosen is not None else None)
                out[index] = Prediction(seq, scored)
    return out  # type: ignore[return-value]


def _confident(found: Sequence[Span], probs: torch.Tensor | None) -> list[tuple[str, int, int, float]]:
    if probs is None:
        return [(k, s, e, 1.0) for k, s, e in found]
    return [(k, s, e, float(probs[s:e].min())) for k, s, e in found]
